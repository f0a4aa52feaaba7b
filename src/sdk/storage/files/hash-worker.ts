/**
 * Worker thread of {@link LeafHasher}: Merkle leaf hashes of blocks in shared memory (the download's reply
 * buffers), computed with the same `leavesOf` as everywhere else and sent back packed, 32 bytes per leaf.
 */
import { parentPort } from "node:worker_threads";
import { HASH_BYTES, leavesOf } from "../../../storage/merkle.js";

parentPort?.on("message", (m: { id: number; buf: SharedArrayBuffer; off: number; len: number }) => {
  const leaves = leavesOf(new Uint8Array(m.buf, m.off, m.len));
  const out = new Uint8Array(leaves.length * HASH_BYTES);
  leaves.forEach((l, i) => {
    out.set(l, i * HASH_BYTES);
  });
  parentPort?.postMessage({ id: m.id, out }, [out.buffer]);
});
