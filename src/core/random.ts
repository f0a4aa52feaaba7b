/**
 * Seeded deterministic pseudo-random numbers: **xoshiro128\*\*** (Blackman & Vigna, 2018; 128-bit state,
 * 32-bit output, period 2^128 - 1) seeded through **splitmix64** (Steele, Lea & Flood), which expands a
 * 64-bit seed into the four 32-bit state words: `s0 = lo(sm1), s1 = hi(sm1), s2 = lo(sm2), s3 = hi(sm2)`
 * where `sm1, sm2` are the first two splitmix64 outputs for the seed.
 *
 * Used where the protocol needs a permutation every node computes identically (generator ranking from the
 * round random seed, see `chain/consensus/rules.ts`) and by the deterministic simulator. It is NOT Go's
 * `math/rand` (so rankings differ from the reference's), and it is not cryptographically secure.
 * Pure: no ambient randomness; the same seed always yields the same sequence.
 */

const MASK64 = (1n << 64n) - 1n;

/** splitmix64 as a stateful generator over a 64-bit seed (bigint arithmetic; used only for seeding). */
export class SplitMix64 {
  private state: bigint;

  constructor(seed: bigint) {
    this.state = BigInt.asUintN(64, seed);
  }

  /** Next 64-bit output as an unsigned bigint. */
  next(): bigint {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** A seed: a (possibly negative) integer; it is reduced to 64 bits (two's complement). */
export type Seed = bigint | number;

/** xoshiro128** generator. All draws are deterministic functions of the seed and the draw order. */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** Create from raw state words (at least one must be non-zero). Prefer `Rng.fromSeed`. */
  constructor(s0: number, s1: number, s2: number, s3: number) {
    this.s0 = s0 >>> 0;
    this.s1 = s1 >>> 0;
    this.s2 = s2 >>> 0;
    this.s3 = s3 >>> 0;
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1; // all-zero state is a fixed point
  }

  /** Seed through splitmix64. A number seed must be a safe integer. */
  static fromSeed(seed: Seed): Rng {
    if (typeof seed === "number" && !Number.isSafeInteger(seed))
      throw new RangeError(`Rng seed must be a safe integer, got ${seed}`);
    const sm = new SplitMix64(BigInt(seed));
    const a = sm.next();
    const b = sm.next();
    return new Rng(Number(a & 0xffffffffn), Number(a >> 32n), Number(b & 0xffffffffn), Number(b >> 32n));
  }

  /** Next 32-bit unsigned output. */
  nextU32(): number {
    const s1 = this.s1;
    const result = Math.imul(rotl(Math.imul(s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (s1 << 9) >>> 0;
    this.s2 = (this.s2 ^ this.s0) >>> 0;
    this.s3 = (this.s3 ^ s1) >>> 0;
    this.s1 = (s1 ^ this.s2) >>> 0;
    this.s0 = (this.s0 ^ this.s3) >>> 0;
    this.s2 = (this.s2 ^ t) >>> 0;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /** Uniform integer in [0, bound), unbiased (rejection of the low `2^32 mod bound` outputs). 1 ≤ bound ≤ 2^32. */
  int(bound: number): number {
    if (!Number.isInteger(bound) || bound < 1 || bound > 0x1_0000_0000)
      throw new RangeError(`Rng.int bound must be in [1, 2^32], got ${bound}`);
    const threshold = (0x1_0000_0000 - bound) % bound;
    for (;;) {
      const x = this.nextU32();
      if (x >= threshold) return x % bound;
    }
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  range(lo: number, hi: number): number {
    if (hi < lo) throw new RangeError(`Rng.range: hi ${hi} < lo ${lo}`);
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** A uniformly chosen element; throws on an empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("Rng.pick from an empty array");
    return items[this.int(items.length)] as T;
  }

  /** Shuffle in place (Fisher–Yates, Durstenfeld: i from the end, j = int(i + 1)); returns the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }

  /** An independent generator derived from the next 64 bits of this one (re-seeded through splitmix64). */
  fork(): Rng {
    const hi = BigInt(this.nextU32());
    const lo = BigInt(this.nextU32());
    return Rng.fromSeed((hi << 32n) | lo);
  }
}

/** A permutation of 0..n-1: `Rng.fromSeed(seed).shuffle([0, 1, …, n-1])`. */
export function permutation(seed: Seed, n: number): number[] {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`permutation size must be a non-negative integer, got ${n}`);
  return Rng.fromSeed(seed).shuffle(Array.from({ length: n }, (_, i) => i));
}
