/**
 * The same Reed–Solomon as `reedsolomon.ts`, with the field arithmetic in a WebAssembly SIMD kernel: a byte times a
 * constant in GF(2^8) is `lo[x & 15] ^ hi[x >> 4]`, two 16-entry tables per constant, and `i8x16.swizzle` looks up
 * 16 bytes at once (the split-nibble method of ISA-L and klauspost/reedsolomon's SSSE3 path). The module is a
 * few hundred bytes, assembled below from its opcodes (no toolchain, no dependency), and compiled synchronously;
 * where WebAssembly SIMD is missing {@link simdAvailable} is false and callers keep the TypeScript coder.
 *
 * Memory layout: 256 × 32 bytes of nibble tables from 0, then the inputs and outputs of one call, copied in and
 * out (a copy is far cheaper than the multiply it feeds).
 *
 * Pure: no I/O (compiling a module is computation).
 */
import { galMul, ReedSolomon } from "./reedsolomon.js";

const TABLES = 256 * 32;
const PAGE = 65536;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

const I32 = 0x7f;
const V128 = 0x7b;
const SIMD = 0xfd;
const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const load = (offset = 0) => [SIMD, 0x00, 0x00, ...uleb(offset)];
const store = [SIMD, 0x0b, 0x00, 0x00];
const i32const = (v: number) => [0x41, v];
const I32_ADD = 0x6a;
const I32_GE_U = 0x4f;
const SWIZZLE = [SIMD, 0x0e];
const SPLAT8 = [SIMD, 0x0f];
const AND = [SIMD, 0x4e];
const XOR = [SIMD, 0x51];
const SHR_U8 = [SIMD, 0x6d];

/**
 * `mul_add(tab, src, dst, len)`: `dst[i] ^= c·src[i]` for i < len (a multiple of 16), with the constant's nibble
 * tables at `tab` (low nibble products, then high nibble products).
 * Locals: 0 tab, 1 src, 2 dst, 3 len; 4 lo, 5 hi, 6 mask (v128); 7 i (i32); 8 v (v128).
 */
function moduleBytes(): Uint8Array {
  const body = [
    ...[3, 3, V128, 1, I32, 1, V128],
    ...get(0),
    ...load(0),
    ...set(4),
    ...get(0),
    ...load(16),
    ...set(5),
    ...i32const(15),
    ...SPLAT8,
    ...set(6),
    ...i32const(0),
    ...set(7),
    0x02,
    0x40, // block
    0x03,
    0x40, // loop
    ...get(7),
    ...get(3),
    I32_GE_U,
    0x0d,
    0x01, // br_if out of the block
    ...get(1),
    ...get(7),
    I32_ADD,
    ...load(0),
    ...set(8),
    ...get(2),
    ...get(7),
    I32_ADD, // store address
    ...get(2),
    ...get(7),
    I32_ADD,
    ...load(0), // dst
    ...get(4),
    ...get(8),
    ...get(6),
    ...AND,
    ...SWIZZLE, // lo[v & 15]
    ...get(5),
    ...get(8),
    ...i32const(4),
    ...SHR_U8,
    ...SWIZZLE, // hi[v >> 4]
    ...XOR,
    ...XOR,
    ...store,
    ...get(7),
    ...i32const(16),
    I32_ADD,
    ...set(7),
    0x0c,
    0x00, // br to the loop
    0x0b, // end loop
    0x0b, // end block
    0x0b, // end function
  ];
  const name = (s: string) => [s.length, ...Buffer.from(s, "utf8")];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 4, I32, I32, I32, I32, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0x00, 1]),
    ...section(7, [2, ...name("mul_add"), 0x00, 0, ...name("mem"), 0x02, 0]),
    ...section(10, [1, ...uleb(body.length), ...body]),
  ]);
}

/** The part of the WebAssembly API used here (the compile target's lib has no DOM types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

interface Kernel {
  mulAdd: (tab: number, src: number, dst: number, len: number) => void;
  memory: WasmMemory;
}

let kernel: Kernel | null | undefined;

function loadKernel(): Kernel | null {
  if (kernel !== undefined) return kernel;
  try {
    const bytes = moduleBytes();
    const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
    if (!wasm) throw new Error("no WebAssembly");
    const instance = new wasm.Instance(new wasm.Module(bytes), {});
    const memory = instance.exports.mem as WasmMemory;
    const tables = new Uint8Array(memory.buffer, 0, TABLES);
    for (let c = 0; c < 256; c++)
      for (let x = 0; x < 16; x++) {
        tables[c * 32 + x] = galMul(c, x);
        tables[c * 32 + 16 + x] = galMul(c, x << 4);
      }
    kernel = { mulAdd: instance.exports.mul_add as Kernel["mulAdd"], memory };
  } catch {
    kernel = null;
  }
  return kernel;
}

/** Whether this runtime runs the WebAssembly SIMD kernel. */
export function simdAvailable(): boolean {
  return loadKernel() !== null;
}

/** {@link ReedSolomon} with its multiplications in the WebAssembly SIMD kernel (identical output). */
export class SimdReedSolomon extends ReedSolomon {
  protected override mulRows(rows: Uint8Array[], inputs: Uint8Array[], outs: Uint8Array[], len: number): void {
    const k = loadKernel();
    if (!k || len < 64) {
      super.mulRows(rows, inputs, outs, len);
      return;
    }
    const padded = (len + 15) & ~15;
    const need = TABLES + padded * (inputs.length + outs.length);
    if (k.memory.buffer.byteLength < need) k.memory.grow(Math.ceil((need - k.memory.buffer.byteLength) / PAGE));
    const mem = new Uint8Array(k.memory.buffer);
    const inAt = (j: number) => TABLES + j * padded;
    const outAt = (r: number) => TABLES + (inputs.length + r) * padded;
    for (let j = 0; j < inputs.length; j++) mem.set((inputs[j] as Uint8Array).subarray(0, len), inAt(j));
    for (let r = 0; r < outs.length; r++) mem.set((outs[r] as Uint8Array).subarray(0, len), outAt(r));
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r] as Uint8Array;
      for (let j = 0; j < inputs.length; j++) {
        const c = row[j] as number;
        if (c !== 0) k.mulAdd(c * 32, inAt(j), outAt(r), padded);
      }
    }
    for (let r = 0; r < outs.length; r++) (outs[r] as Uint8Array).set(mem.subarray(outAt(r), outAt(r) + len));
  }
}
