/**
 * The erasure coder the client uses: Reed–Solomon of `storage/reedsolomon.ts` with its field arithmetic in the
 * WebAssembly SIMD kernel of `storage/reedsolomon-simd.ts` (same bytes, checked against the committed vectors),
 * or in TypeScript where the runtime lacks WebAssembly SIMD. (@digitaldefiance/reed-solomon-erasure.wasm 1.0.2 was
 * measured in this code path earlier: no faster than the TypeScript coder, so no dependency is taken; its output
 * is kept as test vectors in test/vectors/reedsolomon.json.)
 */
import { type ErasureCoder, ReedSolomon, SimdReedSolomon, simdAvailable } from "../../../storage/index.js";

/** The coder for `data` + `parity`. */
export function erasureCoder(dataShards: number, parityShards: number): ErasureCoder {
  return simdAvailable() ? new SimdReedSolomon(dataShards, parityShards) : new ReedSolomon(dataShards, parityShards);
}
