/**
 * Merkle leaf hashes of downloaded blocks, computed on a worker thread so the download's main thread keeps
 * receiving and writing while the blocks of earlier replies are hashed (hashing is a third of a download's CPU).
 * Only blocks in shared memory (the reply pool's buffers) go to the worker, and only large ones; anything else,
 * or everything once the worker has failed, is hashed in place with the same function.
 */
import { Worker } from "node:worker_threads";
import { HASH_BYTES, leavesOf } from "../../../storage/merkle.js";

/** Smaller inputs are hashed in place (a message round trip costs more than hashing a few blocks). */
const MIN_WORKER_BYTES = 256 * 1024;

interface Job {
  bytes: Uint8Array;
  ok: (leaves: Uint8Array[]) => void;
}

export class LeafHasher {
  private worker: Worker | undefined;
  private broken = false;
  private nextId = 1;
  private readonly jobs = new Map<number, Job>();

  /** Leaf hashes of `bytes` cut into blocks (as `leavesOf`). */
  async leaves(bytes: Uint8Array): Promise<Uint8Array[]> {
    if (bytes.length < MIN_WORKER_BYTES || !(bytes.buffer instanceof SharedArrayBuffer)) return leavesOf(bytes);
    const w = this.start();
    if (!w) return leavesOf(bytes);
    const id = this.nextId++;
    return new Promise<Uint8Array[]>((ok) => {
      this.jobs.set(id, { bytes, ok });
      if (this.jobs.size === 1) w.ref(); // keep the process alive while hashing is pending
      w.postMessage({ id, buf: bytes.buffer, off: bytes.byteOffset, len: bytes.length });
    });
  }

  private start(): Worker | undefined {
    if (this.worker || this.broken) return this.worker;
    try {
      const w = new Worker(new URL("./hash-worker.js", import.meta.url));
      w.unref();
      w.on("message", (m: { id: number; out: Uint8Array }) => {
        const job = this.jobs.get(m.id);
        if (!job) return;
        this.jobs.delete(m.id);
        if (this.jobs.size === 0) w.unref();
        const leaves: Uint8Array[] = [];
        for (let off = 0; off < m.out.length; off += HASH_BYTES) leaves.push(m.out.subarray(off, off + HASH_BYTES));
        job.ok(leaves);
      });
      // a failed worker is not a failed download: what it held is hashed here, and so is everything after
      const fail = () => {
        this.broken = true;
        this.worker = undefined;
        for (const [id, job] of this.jobs) {
          this.jobs.delete(id);
          job.ok(leavesOf(job.bytes));
        }
      };
      w.on("error", fail);
      w.on("exit", fail);
      this.worker = w;
      return w;
    } catch {
      this.broken = true;
      return undefined;
    }
  }
}

/** The process's hasher (one worker, started on first use). */
export const leafHasher = new LeafHasher();
