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

/** What a transfer needs of a pool: {@link BufferPool} and {@link AlignedPool} both serve. */
export type BytePool = Pick<BufferPool, "take" | "release" | "owns">;

/** Bytes of a page: the alignment {@link AlignedPool}'s buffers have (and direct I/O wants at most). */
export const PAGE_BYTES = 4096;

/** The part of the WebAssembly API used here (the compile target's lib has no DOM types). */
interface WasmMemoryApi {
  Memory: new (d: { initial: number; maximum: number }) => { readonly buffer: ArrayBuffer };
}

/** Requests smaller than this get plain buffers from an {@link AlignedPool} (its memory is made for large ones). */
export const ALIGNED_MIN = 256 * 1024;

/** The memories {@link AlignedPool}s carve their buffers from. */
const slabs = new WeakSet<ArrayBufferLike>();

/**
 * Whether `view` starts at a page-aligned address: a view of an {@link AlignedPool}'s memory at a multiple of
 * {@link PAGE_BYTES} from its start. Direct I/O reads and writes such a view in place (`sdk/direct-io.ts`), with no
 * copy through a staging buffer.
 */
export function isPageAligned(view: Uint8Array): boolean {
  return slabs.has(view.buffer) && view.byteOffset % PAGE_BYTES === 0;
}

/**
 * Buffers at page-aligned addresses, lent and given back like {@link BufferPool}'s: `slots` buffers of `slotBytes`
 * each, carved from one WebAssembly memory (V8 maps a WebAssembly memory's base on a page of its own, where an
 * `ArrayBuffer`'s address is whatever `malloc` gives). The memory is reserved once and touched only as slots are
 * used; a slot given back is the next one lent. A request larger than a slot or smaller than {@link ALIGNED_MIN},
 * or made while every slot is lent, gets a plain buffer (not aligned: direct I/O then copies it through a staging
 * buffer). A process holds about a hundred WebAssembly memories at most: make pools for large transfers only.
 */
export class AlignedPool {
  private memory: Uint8Array | undefined;
  private readonly free: number[] = [];
  private readonly lent = new Set<number>();
  private made = 0;
  private readonly slotBytes: number;

  constructor(
    private readonly slots: number,
    slotBytes: number,
  ) {
    this.slotBytes = Math.ceil(Math.max(1, slotBytes) / PAGE_BYTES) * PAGE_BYTES;
  }

  /** A view of exactly `n` bytes at the start of a free slot (page-aligned), or of a plain buffer. Not cleared. */
  take(n: number): Uint8Array {
    const memory = n >= ALIGNED_MIN && n <= this.slotBytes ? this.slab() : undefined;
    if (!memory || memory.length === 0) return new Uint8Array(n);
    let slot = this.free.pop();
    if (slot === undefined && this.made < this.slots) slot = this.made++;
    if (slot === undefined) return new Uint8Array(n);
    this.lent.add(slot);
    return memory.subarray(slot * this.slotBytes, slot * this.slotBytes + n);
  }

  /** Whether `view` is (part of) a slot lent and not yet given back. */
  owns(view: Uint8Array): boolean {
    return view.buffer === this.memory?.buffer && this.lent.has(Math.floor(view.byteOffset / this.slotBytes));
  }

  /** Give back the slots behind these views (views of other memory, and second give-backs, are ignored). */
  release(...views: (Uint8Array | undefined)[]): void {
    for (const v of views) {
      if (!v || v.buffer !== this.memory?.buffer) continue;
      const slot = Math.floor(v.byteOffset / this.slotBytes);
      if (this.lent.delete(slot)) this.free.push(slot);
    }
  }

  private slab(): Uint8Array | undefined {
    if (this.memory) return this.memory;
    try {
      const pages = Math.ceil((this.slots * this.slotBytes) / 65536);
      const wasm = (globalThis as unknown as { WebAssembly?: WasmMemoryApi }).WebAssembly;
      if (!wasm) throw new Error("no WebAssembly");
      const m = new wasm.Memory({ initial: pages, maximum: pages });
      slabs.add(m.buffer);
      this.memory = new Uint8Array(m.buffer);
    } catch {
      // no memory of that size to be had (address space): plain buffers, each allocated as asked
      this.memory = new Uint8Array(0);
    }
    return this.memory;
  }
}
