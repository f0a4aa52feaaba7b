// The built zwallet and zbox binaries, spawned as a user runs them: version, recoverwallet, getwallet,
// sign-data, help, and their failures (one line on stderr, non-zero exit, no colour codes).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { before, describe, it } from "node:test";
import { sha3 } from "../../src/core/hash.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { encryptionKeys } from "../../src/storage/encryption.js";

const BIN = resolve(import.meta.dirname, "../../src/bin");
const V = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/keys.json"), "utf8")) as {
  mnemonic_vectors: { mnemonic: string; public_key: string; private_key: string }[];
};
const VEC = V.mnemonic_vectors[0] as { mnemonic: string; public_key: string; private_key: string };

function run(bin: "zwallet" | "zbox", args: string[], home?: string): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [join(BIN, `${bin}.js`), ...args], {
    encoding: "utf8",
    env: { ...process.env, HOME: home ?? mkdtempSync(join(tmpdir(), "cairn-home-")), FORCE_COLOR: "0" },
    timeout: 30_000,
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);

before(async () => {
  await initCrypto();
});

describe("zwallet and zbox shells", () => {
  it("version on both", () => {
    const z = run("zwallet", ["version"]);
    assert.equal(z.code, 0);
    assert.match(z.out, /^Version info:\n\tzwallet\.\.\.: {2}\d+\.\d+\.\d+\n/);
    const b = run("zbox", ["version"]);
    assert.equal(b.code, 0);
    assert.match(b.out, /^Version info:\n\tzboxcli\.\.: {2}\d+\.\d+\.\d+\n/);
  });

  it("help lists the commands that exist, without colour", () => {
    const z = run("zwallet", ["--help"]);
    assert.equal(z.code, 0);
    for (const c of [
      "recoverwallet",
      "register",
      "faucet",
      "getbalance",
      "send",
      "verify",
      "ls-miners",
      "ls-sharders",
      "getid",
      "version",
    ])
      assert.match(z.out, new RegExp(`\\b${c}\\b`));
    assert.ok(!ANSI.test(z.out));
    const b = run("zbox", ["help"]);
    assert.equal(b.code, 0);
    for (const c of ["getwallet", "sign-data", "version"]) assert.match(b.out, new RegExp(`\\b${c}\\b`));
    assert.match(run("zwallet", ["send", "--help"]).out, /--to_client_id/);
  });

  it("recoverwallet on a reference mnemonic writes the reference keys and client id, mode 0600", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    const r = run("zwallet", ["recoverwallet", "--mnemonic", VEC.mnemonic, "--configDir", dir]);
    assert.equal(r.err, "");
    assert.equal(r.code, 0);
    assert.equal(r.out, "Wallet recovered!!\n");
    const path = join(dir, "wallet.json");
    const w = JSON.parse(readFileSync(path, "utf8")) as {
      client_id: string;
      client_key: string;
      keys: { public_key: string; private_key: string }[];
      mnemonics: string;
    };
    assert.equal(w.client_key, VEC.public_key);
    assert.equal(w.keys[0]?.private_key, VEC.private_key);
    assert.equal(w.client_id, sha3(Buffer.from(VEC.public_key, "hex")));
    assert.equal(w.mnemonics, VEC.mnemonic);
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });

  it("recoverwallet failures", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    const none = run("zwallet", ["recoverwallet", "--configDir", dir]);
    assert.equal(none.code, 1);
    assert.equal(none.err, "Error: Mnemonic not provided\n");
    const bad = run("zwallet", ["recoverwallet", "--mnemonic", "one two three", "--configDir", dir]);
    assert.equal(bad.code, 1);
    assert.equal(bad.err, "Error: Invalid mnemonic\n");
    const unknown = run("zwallet", ["nosuchcommand"]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.err, /unknown command/);
  });

  it("a custom --wallet name is written relative to --configDir, ed25519 per config.yaml", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    writeFileSync(join(dir, "config.yaml"), "block_worker: http://127.0.0.1:9091/dns\nsignature_scheme: ed25519\n");
    const r = run("zwallet", ["recoverwallet", "--mnemonic", VEC.mnemonic, "--configDir", dir, "--wallet", "ed.json"]);
    assert.equal(r.code, 0, r.err);
    const w = JSON.parse(readFileSync(join(dir, "ed.json"), "utf8")) as { client_key: string; client_id: string };
    const kp = getScheme("ed25519").keysFromMnemonic(VEC.mnemonic);
    assert.equal(w.client_key, kp.publicKey);
    assert.equal(w.client_id, sha3(Buffer.from(kp.publicKey, "hex")));
  });

  it("getwallet as a table and as JSON; identity flags", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    assert.equal(run("zwallet", ["recoverwallet", "--mnemonic", VEC.mnemonic, "--configDir", dir]).code, 0);
    const id = sha3(Buffer.from(VEC.public_key, "hex"));
    const j = run("zbox", ["getwallet", "--json", "--configDir", dir]);
    assert.equal(j.code, 0, j.err);
    const enc = encryptionKeys(VEC.mnemonic).publicKey;
    assert.deepEqual(JSON.parse(j.out), { client_id: id, client_public_key: VEC.public_key, encryption_public_key: enc });
    const t = run("zbox", ["getwallet", "--configDir", dir]);
    assert.equal(t.code, 0);
    assert.match(t.out, /PUBLIC KEY/);
    assert.match(t.out, /CLIENTID/);
    assert.match(t.out, /ENCRYPTION PUBLIC KEY/);
    assert.ok(t.out.includes(id));
    assert.ok(t.out.includes(enc), "the encryption public key, from the mnemonic");
    assert.ok(!ANSI.test(t.out));
    const flags = run("zbox", ["getwallet", "--json", "--wallet_client_id", id, "--wallet_client_key", VEC.public_key]);
    assert.equal(flags.code, 0, flags.err);
    assert.equal((JSON.parse(flags.out) as { client_id: string }).client_id, id);
    const mismatch = run("zbox", ["getwallet", "--wallet_client_id", "0".repeat(64), "--wallet_client_key", VEC.public_key]);
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.err, /does not match/);
  });

  it("getwallet without a wallet names the missing file", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    const r = run("zbox", ["getwallet", "--configDir", dir]);
    assert.equal(r.code, 1);
    assert.ok(r.err.includes(join(dir, "wallet.json")), r.err);
    assert.equal(r.err.trim().split("\n").length, 1);
  });

  it("a corrupt wallet is reported with the file and field", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    writeFileSync(join(dir, "wallet.json"), JSON.stringify({ client_id: "xyz" }));
    const r = run("zbox", ["getwallet", "--configDir", dir]);
    assert.equal(r.code, 1);
    assert.match(r.err, /wallet\.json: field "client_id"/);
  });

  it("sign-data signs sha3(data), or the client id when data is empty; signatures verify", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    assert.equal(run("zwallet", ["recoverwallet", "--mnemonic", VEC.mnemonic, "--configDir", dir]).code, 0);
    const s = getScheme("bls0chain");
    const r = run("zbox", ["sign-data", "--data", "hello", "--configDir", dir]);
    assert.equal(r.code, 0, r.err);
    const m = /^Signature : ([0-9a-f]+)\n$/.exec(r.out);
    assert.ok(m, r.out);
    assert.ok(s.verify(VEC.public_key, sha3("hello"), m[1] as string));
    const e = run("zbox", ["sign-data", "--configDir", dir]);
    const m2 = /^Signature : ([0-9a-f]+)\n$/.exec(e.out);
    assert.ok(m2);
    assert.ok(s.verify(VEC.public_key, sha3(Buffer.from(VEC.public_key, "hex")), m2[1] as string));
  });
});
