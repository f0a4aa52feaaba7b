import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { before, describe, it } from "node:test";
import bls from "bls-wasm";
import {
  BN254_R,
  blsSignMessage,
  blsVerifyMessage,
  frBytesFromRandom,
  publicKeyFromHerumiString,
  publicKeyToHerumiString,
  secretKeyFromHerumiString,
  secretKeyToHerumiString,
  signatureFromHerumiString,
  signatureToHerumiString,
} from "../../src/core/bls.js";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";
import { toHex } from "../../src/core/hex.js";
import {
  BLS_SEED_PASSPHRASE,
  ED25519_SEED_PASSPHRASE,
  generateMnemonic,
  isValidMnemonic,
  mnemonicSeed,
} from "../../src/core/mnemonic.js";
import { clientIdOf, getScheme, initCrypto } from "../../src/core/schemes.js";
import { recoverWallet } from "../../src/core/wallet.js";

interface MnemonicVector {
  source: string;
  scheme: string;
  mnemonic: string;
  private_key: string;
  public_key: string;
  client_id?: string;
  public_key_herumi_string?: string;
}
interface SignatureVector {
  source: string;
  scheme: string;
  kind: "hash" | "message_utf8";
  public_key?: string;
  client_id?: string;
  hash?: string;
  message?: string;
  signature?: string;
  private_key_herumi_string?: string;
  signature_herumi_string?: string;
  transaction?: {
    creation_date: number;
    client_id: string;
    to_client_id: string;
    transaction_value: number;
    transaction_data: string;
  };
}
interface Vectors {
  mnemonic_vectors: MnemonicVector[];
  key_pairs: { source: string; scheme: string; private_key: string; public_key: string; client_id?: string }[];
  signatures: SignatureVector[];
  aggregate: { data: string; sk0: string; sk1: string; primary_key: string };
  hashes: { input: string; sha3: string }[];
}
const V = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/keys.json"), "utf8")) as Vectors;

const coded = (code: string, re?: RegExp) => (e: unknown) =>
  e instanceof CodedError && e.code === code && (!re || re.test(e.message));

/** Flip the last hex digit of a hex string. */
const flip = (h: string): string => h.slice(0, -1) + (h.endsWith("0") ? "1" : "0");

before(async () => {
  await initCrypto();
  await initCrypto(); // idempotent
});

describe("reference vectors", () => {
  it("sha3-256 hashes", () => {
    for (const h of V.hashes) assert.equal(sha3(h.input), h.sha3);
  });

  it("every reference mnemonic recovers to the reference keys and client id (bls0chain and ed25519)", () => {
    assert.ok(V.mnemonic_vectors.filter((v) => v.scheme === "bls0chain").length >= 5);
    assert.ok(V.mnemonic_vectors.some((v) => v.scheme === "ed25519"));
    for (const v of V.mnemonic_vectors) {
      const s = getScheme(v.scheme);
      assert.ok(isValidMnemonic(v.mnemonic), v.source);
      const kp = s.keysFromMnemonic(v.mnemonic);
      assert.equal(kp.privateKey, v.private_key, v.source);
      assert.equal(kp.publicKey, v.public_key, v.source);
      const w = recoverWallet(s, v.mnemonic);
      assert.equal(w.client_key, v.public_key);
      assert.equal(w.client_id, clientIdOf(v.public_key));
      if (v.client_id) assert.equal(w.client_id, v.client_id, v.source);
    }
  });

  it("the bls0chain vectors cover both branches of mcl's setByCSPRNG mask (value >= r after 254 bits, and not)", () => {
    const high = (m: string): boolean => {
      const seed = mnemonicSeed(m, BLS_SEED_PASSPHRASE).subarray(0, 32);
      return (BigInt(`0x${toHex(Uint8Array.from(seed).reverse())}`) & ((1n << 254n) - 1n)) >= BN254_R;
    };
    const bl = V.mnemonic_vectors.filter((v) => v.scheme === "bls0chain");
    assert.ok(bl.some((v) => high(v.mnemonic)));
    assert.ok(bl.some((v) => !high(v.mnemonic)));
  });

  it("herumi's string form of a public key (gosdk TestGenerateKeys GetHexString)", () => {
    const v = V.mnemonic_vectors[0] as MnemonicVector;
    assert.equal(publicKeyToHerumiString(v.public_key), v.public_key_herumi_string);
    assert.equal(publicKeyFromHerumiString(v.public_key_herumi_string as string), v.public_key);
  });

  it("reference key pairs and node/owner ids match for both schemes", () => {
    for (const v of V.key_pairs) {
      assert.equal(getScheme(v.scheme).publicKeyOf(v.private_key), v.public_key, v.source);
      if (v.client_id) assert.equal(clientIdOf(v.public_key), v.client_id, v.source);
    }
  });

  it("Go-made bls0chain signatures of messages are reproduced byte for byte (genesis share_or_signs)", () => {
    const msgs = V.signatures.filter((v) => v.kind === "message_utf8");
    assert.ok(msgs.length >= 1);
    for (const v of msgs) {
      const sk = secretKeyFromHerumiString(v.private_key_herumi_string as string);
      assert.equal(secretKeyToHerumiString(sk), v.private_key_herumi_string);
      const sig = blsSignMessage(sk, v.message as string);
      assert.equal(signatureToHerumiString(sig), v.signature_herumi_string, v.source);
      assert.equal(signatureFromHerumiString(v.signature_herumi_string as string), sig);
      const pk = getScheme("bls0chain").publicKeyOf(sk);
      assert.ok(blsVerifyMessage(pk, v.message as string, sig));
      assert.ok(!blsVerifyMessage(pk, `${v.message as string}x`, sig));
    }
  });

  it("Go-made transaction signatures over raw hash bytes verify (bls0chain and ed25519), and fail when altered", () => {
    const hashes = V.signatures.filter((v) => v.kind === "hash");
    assert.ok(hashes.some((v) => v.scheme === "bls0chain") && hashes.some((v) => v.scheme === "ed25519"));
    for (const v of hashes) {
      const s = getScheme(v.scheme);
      const [pk, h, sig] = [v.public_key as string, v.hash as string, v.signature as string];
      assert.equal(clientIdOf(pk), v.client_id);
      assert.ok(s.verify(pk, h, sig), v.source);
      assert.ok(!s.verify(pk, flip(h), sig));
      assert.ok(!s.verify(pk, h, flip(sig)));
      const t = v.transaction;
      if (t)
        assert.equal(
          sha3(`${t.creation_date}:${t.client_id}:${t.to_client_id}:${t.transaction_value}:${sha3(t.transaction_data)}`),
          h,
        );
    }
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

describe("bls0chain key derivation (mcl setArrayMask)", () => {
  const le = (x: bigint): Uint8Array => {
    const out = new Uint8Array(32);
    for (let i = 0; i < 32; i++, x >>= 8n) out[i] = Number(x & 0xffn);
    return out;
  };
  const cases: [string, Uint8Array][] = [
    ["all ones: masked to 254 bits is >= r, so 253 bits are kept", new Uint8Array(32).fill(0xff)],
    ["r itself", le(BN254_R)],
    ["r - 1", le(BN254_R - 1n)],
    ["2^254 - 1", le((1n << 254n) - 1n)],
    ["one", le(1n)],
  ];
  for (const [name, bytes] of cases) {
    it(`matches herumi's setLittleEndian: ${name}`, () => {
      const sk = new bls.SecretKey();
      sk.setLittleEndian(bytes);
      assert.equal(toHex(frBytesFromRandom(bytes)), sk.serializeToHexStr());
    });
  }
  it("matches herumi's setLittleEndian on random inputs, and always yields a valid key", () => {
    for (let i = 0; i < 40; i++) {
      const bytes = randomBytes(32);
      const sk = new bls.SecretKey();
      sk.setLittleEndian(bytes);
      const ours = toHex(frBytesFromRandom(bytes));
      assert.equal(ours, sk.serializeToHexStr());
      assert.equal(getScheme("bls0chain").publicKeyOf(ours).length, 128);
    }
  });
  it("r - 1 is kept, r becomes r masked to 253 bits", () => {
    assert.equal(BigInt(`0x${toHex(frBytesFromRandom(le(BN254_R - 1n)).reverse())}`), BN254_R - 1n);
    assert.equal(BigInt(`0x${toHex(frBytesFromRandom(le(BN254_R)).reverse())}`), BN254_R & ((1n << 253n) - 1n));
    assert.throws(() => frBytesFromRandom(new Uint8Array(31)), RangeError);
  });
});

describe("sign and verify", () => {
  for (const name of ["bls0chain", "ed25519"]) {
    it(`${name}: round trip, deterministic, and tampering with signature, message or key fails`, () => {
      const s = getScheme(name);
      const kp = s.generateKeys();
      assert.equal(s.publicKeyOf(kp.privateKey), kp.publicKey);
      const h = sha3("hello");
      const sig = s.sign(kp.privateKey, h);
      assert.ok(s.verify(kp.publicKey, h, sig));
      assert.equal(s.sign(kp.privateKey, h), sig, "deterministic");
      assert.ok(!s.verify(kp.publicKey, sha3("hellO"), sig));
      assert.ok(!s.verify(s.generateKeys().publicKey, h, sig));
      assert.ok(!s.verify(kp.publicKey, h, flip(sig)));
      assert.ok(!s.verify(flip(kp.publicKey), h, sig));
    });
    it(`${name}: malformed inputs make verify return false, sign throw coded errors`, () => {
      const s = getScheme(name);
      const kp = s.generateKeys();
      const h = sha3("x");
      const sig = s.sign(kp.privateKey, h);
      for (const [pk, hh, sg] of [
        ["zz", h, sig],
        [kp.publicKey, h, "nothex"],
        [kp.publicKey, "", sig],
        [kp.publicKey, "abc", sig],
        [kp.publicKey, h, sig.slice(2)],
        [kp.publicKey.slice(2), h, sig],
        [kp.publicKey, h, "0".repeat(sig.length)],
        ["0".repeat(kp.publicKey.length), h, sig],
      ] as const) {
        assert.equal(s.verify(pk, hh, sg), false);
      }
      assert.throws(() => s.sign(kp.privateKey, "not a hash"), coded("invalid_hash"));
      const secret = kp.privateKey;
      assert.throws(
        () => s.sign(`${secret.slice(0, -1)}g`, h),
        (e: unknown) => coded("invalid_private_key")(e) && !(e as Error).message.includes(secret.slice(0, 20)),
      );
    });
  }
  it("bls0chain: a private key at or above the group order is refused", () => {
    const r = BN254_R.toString(16).padStart(64, "0");
    const rLe = toHex(Uint8Array.from(Buffer.from(r, "hex")).reverse());
    assert.throws(() => getScheme("bls0chain").publicKeyOf(rLe), coded("invalid_private_key", /below the group order/));
    assert.throws(() => secretKeyFromHerumiString(r), coded("invalid_key_string"));
  });
  it("ed25519: a 128-hex private key must end with its own public key; a bare 64-hex seed also works", () => {
    const s = getScheme("ed25519");
    const kp = s.generateKeys();
    const seed = kp.privateKey.slice(0, 64);
    assert.equal(s.publicKeyOf(seed), kp.publicKey);
    assert.equal(s.sign(seed, sha3("a")), s.sign(kp.privateKey, sha3("a")));
    assert.throws(() => s.publicKeyOf(seed + s.generateKeys().publicKey), coded("invalid_private_key", /inconsistent/));
  });
  it("unknown scheme names the value and the valid ones", () => {
    assert.throws(
      () => getScheme("rsa"),
      coded("unknown_signature_scheme", /unsupported signature scheme "rsa" \(supported: bls0chain, ed25519\)/),
    );
    assert.throws(() => getScheme("toString"), coded("unknown_signature_scheme"));
    assert.equal(getScheme("ed25519").name, "ed25519");
  });
  it("client id = sha3 of the raw public-key bytes; non-hex keys are refused", () => {
    const pk = getScheme("bls0chain").generateKeys().publicKey;
    assert.equal(clientIdOf(pk), sha3(Buffer.from(pk, "hex")));
    assert.throws(() => clientIdOf("xyz"), coded("invalid_public_key"));
    assert.throws(() => clientIdOf(""), coded("invalid_public_key"));
  });
});

describe("mnemonics", () => {
  it("a fresh mnemonic has 24 valid words and differs each time", () => {
    const m = generateMnemonic();
    assert.equal(m.split(" ").length, 24);
    assert.ok(isValidMnemonic(m));
    assert.notEqual(generateMnemonic(), m);
  });
  it("checksum, word list and whitespace", () => {
    const v = (V.mnemonic_vectors[0] as MnemonicVector).mnemonic;
    assert.ok(isValidMnemonic(`  ${v.replaceAll(" ", " \t ")}\n`));
    assert.ok(!isValidMnemonic(v.replace(/struggle$/, "abandon")), "bad checksum");
    assert.ok(!isValidMnemonic(v.replace("silent tape", "tape silent")), "swapped words");
    assert.ok(!isValidMnemonic(v.replace("silent", "silentt")), "unknown word");
    assert.ok(!isValidMnemonic("abandon abandon"));
    assert.ok(!isValidMnemonic(""));
  });
  it("the seed is BIP39's PBKDF2-HMAC-SHA512 (Trezor vector) with the scheme's passphrase", () => {
    const m = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
    assert.equal(
      toHex(mnemonicSeed(m, "TREZOR")),
      "c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04",
    );
    assert.deepEqual(mnemonicSeed(m), mnemonicSeed(m, "0chain-client-split-key"));
    assert.notDeepEqual(mnemonicSeed(m), mnemonicSeed(m, ED25519_SEED_PASSPHRASE));
    assert.equal(mnemonicSeed(m).length, 64);
  });
  it("derivation ignores extra whitespace and differs between schemes", () => {
    const m = generateMnemonic();
    for (const name of ["bls0chain", "ed25519"]) {
      const s = getScheme(name);
      assert.deepEqual(s.keysFromMnemonic(` ${m.replaceAll(" ", "  ")} `), s.keysFromMnemonic(m));
    }
    assert.notEqual(
      getScheme("bls0chain").keysFromMnemonic(m).privateKey.slice(0, 64),
      getScheme("ed25519").keysFromMnemonic(m).privateKey.slice(0, 64),
    );
  });
});
