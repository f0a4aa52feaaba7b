/**
 * Large byte buffers lent and given back, so a transfer that moves gigabytes reuses a handful of buffers instead
 * of allocating one per request (large allocations are what drives the collector and, on a VM, the kernel's
 * first touch of new pages). Used by the client's upload chunks and download replies and by the blobber's
 * download replies.
 *
 * Only buffers it lent are taken back, each once: a buffer lent twice at once would mix two requests' bytes. A
 * buffer never given back is simply collected.
 */
export class BufferPool {
  private readonly free: Uint8Array[] = [];
  private readonly lent = new WeakSet<ArrayBufferLike>();
  private readonly keep: number;
  private readonly minBytes: number;

  /**
   * @param keep most idle buffers kept
   * @param minBytes smallest buffer allocated (so buffers fit requests of varying size); sizes round up to 64 KiB
   */
  constructor(keep: number, minBytes = 0) {
    this.keep = keep;
    this.minBytes = minBytes;
  }

  /** A view of exactly `n` bytes of a lent buffer (a reused one when one is large enough). Its bytes are not cleared. */
  take(n: number): Uint8Array {
    const i = this.free.findIndex((b) => b.byteLength >= n);
    const b =
      i >= 0
        ? (this.free.splice(i, 1)[0] as Uint8Array)
        : new Uint8Array(Math.ceil(Math.max(n, this.minBytes, 1) / 65536) * 65536);
    this.lent.add(b.buffer);
    return b.subarray(0, n);
  }

  /** Whether `view` is (part of) a buffer lent and not yet given back. */
  owns(view: Uint8Array): boolean {
    return this.lent.has(view.buffer);
  }

  /** Give back the buffers behind these views (views of other memory, and second give-backs, are ignored). */
  release(...views: (Uint8Array | undefined)[]): void {
    for (const v of views) {
      if (!v || !this.lent.has(v.buffer)) continue;
      this.lent.delete(v.buffer);
      if (this.free.length < this.keep) this.free.push(new Uint8Array(v.buffer));
    }
  }
}
