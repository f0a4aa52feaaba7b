/**
 * The erasure coder the client uses: the TypeScript Reed–Solomon of `storage/reedsolomon.ts` (32-bit table
 * lookups). @digitaldefiance/reed-solomon-erasure.wasm 1.0.2 was measured against it in this code path (1 MiB
 * shards, 2+2, shards copied into and out of the module's single buffer): no faster, so no dependency is taken;
 * its output is kept as test vectors (test/vectors/reedsolomon.json). This is the one place to plug a faster coder.
 */
import { type ErasureCoder, ReedSolomon } from "../../../storage/index.js";

/** The coder for `data` + `parity`. */
export function erasureCoder(dataShards: number, parityShards: number): ErasureCoder {
  return new ReedSolomon(dataShards, parityShards);
}
