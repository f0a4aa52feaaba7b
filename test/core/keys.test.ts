import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { before, describe, it } from "node:test";
import bls from "bls-wasm";
import { sha3 } from "../../src/core/hash.js";
import { generateMnemonic, isValidMnemonic } from "../../src/core/mnemonic.js";
import { clientIdOf, getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, parseWallet, recoverWallet, serializeWallet } from "../../src/core/wallet.js";
import { CodedError } from "../../src/core/errors.js";

interface Vectors {
  mnemonic_vectors: { scheme: string; mnemonic: string; private_key: string; public_key: string }[];
  key_pairs: { scheme: string; private_key: string; public_key: string }[];
  aggregate: { data: string; sk0: string; sk1: string; primary_key: string };
  hashes: { input: string; sha3: string }[];
}
const V = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/keys.json"), "utf8")) as Vectors;

before(async () => {
  await initCrypto();
});

describe("reference vectors", () => {
  it("sha3-256 hashes", () => {
    for (const h of V.hashes) assert.equal(sha3(h.input), h.sha3);
  });
  it("a gosdk mnemonic recovers to the reference bls0chain keys and client id", () => {
    for (const v of V.mnemonic_vectors) {
      const s = getScheme(v.scheme);
      const kp = s.keysFromMnemonic(v.mnemonic);
      assert.equal(kp.privateKey, v.private_key);
      assert.equal(kp.publicKey, v.public_key);
      const w = recoverWallet(s, v.mnemonic);
      assert.equal(w.client_key, v.public_key);
      assert.equal(w.client_id, sha3(Buffer.from(v.public_key, "hex")));
    }
  });
  it("reference key pairs match for both schemes", () => {
    for (const v of V.key_pairs) assert.equal(getScheme(v.scheme).publicKeyOf(v.private_key), v.public_key, v.scheme);
  });
  it("herumi signatures add up under the sum of public keys (gosdk TestCombinedSignAndVerify)", () => {
    const s = getScheme("bls0chain");
    const h = sha3(V.aggregate.data);
    const a = new bls.Signature();
    a.deserializeHexStr(s.sign(V.aggregate.sk0, h));
    const b = new bls.Signature();
    b.deserializeHexStr(s.sign(V.aggregate.sk1, h));
    a.add(b);
    assert.ok(s.verify(V.aggregate.primary_key, h, a.serializeToHexStr()));
    assert.ok(!s.verify(V.aggregate.primary_key, h, s.sign(V.aggregate.sk0, h)));
  });
});

describe("sign and verify", () => {
  for (const name of ["bls0chain", "ed25519"]) {
    it(`${name}: round trip, and tampering fails`, () => {
      const s = getScheme(name);
      const kp = s.generateKeys();
      assert.equal(s.publicKeyOf(kp.privateKey), kp.publicKey);
      const h = sha3("hello");
      const sig = s.sign(kp.privateKey, h);
      assert.ok(s.verify(kp.publicKey, h, sig));
      assert.equal(s.sign(kp.privateKey, h), sig, "deterministic");
      assert.ok(!s.verify(kp.publicKey, sha3("hellO"), sig));
      const other = s.generateKeys();
      assert.ok(!s.verify(other.publicKey, h, sig));
      const bad = sig.slice(0, -2) + (sig.endsWith("00") ? "01" : "00");
      assert.ok(!s.verify(kp.publicKey, h, bad));
      assert.ok(!s.verify("zz", h, sig));
      assert.ok(!s.verify(kp.publicKey, h, "nothex"));
    });
    it(`${name}: mnemonic derivation is deterministic and client id = sha3(raw public key)`, () => {
      const s = getScheme(name);
      const m = generateMnemonic();
      assert.equal(m.split(" ").length, 24);
      assert.ok(isValidMnemonic(m));
      const a = recoverWallet(s, m);
      const b = recoverWallet(s, `  ${m.replaceAll(" ", "   ")} `);
      assert.equal(a.client_id, b.client_id);
      assert.equal(a.keys[0]?.private_key, b.keys[0]?.private_key);
      assert.equal(a.client_id, clientIdOf(a.client_key));
    });
  }
  it("unknown scheme names the valid ones", () => {
    assert.throws(() => getScheme("rsa"), /unsupported signature scheme "rsa" \(supported: bls0chain, ed25519\)/);
  });
  it("invalid mnemonics are refused", () => {
    const m = generateMnemonic().split(" ");
    [m[0], m[1]] = [m[1] as string, m[0] as string];
    assert.ok(!isValidMnemonic(m.join(" ")) || m[0] === m[1]);
    assert.ok(!isValidMnemonic("abandon abandon"));
    assert.throws(() => recoverWallet(getScheme("bls0chain"), "not a mnemonic at all"), (e: unknown) => e instanceof CodedError && e.code === "invalid_mnemonic");
  });
});

describe("wallet.json", () => {
  it("round-trips in the reference field order", () => {
    const w = createWallet(getScheme("bls0chain"));
    const text = serializeWallet(w);
    assert.deepEqual(Object.keys(JSON.parse(text)), ["client_id", "client_key", "keys", "mnemonics", "version", "date_created"]);
    assert.deepEqual(parseWallet(text, "w.json"), w);
    assert.equal(w.version, "1.0");
  });
  const good = (): Record<string, unknown> => JSON.parse(serializeWallet(createWallet(getScheme("ed25519")))) as Record<string, unknown>;
  const fails = (o: unknown, re: RegExp): void => {
    assert.throws(() => parseWallet(typeof o === "string" ? o : JSON.stringify(o), "/h/wallet.json"), (e: unknown) => e instanceof CodedError && e.code === "invalid_wallet" && re.test(e.message) && e.message.startsWith("/h/wallet.json"));
  };
  it("not JSON", () => fails("{", /not valid JSON/));
  it("not an object", () => fails([1], /expected a JSON object/));
  it("bad client_id", () => fails({ ...good(), client_id: "abc" }, /field "client_id": expected a 64-character hex client id/));
  it("client_id of another key", () => fails({ ...good(), client_id: "0".repeat(64) }, /field "client_id": expected sha3-256 of client_key/));
  it("missing keys", () => fails({ ...good(), keys: [] }, /field "keys": expected a list with at least one/));
  it("bad private key never echoes the secret", () => {
    const w = good();
    (w.keys as { private_key: string }[])[0]!.private_key = "secret-value";
    assert.throws(() => parseWallet(JSON.stringify(w), "w"), (e: unknown) => e instanceof Error && /keys\[0\]\.private_key/.test(e.message) && !e.message.includes("secret-value"));
  });
});
