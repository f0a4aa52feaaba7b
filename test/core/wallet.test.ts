import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { before, describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { generateMnemonic } from "../../src/core/mnemonic.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import {
  checkWalletKeys,
  createWallet,
  goTimeString,
  parseWallet,
  recoverWallet,
  serializeWallet,
  type WalletFile,
} from "../../src/core/wallet.js";

const V = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/keys.json"), "utf8")) as {
  mnemonic_vectors: {
    scheme: string;
    mnemonic: string;
    private_key: string;
    public_key: string;
    client_id?: string;
    date_created?: string;
  }[];
};

/** A wallet.json written by gosdk (zboxcore/marker/deletetoken_test.go), byte for byte. */
const REFERENCE_WALLET_TEXT =
  '{"client_id":"9bf430d6f086f1bdc2d26ad7a708a0e7958aa9ae20efbc6778450739fb1ca468","client_key":"eeb0c33325cbee0fb58bc09962f69a44d0b22ac2824a063eb1002273347e601a4612e6fea7e1a1ae62e0e3b7f1301c4de8a855bae86ebfa6e9dbbb41c3e39c24","keys":[{"public_key":"eeb0c33325cbee0fb58bc09962f69a44d0b22ac2824a063eb1002273347e601a4612e6fea7e1a1ae62e0e3b7f1301c4de8a855bae86ebfa6e9dbbb41c3e39c24","private_key":"0800424da684ff94ac8af3ccc3e024a8d16bb9054237e79feffc486efda6e210"}],"mnemonics":"neck hurt glow action goose gadget meat ankle patch boy truth convince glass grief cloth sunny evil puppy decorate language okay burst replace cigar","version":"1.0","date_created":"2021-03-13 01:42:49.625529496 +0700 +07 m=+1.336039112"}';

const T0 = new Date(Date.UTC(2021, 5, 18, 10, 20, 30, 120));

before(async () => {
  await initCrypto();
});

describe("wallet create / recover / serialize", () => {
  it("a reference wallet.json parses and re-serializes byte for byte", () => {
    const w = parseWallet(REFERENCE_WALLET_TEXT, "ref.json");
    assert.equal(serializeWallet(w), REFERENCE_WALLET_TEXT);
    checkWalletKeys(w, getScheme("bls0chain"), "ref.json");
    const r = recoverWallet(getScheme("bls0chain"), w.mnemonics, T0);
    assert.deepEqual({ ...r, date_created: w.date_created }, w);
  });

  for (const name of ["bls0chain", "ed25519"]) {
    it(`${name}: create → serialize → parse round trip, reference field order, compact text`, () => {
      const w = createWallet(getScheme(name), undefined, T0);
      const text = serializeWallet(w);
      assert.deepEqual(Object.keys(JSON.parse(text) as object), [
        "client_id",
        "client_key",
        "keys",
        "mnemonics",
        "version",
        "date_created",
      ]);
      assert.ok(!text.includes("\n") && !text.includes(": "), "compact like Go's json.Marshal");
      assert.deepEqual(parseWallet(text, "w.json"), w);
      assert.equal(w.version, "1.0");
      assert.equal(w.mnemonics.split(" ").length, 24);
      assert.equal(w.keys.length, 1);
      assert.equal(w.keys[0]?.public_key, w.client_key);
      checkWalletKeys(w, getScheme(name), "w.json");
    });
    it(`${name}: recovery is deterministic; createWallet with a mnemonic equals recoverWallet`, () => {
      const s = getScheme(name);
      const m = generateMnemonic();
      const a = recoverWallet(s, m, T0);
      assert.deepEqual(recoverWallet(s, `\t${m.replaceAll(" ", "   ")}  `, T0), a);
      assert.deepEqual(createWallet(s, m, T0), a);
      assert.equal(a.mnemonics, m);
    });
  }

  it("recovers every reference mnemonic to the reference wallet", () => {
    for (const v of V.mnemonic_vectors) {
      const w = recoverWallet(getScheme(v.scheme), v.mnemonic, T0);
      assert.deepEqual(w.keys, [{ public_key: v.public_key, private_key: v.private_key }]);
      if (v.client_id) assert.equal(w.client_id, v.client_id);
    }
  });

  it("date_created is Go's time.Time.String() in UTC (without the monotonic reading)", () => {
    assert.equal(createWallet(getScheme("ed25519"), undefined, T0).date_created, "2021-06-18 10:20:30.12 +0000 UTC");
    assert.equal(goTimeString(new Date(Date.UTC(2021, 0, 2, 3, 4, 5, 0))), "2021-01-02 03:04:05 +0000 UTC");
    assert.equal(goTimeString(new Date(Date.UTC(2021, 11, 31, 23, 59, 59, 7))), "2021-12-31 23:59:59.007 +0000 UTC");
  });

  it("an invalid mnemonic is refused with invalid_mnemonic and is not echoed", () => {
    const bad = "secret words that are not a mnemonic";
    for (const f of [() => recoverWallet(getScheme("bls0chain"), bad), () => createWallet(getScheme("ed25519"), bad)]) {
      assert.throws(
        f,
        (e: unknown) => e instanceof CodedError && e.code === "invalid_mnemonic" && !e.message.includes("secret words"),
      );
    }
  });
});

describe("parseWallet errors name the file, the field, expected and found", () => {
  const SRC = "/home/u/.zcn/wallet.json";
  const good = (name = "bls0chain"): Record<string, unknown> =>
    JSON.parse(serializeWallet(createWallet(getScheme(name), undefined, T0))) as Record<string, unknown>;
  const fails = (o: unknown, field: string | undefined, re: RegExp, secret?: string): void => {
    assert.throws(
      () => parseWallet(typeof o === "string" ? o : JSON.stringify(o), SRC),
      (e: unknown) => {
        assert.ok(e instanceof CodedError, String(e));
        assert.equal(e.code, "invalid_wallet");
        assert.ok(e.message.startsWith(`${SRC}: `), e.message);
        if (field !== undefined) assert.ok(e.message.includes(`field "${field}": expected `), e.message);
        assert.match(e.message, re);
        if (secret) assert.ok(!e.message.includes(secret), `secret leaked: ${e.message}`);
        return true;
      },
    );
  };
  const key0 = (w: Record<string, unknown>): Record<string, unknown> =>
    (w.keys as Record<string, unknown>[])[0] as Record<string, unknown>;

  it("not JSON, without quoting the text", () => {
    const w = good();
    const text = serializeWallet(w as unknown as WalletFile).replace('"version"', "version");
    fails(text, undefined, /not valid JSON/, (w.mnemonics as string).split(" ")[3]);
  });
  it("not an object", () =>
    fails([1], undefined, /expected a JSON object with client_id, client_key and keys, found a list of 1/));
  it("client_id missing, malformed, or not the hash of client_key", () => {
    const { client_id: _omit, ...noId } = good();
    fails(noId, "client_id", /found nothing \(the field is missing\)/);
    fails({ ...good(), client_id: "xyz" }, "client_id", /a 64-character lower-case hex client id, found "xyz"/);
    fails({ ...good(), client_id: "A".repeat(64) }, "client_id", /lower-case hex/);
    fails({ ...good(), client_id: "0".repeat(64) }, "client_id", /the sha3-256 of client_key \([0-9a-f]{64}\), found "0{64}"/);
  });
  it("client_key of the wrong form", () => {
    fails({ ...good(), client_key: 12 }, "client_key", /128 hex characters for bls0chain, 64 for ed25519\), found a number/);
    fails({ ...good(), client_key: "ab" }, "client_key", /found "ab"/);
  });
  it("keys missing, empty or holding a non-object", () => {
    fails({ ...good(), keys: undefined }, "keys", /a list with at least one \{public_key, private_key\}, found nothing/);
    fails({ ...good(), keys: [] }, "keys", /found a list of 0/);
    fails({ ...good(), keys: ["x"] }, "keys[0]", /an object \{public_key, private_key\}, found a string/);
  });
  it("a public key of the wrong size, or not client_key", () => {
    const w = good();
    key0(w).public_key = (w.client_key as string).slice(0, 64);
    fails(w, "keys[0].public_key", /a 128-hex public key like client_key/);
    const x = good();
    key0(x).public_key = good().client_key;
    fails(x, "keys[0].public_key", /the same key as client_key/);
  });
  it("a bad private key is described, never echoed", () => {
    for (const name of ["bls0chain", "ed25519"]) {
      const w = good(name);
      const secret = key0(w).private_key as string;
      key0(w).private_key = `${secret.slice(0, -2)}zz`;
      fails(
        w,
        "keys[0].private_key",
        name === "bls0chain"
          ? /a 64-hex bls0chain private key, found a string of 64 characters \(not lower-case hex\)/
          : /a 128-hex ed25519 private key, found a string of 128 characters/,
        secret.slice(0, 40),
      );
      const short = good(name);
      key0(short).private_key = "abcd";
      fails(short, "keys[0].private_key", /found a string of 4 characters/);
    }
  });
  it("mnemonics of the wrong type, or not a valid phrase (not echoed)", () => {
    fails({ ...good(), mnemonics: 5 }, "mnemonics", /expected a string, found a number/);
    fails(
      { ...good(), mnemonics: "alpha beta secretword" },
      "mnemonics",
      /a valid 24-word BIP39 phrase \(or an empty string\), found an invalid phrase of 3 words/,
      "secretword",
    );
  });
  it("version and date_created must be strings when present", () => {
    fails({ ...good(), version: 1 }, "version", /expected a string, found a number/);
    fails({ ...good(), date_created: null }, "date_created", /expected a string, found null/);
  });
  it("optional fields may be missing, unknown fields are ignored, split-key wallets are accepted", () => {
    const { mnemonics: _m, version: _v, date_created: _d, ...bare } = good();
    const w = parseWallet(JSON.stringify({ ...bare, nonce: 3 }), SRC);
    assert.equal(w.mnemonics, "");
    assert.equal(w.version, "");
    assert.equal(w.date_created, "");
    assert.ok(!("nonce" in w));
    const split = good();
    split.keys = [
      { public_key: good().client_key, private_key: key0(good()).private_key },
      { public_key: good().client_key, private_key: key0(good()).private_key },
    ];
    assert.equal(parseWallet(JSON.stringify(split), SRC).keys.length, 2);
  });
  it("checkWalletKeys catches a private key that does not belong to its public key", () => {
    const w = parseWallet(JSON.stringify(good()), SRC);
    const other = createWallet(getScheme("bls0chain"), undefined, T0);
    const secret = other.keys[0]?.private_key as string;
    const mixed: WalletFile = { ...w, keys: [{ public_key: w.client_key, private_key: secret }] };
    assert.throws(
      () => checkWalletKeys(mixed, getScheme("bls0chain"), SRC),
      (e: unknown) =>
        e instanceof CodedError &&
        e.code === "invalid_wallet" &&
        e.message.startsWith(SRC) &&
        /field "keys\[0\]\.public_key"/.test(e.message) &&
        !e.message.includes(secret),
    );
    assert.throws(
      () => checkWalletKeys(w, getScheme("ed25519"), SRC),
      /field "keys\[0\]\.public_key": expected the public key of keys\[0\]\.private_key \(scheme ed25519\)/,
    );
    const unloadable: WalletFile = { ...w, keys: [{ public_key: w.client_key, private_key: "f".repeat(64) }] };
    assert.throws(
      () => checkWalletKeys(unloadable, getScheme("bls0chain"), SRC),
      /field "keys\[0\]\.private_key": expected a private key of scheme bls0chain, found one that does not load \(private key is not a valid BN254 Fr element/,
    );
  });
});
