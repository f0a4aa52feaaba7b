// Building a blobber for tests: a parsed yaml, fresh BLS keys, memory stores, a manual clock and a fake chain.
import { getScheme, initCrypto } from "../../../src/core/schemes.js";
import { type BlobberOptions, createBlobber } from "../../../src/nodes/blobber/blobber.js";
import type { Blobber } from "../../../src/nodes/blobber/context.js";
import { MemoryShardStore } from "../../../src/nodes/blobber/files/store-memory.js";
import { parseBlobberConfig } from "../../../src/nodes/config/operator.js";
import { ManualClock } from "../../../src/nodes/io/clock.js";
import { MemoryKV } from "../../../src/nodes/io/kv-memory.js";
import { FakeChain } from "./fakes.js";

export const START = Date.UTC(2026, 10, 1);
export const DELEGATE = "d".repeat(64);

export async function testBlobber(
  yaml = "",
  extra: Partial<BlobberOptions> = {},
): Promise<{ blobber: Blobber; chain: FakeChain; clock: ManualClock }> {
  await initCrypto();
  const kp = getScheme("bls0chain").generateKeys();
  const clock = new ManualClock({ start: START, settleTurns: 30 });
  const chain = new FakeChain();
  const config = parseBlobberConfig(
    `block_worker: http://127.0.0.1:1/dns\ndelegate_wallet: ${DELEGATE}\ncapacity: 10737418240\n${yaml}`,
    "0chain_blobber.yaml",
  );
  const blobber = await createBlobber({
    config,
    keys: { public_key: kp.publicKey, private_key: kp.privateKey },
    hostname: "127.0.0.1",
    port: 5051,
    kv: new MemoryKV(),
    shards: new MemoryShardStore(),
    clock,
    chain,
    routes: [],
    intervals: { registerRetryMs: 5_000, healthCheckMs: 60_000, allocationsMs: 10_000 },
    ...extra,
  });
  return { blobber, chain, clock };
}

/** Advance the manual clock in steps until `cond` holds (at most `maxMs` of virtual time). */
export async function until(clock: ManualClock, what: string, cond: () => boolean, maxMs = 600_000, stepMs = 250): Promise<void> {
  const end = clock.now() + maxMs;
  while (!cond()) {
    if (clock.now() >= end) throw new Error(`timed out (virtual) waiting for ${what}`);
    await clock.advance(stepMs);
  }
}
