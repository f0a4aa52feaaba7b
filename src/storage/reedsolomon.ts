/**
 * Reed–Solomon erasure coding over GF(2^8), byte-compatible with klauspost/reedsolomon (the library the reference
 * client uses) and Backblaze JavaReedSolomon: field polynomial x^8+x^4+x^3+x^2+1 (0x11d), generator 2, and the
 * systematic encoding matrix built from a (data+parity)×data Vandermonde matrix `V[r][c] = r^c` multiplied by the
 * inverse of its top data×data square. Parity shard `p` is `Σ_j M[data+p][j]·shard_j`, bytewise, so any byte range
 * of the shards can be encoded or reconstructed on its own.
 *
 * Pure: no I/O. Multiplication goes through a 64 KiB product table (one row per coefficient) so the inner loop is a
 * table lookup and an xor.
 */

import { CodedError } from "../core/errors.js";
import type { StorageErrorCode } from "./errors.js";

const EXP = new Uint8Array(510);
const LOG = new Uint8Array(256);
{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    EXP[i] = x;
    LOG[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= 0x11d;
  }
  for (let i = 255; i < 510; i++) EXP[i] = EXP[i - 255] as number;
}

/** `MUL[a*256 + b] = a·b` in GF(2^8). */
const MUL = new Uint8Array(65536);
for (let a = 1; a < 256; a++)
  for (let b = 1; b < 256; b++) MUL[a * 256 + b] = EXP[(LOG[a] as number) + (LOG[b] as number)] as number;

/** a·b in GF(2^8). */
export function galMul(a: number, b: number): number {
  return MUL[(a & 0xff) * 256 + (b & 0xff)] as number;
}

/** a/b in GF(2^8). @throws CodedError `rs_divide_by_zero` */
export function galDiv(a: number, b: number): number {
  if (b === 0)
    throw new CodedError<StorageErrorCode>({ code: "rs_divide_by_zero", op: "reed-solomon" }, "division by zero in GF(2^8)");
  if (a === 0) return 0;
  return EXP[((LOG[a] as number) - (LOG[b] as number) + 255) % 255] as number;
}

/** a^n in GF(2^8) with 0^0 = 1, as klauspost's galExp. */
export function galExp(a: number, n: number): number {
  if (n === 0) return 1;
  if (a === 0) return 0;
  return EXP[((LOG[a] as number) * n) % 255] as number;
}

type Matrix = Uint8Array<ArrayBufferLike>[];

function multiply(a: Matrix, b: Matrix): Matrix {
  const cols = (b[0] as Uint8Array).length;
  const inner = b.length;
  return a.map((row) => {
    const out = new Uint8Array(cols);
    for (let c = 0; c < cols; c++) {
      let v = 0;
      for (let k = 0; k < inner; k++) v ^= galMul(row[k] as number, (b[k] as Uint8Array)[c] as number);
      out[c] = v;
    }
    return out;
  });
}

/** Inverse of a square matrix by Gauss–Jordan elimination. @throws CodedError `rs_singular_matrix` */
function invert(m: Matrix): Matrix {
  const n = m.length;
  const work: Matrix = m.map((row, i) => {
    const r = new Uint8Array(2 * n);
    r.set(row);
    r[n + i] = 1;
    return r;
  });
  for (let col = 0; col < n; col++) {
    let pivot = col;
    while (pivot < n && (work[pivot] as Uint8Array)[col] === 0) pivot++;
    if (pivot === n)
      throw new CodedError<StorageErrorCode>({ code: "rs_singular_matrix", op: "reed-solomon" }, "matrix is singular");
    if (pivot !== col) {
      const t = work[col] as Uint8Array;
      work[col] = work[pivot] as Uint8Array;
      work[pivot] = t;
    }
    const prow = work[col] as Uint8Array;
    const inv = galDiv(1, prow[col] as number);
    for (let c = 0; c < 2 * n; c++) prow[c] = galMul(prow[c] as number, inv);
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const row = work[r] as Uint8Array;
      const f = row[col] as number;
      if (f === 0) continue;
      for (let c = 0; c < 2 * n; c++) row[c] = (row[c] as number) ^ galMul(f, prow[c] as number);
    }
  }
  return work.map((r) => r.slice(n));
}

/** Largest total shard count (GF(2^8) Vandermonde limit). */
export const MAX_TOTAL_SHARDS = 256;

/** An encoder for `dataShards` + `parityShards`. */
export class ReedSolomon implements ErasureCoder {
  readonly dataShards: number;
  readonly parityShards: number;
  readonly totalShards: number;
  /** The systematic (data+parity)×data encoding matrix. */
  readonly matrix: Matrix;
  private readonly inverses = new Map<string, Matrix>();

  /** @throws CodedError `rs_invalid_shards` */
  constructor(dataShards: number, parityShards: number) {
    if (
      !Number.isInteger(dataShards) ||
      !Number.isInteger(parityShards) ||
      dataShards < 1 ||
      parityShards < 0 ||
      dataShards + parityShards > MAX_TOTAL_SHARDS
    ) {
      throw new CodedError<StorageErrorCode>(
        { code: "rs_invalid_shards", op: "reed-solomon" },
        `need data ≥ 1, parity ≥ 0 and data+parity ≤ ${MAX_TOTAL_SHARDS}, found data ${dataShards} parity ${parityShards}`,
      );
    }
    this.dataShards = dataShards;
    this.parityShards = parityShards;
    this.totalShards = dataShards + parityShards;
    const vm: Matrix = [];
    for (let r = 0; r < this.totalShards; r++) {
      const row = new Uint8Array(dataShards);
      for (let c = 0; c < dataShards; c++) row[c] = galExp(r, c);
      vm.push(row);
    }
    this.matrix = multiply(vm, invert(vm.slice(0, dataShards)));
  }

  /**
   * Compute the parity shards from the data shards, all of one length. Returns the `parityShards` new buffers
   * (or writes into `out` when given).
   * @throws CodedError `rs_shard_size` when lengths differ, `rs_invalid_shards` on a wrong count
   */
  encode(data: Uint8Array[], out?: Uint8Array[]): Uint8Array[] {
    if (data.length !== this.dataShards)
      throw new CodedError<StorageErrorCode>(
        { code: "rs_invalid_shards", op: "reed-solomon encode" },
        `expected ${this.dataShards} data shards, found ${data.length}`,
      );
    const len = sameLength(data, "reed-solomon encode");
    const parity = out ?? [];
    for (let p = 0; p < this.parityShards; p++) {
      let o = parity[p];
      if (!o) {
        o = new Uint8Array(len);
        parity[p] = o;
      } else if (o.length !== len) {
        throw new CodedError<StorageErrorCode>(
          { code: "rs_shard_size", op: "reed-solomon encode" },
          `parity buffer ${p} has ${o.length} bytes, shards have ${len}`,
        );
      } else o.fill(0);
    }
    this.mulRows(this.matrix.slice(this.dataShards), data, parity, len);
    return parity;
  }

  /**
   * Fill in the missing shards (`undefined` entries) from any `dataShards` present ones, all of one length.
   * Returns the complete shard list (present entries are the same objects); with `dataOnly` the missing parity
   * shards are left out (a reader needs only the data).
   * @throws CodedError `rs_too_few_shards` when fewer than `dataShards` are present
   */
  reconstruct(shards: (Uint8Array | undefined)[], dataOnly = false): Uint8Array[] {
    if (shards.length !== this.totalShards)
      throw new CodedError<StorageErrorCode>(
        { code: "rs_invalid_shards", op: "reed-solomon reconstruct" },
        `expected ${this.totalShards} shard slots, found ${shards.length}`,
      );
    const present: number[] = [];
    for (let i = 0; i < shards.length; i++) if (shards[i]) present.push(i);
    if (present.length < this.dataShards)
      throw new CodedError<StorageErrorCode>(
        { code: "rs_too_few_shards", op: "reed-solomon reconstruct" },
        `${present.length} of ${this.totalShards} shards present, at least ${this.dataShards} needed`,
      );
    const len = sameLength(
      present.map((i) => shards[i] as Uint8Array),
      "reed-solomon reconstruct",
    );
    const out = shards.slice() as Uint8Array[];
    let dataMissing = false;
    for (let i = 0; i < this.dataShards; i++) if (!shards[i]) dataMissing = true;
    if (dataMissing) {
      const use = present.slice(0, this.dataShards);
      const key = use.join(",");
      let inv = this.inverses.get(key);
      if (!inv) {
        inv = invert(use.map((i) => this.matrix[i] as Uint8Array));
        this.inverses.set(key, inv);
      }
      const inputs = use.map((i) => shards[i] as Uint8Array);
      const rows: Uint8Array[] = [];
      const outs: Uint8Array[] = [];
      for (let d = 0; d < this.dataShards; d++) {
        if (shards[d]) continue;
        const o = new Uint8Array(len);
        rows.push(inv[d] as Uint8Array);
        outs.push(o);
        out[d] = o;
      }
      this.mulRows(rows, inputs, outs, len);
    }
    if (dataOnly) return out;
    const data = out.slice(0, this.dataShards);
    const rows: Uint8Array[] = [];
    const outs: Uint8Array[] = [];
    for (let p = 0; p < this.parityShards; p++) {
      const idx = this.dataShards + p;
      if (shards[idx]) continue;
      const o = new Uint8Array(len);
      rows.push(this.matrix[idx] as Uint8Array);
      outs.push(o);
      out[idx] = o;
    }
    this.mulRows(rows, data, outs, len);
    return out;
  }

  /**
   * `outs[r] ^= Σ_j rows[r][j]·inputs[j]` over the first `len` bytes (the outputs start zeroed). The one place
   * the field arithmetic runs: a subclass may do it faster with the same results.
   */
  protected mulRows(rows: Uint8Array[], inputs: Uint8Array[], outs: Uint8Array[], len: number): void {
    for (let r = 0; r < rows.length; r++) mulAddRows(rows[r] as Uint8Array, inputs, outs[r] as Uint8Array, len);
  }

  /** Whether the parity shards match the data shards. */
  verify(shards: Uint8Array[]): boolean {
    const parity = this.encode(shards.slice(0, this.dataShards));
    for (let p = 0; p < this.parityShards; p++) {
      const a = parity[p] as Uint8Array;
      const b = shards[this.dataShards + p] as Uint8Array;
      if (!b || a.length !== b.length) return false;
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    }
    return true;
  }
}

function sameLength(shards: Uint8Array[], op: string): number {
  const len = (shards[0] as Uint8Array).length;
  for (const s of shards)
    if (!(s instanceof Uint8Array) || s.length !== len)
      throw new CodedError<StorageErrorCode>(
        { code: "rs_shard_size", op },
        `shards must all have ${len} bytes, found one of ${s?.length}`,
      );
  return len;
}

/** `c·x` for every 16-bit x (two bytes at once), built on first use per coefficient (128 KiB each). */
const MUL16 = new Map<number, Uint16Array>();
function mul16(c: number): Uint16Array {
  let t = MUL16.get(c);
  if (t) return t;
  t = new Uint16Array(65536);
  const row = MUL.subarray(c * 256, c * 256 + 256);
  for (let x = 0; x < 65536; x++) t[x] = (row[x & 255] as number) | ((row[x >>> 8] as number) << 8);
  MUL16.set(c, t);
  return t;
}

const aligned = (b: Uint8Array) => b.byteOffset % 4 === 0;

/** out ^= Σ coef[j]·inputs[j]; four bytes per step through 32-bit words where the buffers are aligned. */
function mulAddRows(coefs: Uint8Array, inputs: Uint8Array[], out: Uint8Array, len: number): void {
  // two inputs (the 2+p layouts): one pass, two bytes per table lookup
  if (inputs.length === 2 && len >= 16 && aligned(out) && aligned(inputs[0] as Uint8Array) && aligned(inputs[1] as Uint8Array)) {
    const words = len >> 2;
    const a = new Uint32Array((inputs[0] as Uint8Array).buffer, (inputs[0] as Uint8Array).byteOffset, words);
    const b = new Uint32Array((inputs[1] as Uint8Array).buffer, (inputs[1] as Uint8Array).byteOffset, words);
    const o32 = new Uint32Array(out.buffer, out.byteOffset, words);
    const ta = mul16(coefs[0] as number);
    const tb = mul16(coefs[1] as number);
    for (let w = 0; w < words; w++) {
      const u = a[w] as number;
      const v = b[w] as number;
      o32[w] =
        (o32[w] as number) ^
        (((ta[u & 0xffff] as number) ^ (tb[v & 0xffff] as number)) |
          (((ta[u >>> 16] as number) ^ (tb[v >>> 16] as number)) << 16));
    }
    const r0 = MUL.subarray((coefs[0] as number) * 256, (coefs[0] as number) * 256 + 256);
    const r1 = MUL.subarray((coefs[1] as number) * 256, (coefs[1] as number) * 256 + 256);
    const i0 = inputs[0] as Uint8Array;
    const i1 = inputs[1] as Uint8Array;
    for (let k = words << 2; k < len; k++)
      out[k] = (out[k] as number) ^ (r0[i0[k] as number] as number) ^ (r1[i1[k] as number] as number);
    return;
  }
  for (let j = 0; j < inputs.length; j++) {
    const c = coefs[j] as number;
    if (c === 0) continue;
    const input = inputs[j] as Uint8Array;
    const row = MUL.subarray(c * 256, c * 256 + 256);
    let k = 0;
    if (input.byteOffset % 4 === 0 && out.byteOffset % 4 === 0 && len >= 16) {
      const words = len >> 2;
      const in32 = new Uint32Array(input.buffer, input.byteOffset, words);
      const o32 = new Uint32Array(out.buffer, out.byteOffset, words);
      if (c === 1) for (let w = 0; w < words; w++) o32[w] = (o32[w] as number) ^ (in32[w] as number);
      else
        for (let w = 0; w < words; w++) {
          const v = in32[w] as number;
          o32[w] =
            (o32[w] as number) ^
            ((row[v & 255] as number) |
              ((row[(v >>> 8) & 255] as number) << 8) |
              ((row[(v >>> 16) & 255] as number) << 16) |
              ((row[v >>> 24] as number) << 24));
        }
      k = words << 2;
    }
    for (; k < len; k++) out[k] = (out[k] as number) ^ (row[input[k] as number] as number);
  }
}

/** What encodes and rebuilds shards (this module's TypeScript coder, or a faster one with the same results). */
export interface ErasureCoder {
  readonly dataShards: number;
  readonly parityShards: number;
  /** The parity shards of `data`, written into `out` when given (buffers of the shards' length). */
  encode(data: Uint8Array[], out?: Uint8Array[]): Uint8Array[];
  /** Missing shards rebuilt; with `dataOnly` only the data shards are guaranteed present. */
  reconstruct(shards: (Uint8Array | undefined)[], dataOnly?: boolean): Uint8Array[];
}
