/**
 * Randomized batch verification of `bls0chain` signatures over distinct messages (and keys).
 *
 * One signature check is e(σ, Q) = e(H(m), pk): two Miller loops and a final exponentiation (Q the generator of
 * G2, σ and H(m) in G1, pk in G2). A batch of n is checked at once as
 *
 *     e(−Σ rᵢσᵢ, Q) · Π_pk e(Σ_{i signed by pk} rᵢH(mᵢ), pk) = 1
 *
 * with one multi-Miller loop over the distinct keys plus one and a single final exponentiation, each rᵢ a fresh
 * random odd 64-bit scalar. When every signature verifies the product is 1; when one does not, the product is 1
 * only if the random rᵢ happen to cancel the errors, which a submitter who does not know them hits with
 * probability at most 2⁻⁶³ (the errors lie in the order-r subgroup of GT, r prime). A batch that fails is split in
 * halves and each half checked again, down to single checks (or at once one by one when many fail), so a forged
 * signature is refused and the good ones in its batch are still admitted. Verdicts equal {@link bls0chain}'s `verify`: malformed keys or signatures and
 * keys outside the order-r subgroup of G2 are checked one by one (refused there as there).
 *
 * bls-wasm 0.4.8's own `multiVerify` answers false for valid BN254 signatures in the non-ETH mode the chain uses,
 * so this calls the mcl functions of the WebAssembly module directly (`blsHashToSignature` for H(m),
 * `mclBnG1_mulVec`, `mclBn_millerLoopVec`, `mclBn_finalExp`, `mclBnGT_isOne`), on copies of the points in the
 * module's memory. The random source is injected: the node's I/O edge passes `crypto.randomBytes` (the rᵢ must be
 * unpredictable to whoever submits), an in-process twin a seeded one.
 */
import type * as B from "bls-wasm";
import { blsLib, blsParse, verifyingKey } from "./bls.js";
import { fromHex, isHex } from "./hex.js";

/** A signature to check: the verifying key, the signed hash and the signature, all hex (as `bls0chain.verify`). */
export interface BlsBatchItem {
  key: string;
  hash: string;
  sig: string;
}

/** `n` random bytes. */
export type RandomSource = (n: number) => Uint8Array;

/** A failed batch no larger than this is settled by single checks instead of being split again. */
const LEAF = 2;

/** The part of the Emscripten module this file calls (pointers are byte offsets into its memory). */
interface Wasm {
  HEAPU8: Uint8Array;
  HEAP32: Int32Array;
  _blsMalloc(size: number): number;
  _blsFree(pos: number): void;
  _blsHashToSignature(out: number, msg: number, size: number): number;
  _blsGetGeneratorOfPublicKey(out: number): void;
  _mclBnFr_setLittleEndian(out: number, buf: number, size: number): number;
  _mclBnG1_neg(out: number, p: number): void;
  _mclBnG1_mulVec(out: number, points: number, frs: number, n: number): void;
  _mclBn_millerLoopVec(out: number, g1s: number, g2s: number, n: number): void;
  _mclBn_finalExp(out: number, x: number): void;
  _mclBnGT_isOne(x: number): number;
}

/** The internal words of a bls-wasm point object (`a_`, copied into the module's memory by its own methods). */
function words(p: B.PublicKey | B.Signature): Uint32Array {
  return (p as unknown as { a_: Uint32Array }).a_;
}

interface Parsed {
  /** Index in the caller's items. */
  at: number;
  key: string;
  pk: B.PublicKey;
  sig: B.Signature;
  msg: Uint8Array;
}

/** Keys whose subgroup membership was checked (those outside are never batched). */
const orderChecked = new WeakMap<B.PublicKey, boolean>();

function inSubgroup(pk: B.PublicKey): boolean {
  let ok = orderChecked.get(pk);
  if (ok === undefined) {
    try {
      ok = Boolean(pk.isValidOrder()); // bls-wasm answers 1 or 0
    } catch {
      ok = false;
    }
    orderChecked.set(pk, ok);
  }
  return ok;
}

/** One signature checked alone (`bls0chain.verify` on parsed inputs). */
function single(p: Parsed): boolean {
  try {
    return p.pk.verify(p.sig, p.msg);
  } catch {
    return false;
  }
}

/**
 * Verify `items` together; one verdict per item, in order, equal to `bls0chain.verify` of each (false for malformed
 * input, never throws for it). `random` supplies the batch scalars. Call after `initCrypto()`.
 */
export function blsVerifyBatch(items: readonly BlsBatchItem[], random: RandomSource): boolean[] {
  const out = new Array<boolean>(items.length).fill(false);
  const batchable: Parsed[] = [];
  items.forEach((it, at) => {
    if (!isHex(it.hash) || it.hash.length === 0) return;
    const pk = verifyingKey(it.key);
    const sig = blsParse.signature(it.sig);
    if (!pk || !sig) return;
    const p: Parsed = { at, key: it.key, pk, sig, msg: fromHex(it.hash) };
    if (inSubgroup(pk)) batchable.push(p);
    else out[at] = single(p);
  });
  if (batchable.length <= LEAF) {
    for (const p of batchable) out[p.at] = single(p);
    return out;
  }
  const lib = blsLib();
  const w = (lib as unknown as { mod: Wasm }).mod;
  const g1 = words(batchable[0]?.sig as B.Signature).length * 4;
  const g2 = words(batchable[0]?.pk as B.PublicKey).length * 4;
  const fr = 32;
  const gt = (g1 / 3) * 12;
  const n = batchable.length;
  // H(mᵢ) of every item, hashed once for all the sub-batches a failure may need
  const hashes = w._blsMalloc(g1 * n);
  try {
    batchable.forEach((p, j) => {
      const m = w._blsMalloc(Math.max(1, p.msg.length));
      w.HEAPU8.set(p.msg, m);
      w._blsHashToSignature(hashes + g1 * j, m, p.msg.length);
      w._blsFree(m);
    });
    const holds = (idx: readonly number[]): boolean => {
      const k = idx.length;
      const groups = new Map<string, number[]>();
      for (const j of idx) {
        const key = (batchable[j] as Parsed).key;
        const g = groups.get(key);
        if (g) g.push(j);
        else groups.set(key, [j]);
      }
      const rs = w._blsMalloc(fr * k);
      const sigs = w._blsMalloc(g1 * k);
      const hs = w._blsMalloc(g1 * k);
      const g1s = w._blsMalloc(g1 * (groups.size + 1));
      const g2s = w._blsMalloc(g2 * (groups.size + 1));
      const rb = w._blsMalloc(8);
      const e = w._blsMalloc(gt);
      try {
        // items laid out key by key: each key's Σ rᵢH(mᵢ) is one multi-scalar multiplication over a contiguous run
        let q = 0;
        let gi = 1;
        for (const members of groups.values()) {
          const from = q;
          for (const j of members) {
            const r = Uint8Array.from(random(8).subarray(0, 8));
            r[0] = (r[0] as number) | 1;
            w.HEAPU8.set(r, rb);
            w._mclBnFr_setLittleEndian(rs + fr * q, rb, 8);
            w.HEAP32.set(words((batchable[j] as Parsed).sig), (sigs + g1 * q) / 4);
            w.HEAPU8.copyWithin(hs + g1 * q, hashes + g1 * j, hashes + g1 * (j + 1));
            q++;
          }
          w._mclBnG1_mulVec(g1s + g1 * gi, hs + g1 * from, rs + fr * from, members.length);
          w.HEAP32.set(words((batchable[members[0] as number] as Parsed).pk), (g2s + g2 * gi) / 4);
          gi++;
        }
        w._mclBnG1_mulVec(g1s, sigs, rs, k);
        w._mclBnG1_neg(g1s, g1s);
        w._blsGetGeneratorOfPublicKey(g2s);
        w._mclBn_millerLoopVec(e, g1s, g2s, groups.size + 1);
        w._mclBn_finalExp(e, e);
        return w._mclBnGT_isOne(e) === 1;
      } finally {
        for (const p of [e, rb, g2s, g1s, hs, sigs, rs]) w._blsFree(p);
      }
    };
    // splitting finds one bad signature in a few batch checks; many bad ones are cheaper one by one: once the failed
    // batches hold twice the items, the rest is checked singly (at most about twice the cost of single checks)
    let failedWork = 0;
    const settle = (idx: readonly number[]): void => {
      if (idx.length <= LEAF || failedWork > 2 * n) {
        for (const j of idx) out[(batchable[j] as Parsed).at] = single(batchable[j] as Parsed);
        return;
      }
      if (holds(idx)) {
        for (const j of idx) out[(batchable[j] as Parsed).at] = true;
        return;
      }
      failedWork += idx.length;
      const half = idx.length >> 1;
      settle(idx.slice(0, half));
      settle(idx.slice(half));
    };
    settle(batchable.map((_, j) => j));
  } finally {
    w._blsFree(hashes);
  }
  return out;
}
