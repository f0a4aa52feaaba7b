// Node logger: structured lines, secret redaction at any depth, file output, silent logger.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createLogger, isSecretField, redactSecrets, silentLogger } from "../../src/nodes/logger.js";

function capture(level: "debug" | "info" = "info") {
  const raw: string[] = [];
  const logger = createLogger({
    name: "miner-1",
    level,
    base: { role: "miner" },
    stream: { write: (s: string) => void raw.push(s) },
  });
  return { logger, raw, lines: () => raw.map((s) => JSON.parse(s) as Record<string, unknown>) };
}

describe("createLogger", () => {
  it("writes one JSON line per call with name, base fields, level and ISO time", () => {
    const { logger, lines } = capture();
    logger.info({ round: 7 }, "round started");
    logger.debug("hidden below the level");
    const [l] = lines();
    assert.equal(lines().length, 1);
    assert.equal(l?.name, "miner-1");
    assert.equal(l?.role, "miner");
    assert.equal(l?.level, 30);
    assert.equal(l?.round, 7);
    assert.equal(l?.msg, "round started");
    assert.match(String(l?.time), /^\d{4}-\d\d-\d\dT/);
  });

  it("redacts private keys, mnemonics and secrets at any depth, but keeps public keys", () => {
    const { logger, raw, lines } = capture();
    const secretHex = "5e5e5e5e5e5e5e5e5e5e";
    logger.info(
      {
        private_key: secretHex,
        wallet: { public_key: "pk-visible", privateKey: secretHex, keys: [{ private_key: secretHex, client_id: "id-visible" }] },
        mnemonic: "abandon abandon about",
        deep: { a: { b: { c: { secret_share: secretHex, secretKey: secretHex, client_secret: secretHex } } } },
        mnemonics: ["x"],
      },
      "wallet loaded",
    );
    const child = logger.child({ private_key: secretHex, ctx: { mnemonics: "abandon abandon" }, node: "n1" });
    child.info("from child");
    const text = raw.join("");
    assert.ok(!text.includes(secretHex), `secret leaked: ${text}`);
    assert.ok(!text.includes("abandon"), "mnemonic leaked");
    const [first, second] = lines();
    const wallet = first?.wallet as { public_key: string; keys: Array<Record<string, unknown>> };
    assert.equal(wallet.public_key, "pk-visible");
    assert.equal(wallet.keys[0]?.client_id, "id-visible");
    assert.equal(first?.private_key, "[redacted]");
    assert.equal(second?.node, "n1");
    assert.equal(second?.private_key, "[redacted]");
  });

  it("keeps errors serialised with type, message and stack", () => {
    const { logger, lines } = capture();
    logger.error({ err: new RangeError("bad round") }, "failed");
    const err = lines()[0]?.err as Record<string, unknown>;
    assert.equal(err.type, "RangeError");
    assert.equal(err.message, "bad round");
    assert.match(String(err.stack), /RangeError: bad round/);
  });

  it("appends to a file, creating its directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-log-"));
    try {
      const file = join(dir, "logs", "node.log");
      const logger = createLogger({ name: "sharder-1", file });
      logger.info({ mnemonic: "abandon" }, "first");
      logger.warn("second");
      const fileLines = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(
        fileLines.map((l) => [l.msg, l.level]),
        [
          ["first", 30],
          ["second", 40],
        ],
      );
      assert.equal(fileLines[0]?.mnemonic, "[redacted]");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("offers a silent logger and the redaction helpers", () => {
    const s = silentLogger();
    s.error("nothing");
    assert.equal(s.level, "silent");
    assert.equal(isSecretField("bls_private_key"), true);
    assert.equal(isSecretField("public_key"), false);
    const cyclic: Record<string, unknown> = { secret: "s" };
    cyclic.self = cyclic;
    const out = redactSecrets(cyclic) as Record<string, unknown>;
    assert.equal(out.secret, "[redacted]");
  });
});
