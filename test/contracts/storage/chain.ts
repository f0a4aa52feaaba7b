/**
 * A pure storage-contract chain for tests: wallets with real keys, one transaction per block, and after every
 * transaction the accounting check — every SAS on the contract's balance belongs to a pool (stake, read,
 * write, challenge), every pool entry equals the sum of its blobber shares, and wallets plus pools change
 * only by what was minted (stake interests).
 */
import assert from "node:assert/strict";
import { applyBlockTransactions } from "../../../src/chain/execute.js";
import { ACCOUNT_PREFIX, decodeAccount, NODE_PREFIX, StateView } from "../../../src/chain/state.js";
import { transactionHash } from "../../../src/chain/transaction.js";
import { MapNodeDb, Trie } from "../../../src/chain/trie.js";
import type { Transaction } from "../../../src/chain/types.js";
import { contractAt } from "../../../src/contracts/index.js";
import {
  createStorageContract,
  STORAGE_ADDRESS,
  type StorageConfig,
  storageConfig,
} from "../../../src/contracts/storage/index.js";
import { ed25519 } from "../../../src/core/ed25519.js";
import { sha3 } from "../../../src/core/hash.js";
import { clientIdOf } from "../../../src/core/schemes.js";
import { type WriteMarker, writeMarkerHash } from "../../../src/storage/markers.js";
import { type ReadMarker, readMarkerHash } from "../../../src/storage/read-markers.js";

export const ZCN = 10_000_000_000n;
export const T0 = 1_700_000_000;
export const HOUR_NS = 3_600_000_000_000n;
export const GiB = 1n << 30n;
export const SA = STORAGE_ADDRESS;

export interface Wallet {
  id: string;
  publicKey: string;
  privateKey: string;
}

export function wallet(): Wallet {
  const k = ed25519.generateKeys();
  return { id: clientIdOf(k.publicKey), publicKey: k.publicKey, privateKey: k.privateKey };
}

let seq = 0;

/** The sum of every pool the contract keeps, and per-entry consistency. */
export function poolsTotal(v: StateView): bigint {
  let total = 0n;
  for (const [k, bytes] of v.trie.entries(`${NODE_PREFIX}${SA}:`)) {
    const key = k.slice(NODE_PREFIX.length);
    const node = v.getNode<Record<string, unknown>>(key) as Record<string, unknown>;
    const kind = key.slice(SA.length + 1).split(":")[0];
    void bytes;
    if (kind === "stakepool") {
      for (const dp of Object.values(node.pools as Record<string, { balance: number | bigint }>)) total += BigInt(dp.balance);
    } else if (kind === "readpool" || kind === "writepool") {
      for (const p of node.pools as { balance: number | bigint; blobbers: { balance: number | bigint }[] }[]) {
        const shares = p.blobbers.reduce((t, b) => t + BigInt(b.balance), 0n);
        assert.equal(BigInt(p.balance), shares, `pool entry balance equals its blobber shares (${key})`);
        assert.ok(BigInt(p.balance) >= 0n);
        total += BigInt(p.balance);
      }
    } else if (kind === "challengepool") {
      total += BigInt(node.balance as number);
    } else if (kind === "freestorageassigner") {
      total += BigInt(node.fund as number); // free storage the owner funded and no marker took yet
    }
  }
  return total;
}

/** Sum of every account except the contract's. */
export function walletsTotal(v: StateView): bigint {
  let t = 0n;
  for (const [k, bytes] of v.trie.entries(ACCOUNT_PREFIX)) if (k !== ACCOUNT_PREFIX + SA) t += decodeAccount(bytes).balance;
  return t;
}

export class Chain {
  readonly db = new MapNodeDb();
  root: string;
  round = 1;
  now = T0;
  seed = 42n;
  readonly sc;
  /** Total minted by the contract since the start (accounted explicitly). */
  minted = 0n;

  constructor(over: Partial<StorageConfig> = {}) {
    this.sc = createStorageContract(storageConfig(over));
    const t = Trie.at("", this.db);
    const c = t.commit();
    this.root = c.root;
  }

  view(): StateView {
    return new StateView(Trie.at(this.root, this.db));
  }

  /** Give a wallet tokens (genesis-style mint outside any transaction). */
  fund(w: Wallet, amount: bigint): void {
    const t = Trie.at(this.root, this.db);
    new StateView(t).mint(w.id, amount, "", 0);
    const c = t.commit();
    this.db.putAll(c.newNodes);
    this.root = c.root;
  }

  balance(id: string): bigint {
    return this.view().balance(id);
  }

  /** Run storage function `name` from `from`; returns `[status, output]` after checking the accounting. */
  call(from: Wallet, name: string, input: unknown = {}, value = 0n, at = this.now): [number, string] {
    const txn: Transaction = {
      hash: "",
      version: "1.0",
      client_id: from.id,
      public_key: from.publicKey,
      to_client_id: SA,
      chain_id: "c",
      transaction_data: JSON.stringify({ name, input, n: seq++ }, (_k, v) => (typeof v === "bigint" ? Number(v) : v)),
      transaction_value: value,
      signature: "",
      creation_date: at,
      transaction_fee: 0n,
      transaction_type: 1000,
    };
    const t = { ...txn, hash: transactionHash(txn) };
    const r = this.run(name, [t], at);
    const res = r.results[0];
    assert.ok(res);
    this.lastHash = t.hash;
    return [res.status, res.output];
  }

  /** Run the storage contract's block hooks too (challenge generation and closing). */
  hooks = false;

  /** An empty block at `at` (drives the block hooks); returns the hook failures. */
  tick(at = this.now): string[] {
    return this.run("block", [], at).hookFailures;
  }

  /** Execute one block and check the accounting. */
  private run(name: string, txns: Transaction[], at: number) {
    const before = this.view();
    const wBefore = walletsTotal(before);
    const pBefore = poolsTotal(before);
    const supplyBefore = before.totalSupply();
    const r = applyBlockTransactions(this.root, this.db, txns, {
      round: this.round++,
      minerId: sha3("miner"),
      seed: this.seed,
      prevHash: sha3(`block ${this.round}`),
      time: at,
      contracts: (a) => (a === SA ? this.sc : contractAt(a)),
      ...(this.hooks ? { hooks: [this.sc] } : {}),
    });
    this.db.putAll(r.newNodes);
    this.root = r.root;
    const after = this.view();
    const minted = after.totalSupply() - supplyBefore;
    this.minted += minted;
    const pAfter = poolsTotal(after);
    assert.equal(after.balance(SA), pAfter, `${name}: the contract's balance is exactly the sum of its pools`);
    assert.equal(
      walletsTotal(after) + pAfter,
      wBefore + pBefore + minted,
      `${name}: wallets + pools change only by the minted ${minted}`,
    );
    return r;
  }

  lastHash = "";

  /** `call` that must succeed; returns the parsed output. */
  ok(from: Wallet, name: string, input: unknown = {}, value = 0n, at = this.now): Record<string, unknown> {
    const [s, out] = this.call(from, name, input, value, at);
    assert.equal(s, 1, `${name} should succeed: ${out}`);
    try {
      return JSON.parse(out) as Record<string, unknown>;
    } catch {
      return { output: out };
    }
  }

  /** `call` that must fail with `code: ...` matching `re`; state unchanged. */
  refused(from: Wallet, name: string, input: unknown, value: bigint, re: RegExp, at = this.now): string {
    const root = this.root;
    const [s, out] = this.call(from, name, input, value, at);
    assert.equal(s, 3, `${name} should fail, got: ${out}`);
    assert.match(out, re);
    assert.equal(this.root, root, "a refusal changes nothing");
    return out;
  }

  // biome-ignore lint/suspicious/noExplicitAny: views are JSON the tests index freely
  rest(endpoint: string, params: Record<string, string> = {}, at = this.now): any {
    return this.sc.rest(this.view(), endpoint, params, at);
  }
}

/** Terms and settings of a test blobber (prices in ZCN per GB). */
export function blobberInput(
  url: string,
  o: { read?: bigint; write?: bigint; capacity?: bigint; delegate?: string; mld?: number } = {},
) {
  return {
    url,
    geolocation: { latitude: 0, longitude: 0 },
    terms: {
      read_price: o.read ?? ZCN / 100n,
      write_price: o.write ?? ZCN / 10n,
      min_lock_demand: o.mld ?? 0.1,
      max_offer_duration: 744n * HOUR_NS,
      challenge_completion_time: 120_000_000_000n,
    },
    capacity: o.capacity ?? 10n * GiB,
    stake_pool_settings: {
      delegate_wallet: o.delegate ?? "",
      min_stake: ZCN / 10n,
      max_stake: 100n * ZCN,
      num_delegates: 50,
      service_charge: 0.3,
    },
  };
}

/** Register `n` blobbers, each staked with `stake` by its delegate; returns blobber and delegate wallets. */
export function setupBlobbers(c: Chain, n: number, stake = ZCN, o: Parameters<typeof blobberInput>[1] = {}) {
  const out: { blobber: Wallet; delegate: Wallet }[] = [];
  for (let i = 0; i < n; i++) {
    const blobber = wallet();
    const delegate = wallet();
    c.fund(delegate, 10n * ZCN);
    c.ok(blobber, "add_blobber", blobberInput(`http://b${i}.test:${5051 + i}`, { delegate: delegate.id, ...o }));
    if (stake > 0n) c.ok(delegate, "stake_pool_lock", { blobber_id: blobber.id }, stake);
    out.push({ blobber, delegate });
  }
  return out;
}

/** A new-allocation input for `owner`. */
export function allocInput(owner: Wallet, o: Record<string, unknown> = {}, now = T0) {
  return {
    data_shards: 2,
    parity_shards: 2,
    size: 2n * GiB,
    expiration_date: now + 720 * 3600,
    owner_id: owner.id,
    owner_public_key: owner.publicKey,
    preferred_blobbers: [],
    read_price_range: { min: 0, max: Number.MAX_SAFE_INTEGER },
    write_price_range: { min: 0, max: Number.MAX_SAFE_INTEGER },
    max_challenge_completion_time: 3_600_000_000_000,
    diversify_blobbers: false,
    ...o,
  };
}

/** A write marker signed by `owner`. */
export function signedWriteMarker(
  owner: Wallet,
  wm: Omit<WriteMarker, "signature" | "client_id" | "size"> & { size: number | bigint },
): WriteMarker {
  const m = { ...wm, size: Number(wm.size), client_id: owner.id, signature: "" };
  m.signature = ed25519.sign(owner.privateKey, writeMarkerHash(m));
  return m;
}

/** A read marker signed by `reader` (the payer is the reader unless `payer_id` says otherwise). */
export function signedReadMarker(
  reader: Wallet,
  rm: Omit<ReadMarker, "signature" | "client_id" | "client_public_key" | "payer_id"> & { payer_id?: string },
): ReadMarker {
  const m = {
    ...rm,
    payer_id: rm.payer_id ?? reader.id,
    client_id: reader.id,
    client_public_key: reader.publicKey,
    signature: "",
  };
  m.signature = ed25519.sign(reader.privateKey, readMarkerHash(m));
  return m;
}
