/**
 * Isolated cost of a transaction signature check on this machine, one thread: ed25519, bls0chain one by one, and
 * bls0chain in randomized batches (`core/bls-batch.ts`) of 64 signatures under 64 keys (the intake of many
 * wallets) and under one key. Prints milliseconds per signature and the ratios to ed25519 that
 * `chain/sigcost.ts` uses. `node dist/bench/sigcost.js [rounds]` after `npm run build`.
 */
import { randomBytes } from "node:crypto";
import { type BlsBatchItem, blsVerifyBatch } from "../src/core/bls-batch.js";
import { sha3 } from "../src/core/hash.js";
import { getScheme, initCrypto } from "../src/core/schemes.js";

await initCrypto();
const rounds = Number(process.argv[2] ?? 5);
const ed = getScheme("ed25519");
const bls = getScheme("bls0chain");

function items(name: "ed25519" | "bls0chain", n: number, keys: number): BlsBatchItem[] {
  const s = getScheme(name);
  const ks = Array.from({ length: keys }, () => s.generateKeys());
  return Array.from({ length: n }, (_, i) => {
    const k = ks[i % keys] as { privateKey: string; publicKey: string };
    const hash = sha3(`${name} ${i} ${Math.random()}`);
    return { key: k.publicKey, hash, sig: s.sign(k.privateKey, hash) };
  });
}

function perItem(n: number, f: () => void): number {
  f(); // warm (keys parsed and cached as a node's are)
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) f();
  return (performance.now() - t0) / (rounds * n);
}

const edItems = items("ed25519", 256, 64);
const blsItems = items("bls0chain", 64, 64);
const blsOneKey = items("bls0chain", 64, 1);
const edMs = perItem(edItems.length, () => {
  for (const t of edItems) ed.verify(t.key, t.hash, t.sig);
});
const blsMs = perItem(blsItems.length, () => {
  for (const t of blsItems) bls.verify(t.key, t.hash, t.sig);
});
const batchMs = perItem(blsItems.length, () => blsVerifyBatch(blsItems, randomBytes));
const batchOneKeyMs = perItem(blsOneKey.length, () => blsVerifyBatch(blsOneKey, randomBytes));
const row = (name: string, ms: number): string =>
  `${name.padEnd(40)} ${ms.toFixed(3).padStart(8)} ms  ${(ms / edMs).toFixed(1).padStart(6)} × ed25519`;
console.log(row("ed25519 verify", edMs));
console.log(row("bls0chain verify, one by one", blsMs));
console.log(row("bls0chain batch of 64, 64 keys (per sig)", batchMs));
console.log(row("bls0chain batch of 64, one key (per sig)", batchOneKeyMs));
