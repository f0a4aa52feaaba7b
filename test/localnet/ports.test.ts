// Port choice for multi-process networks: below the ephemeral range, every port of the layout free.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { portOffsets } from "../../src/localnet/layout.js";
import { EPHEMERAL_START, findFreeBase, parsePortRange } from "../../src/localnet/ports.js";

function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen({ host: "127.0.0.1", port }, () => resolve(s));
  });
}

describe("findFreeBase", () => {
  it("chooses a base below the ephemeral range", async () => {
    const base = await findFreeBase({ offsets: portOffsets(3, 1) });
    assert.ok(base >= 10_000 && base + 50 < EPHEMERAL_START, `base ${base}`);
  });

  it("skips a base whose ports are taken", async () => {
    // a one-port-wide range twice over: the first draw lands on the busy base, the second on the free one
    const probe = await findFreeBase({ offsets: [0, 1] });
    const busy = await occupy(probe);
    try {
      const draws = [0, 0.99];
      const base = await findFreeBase({ offsets: [0], range: [probe, probe + 1], random: () => draws.shift() ?? 0.99 });
      assert.equal(base, probe + 1);
      await assert.rejects(
        findFreeBase({ offsets: [0], range: [probe, probe + 1], random: () => 0, attempts: 2 }),
        (e: unknown) => e instanceof CodedError && e.code === "ports_unavailable",
      );
    } finally {
      busy.close();
    }
  });

  it("parses a range and names a bad one", () => {
    assert.deepEqual(parsePortRange("22000-22999"), [22000, 22999]);
    assert.throws(() => parsePortRange("9-5"), /port range must be "lo-hi"/);
  });
});
