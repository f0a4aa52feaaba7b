/**
 * Route definitions of the storage providers (`storage/api.ts`): a blobber serves exactly the file API
 * (`FileRoutes`) and its pages (`BlobberPages`), a validator exactly `ValidatorRoutes`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { BLOBBER_ROUTES } from "../../src/nodes/blobber/routes.js";
import { parseValidatorConfig } from "../../src/nodes/config/operator.js";
import { type NodeApp, registeredRoutes } from "../../src/nodes/http.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import { MemoryKV } from "../../src/nodes/io/kv-memory.js";
import { createValidator } from "../../src/nodes/validator/validator.js";
import { BlobberPages, FileRoutes, type PageRoute, type RouteDef, ValidatorRoutes } from "../../src/storage/api.js";
import { FakeChain } from "./blobber/fakes.js";
import { testBlobber } from "./blobber/helpers.js";

const registered = (app: NodeApp): string[] =>
  registeredRoutes(app)
    .map((r) => `${r.method} ${r.path}`)
    .sort();

describe("storage provider route definitions", () => {
  it("a blobber serves exactly the file API and its pages", async () => {
    const { blobber } = await testBlobber("", { routes: BLOBBER_ROUTES });
    const declared = [
      ...Object.values(FileRoutes).map((r: RouteDef) => `${r.method} ${r.path}`),
      ...Object.values(BlobberPages).map((r: PageRoute) => `${r.method} ${r.path}`),
    ].sort();
    assert.deepEqual(registered(blobber.app), declared);
    assert.equal(blobber.ctx.files?.service.blobberId, blobber.id, "the mounted file API, on the blobber's context");
    await blobber.stop();
  });

  it("a validator serves exactly its routes", async () => {
    await initCrypto();
    const kp = getScheme("bls0chain").generateKeys();
    const clock = new ManualClock({ start: Date.UTC(2026, 10, 1) });
    const v = createValidator({
      config: parseValidatorConfig(`block_worker: http://127.0.0.1:1/dns\ndelegate_wallet: ${"d".repeat(64)}\n`, "v.yaml"),
      keys: { public_key: kp.publicKey, private_key: kp.privateKey },
      hostname: "127.0.0.1",
      port: 5061,
      kv: new MemoryKV(),
      clock,
      chain: new FakeChain(),
      registerRetryMs: 5_000,
    });
    const declared = Object.values(ValidatorRoutes)
      .map((r: PageRoute) => `${r.method} ${r.path}`)
      .sort();
    assert.deepEqual(registered(v.app), declared);
    await v.stop();
  });
});
