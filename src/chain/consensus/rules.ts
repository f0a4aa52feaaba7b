/** Pure protocol formulas shared by the engine, the node and tests: thresholds, beacon, generator ranking. */
import { sha3 } from "../../core/hash.js";
import { permutation } from "../../core/random.js";

/** Notarization quorum Q = ceil(2n/3) distinct tickets. */
export function quorum(n: number): number {
  return Math.floor((2 * n + 2) / 3);
}

/** Generators per round G = min(n, max(2, ceil(0.2 n))) (reference `min_generators: 2`, `generators_percent: 0.2`). */
export function generatorCount(n: number): number {
  return Math.min(n, Math.max(2, Math.floor((n + 4) / 5)));
}

/** The message every miner share-signs in round `round`: sha3 of `cairn-vrf:<chainId>:<round>`. */
export function vrfHash(chainId: string, round: number): string {
  return sha3(`cairn-vrf:${chainId}:${round}`);
}

/**
 * Round random seed from the recovered group signature (reference): `rbo = sha3(sigHex)` over the hex text,
 * seed = the first 16 hex characters of `rbo` read as a uint64 and reinterpreted as an int64.
 */
export function seedFromGroupSig(sigHex: string): bigint {
  return BigInt.asIntN(64, BigInt(`0x${sha3(sigHex).slice(0, 16)}`));
}

/**
 * The ranking permutation of a round: `perm = permutation(seed, n)` (xoshiro128** seeded by splitmix64,
 * Fisher–Yates; see `core/random.ts`, not Go's math/rand). The miner with `set_index` i has rank `perm[i]`
 * (0 = best).
 */
export function rankPermutation(seed: bigint, n: number): number[] {
  return permutation(seed, n);
}

/**
 * The finality rule, in one place for the consensus engine and the sharder: three notarized blocks of
 * consecutive rounds, each the parent of the next, finalize the middle one and all its ancestors. The callers
 * give blocks already known to be notarized and linked; this checks the rounds.
 */
export function finalizesMiddle(grand: { round: number }, middle: { round: number }, child: { round: number }): boolean {
  return middle.round === grand.round + 1 && child.round === middle.round + 1;
}

/**
 * Deterministic finality: a finalized block is final for good once notarized blocks after it were generated
 * by at least a quorum of distinct miners (`generators`, of the miner set of size `n`).
 */
export function deterministicallyFinal(generators: ReadonlySet<string>, n: number): boolean {
  return generators.size >= quorum(n);
}
