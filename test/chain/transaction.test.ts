import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { before, describe, it } from "node:test";
import { parseExactJson, parseJsonScan, stringifyExactJson } from "../../src/chain/codec/exact-json.js";
import { decodeTransaction, encodeTransaction, transactionFromJson } from "../../src/chain/codec/transaction.js";
import {
  clientIdOfKey,
  outputHash,
  referenceTransactionHash,
  signTransaction,
  smartContractCall,
  transactionHash,
  transactionHashData,
  validateTransaction,
} from "../../src/chain/transaction.js";
import type { Transaction } from "../../src/chain/types.js";
import { CodedError } from "../../src/core/errors.js";
import { EMPTY_HASH, sha3 } from "../../src/core/hash.js";
import type { SignatureScheme } from "../../src/core/scheme.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";

const CHAIN = "0afc093ffb509f059c55478bc1a60351cef7b4e9c008a53a6cc8241ca8617dfe";
const VECTORS = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/transactions.json"), "utf8")) as {
  client_public_key: string;
  put_response: string;
  confirmation: string;
};

before(async () => {
  await initCrypto();
});

function txn(overrides: Partial<Transaction> = {}): Transaction {
  return {
    hash: "",
    version: "1.0",
    client_id: sha3("a"),
    to_client_id: sha3("b"),
    chain_id: CHAIN,
    transaction_data: "hello",
    transaction_value: 10_000_000_000n,
    signature: "",
    creation_date: 1_700_000_000,
    transaction_fee: 0n,
    transaction_type: 0,
    ...overrides,
  };
}

const coded = (code: string, re?: RegExp) => (e: unknown) =>
  e instanceof CodedError && e.code === code && (re === undefined || re.test(e.message));

describe("exact int64 JSON", () => {
  it("keeps integers beyond 2^53 exact both ways and everything else as JSON.parse does", () => {
    const text =
      '{"a":9223372036854775807,"b":-9223372036854775808,"c":"12345678901234567890","d":1.5,"e":[1,-2,3e2],"f":9007199254740993,"g":9007199254740991,"h":null,"i":true,"j":{"k":[]}}';
    const v = parseExactJson(text) as Record<string, unknown>;
    assert.equal(v.a, 9223372036854775807n);
    assert.equal(v.b, -9223372036854775808n);
    assert.equal(v.c, "12345678901234567890");
    assert.equal(v.d, 1.5);
    assert.deepEqual(v.e, [1, -2, 300]);
    assert.equal(v.f, 9007199254740993n);
    assert.equal(v.g, 9007199254740991);
    assert.equal(stringifyExactJson(v), text.replace("3e2", "300"));
  });
  it("agrees with JSON.parse on ordinary documents, escapes included", () => {
    const text = '{"s":"a\\"b\\\\c\\u00e9\\n","n":-0.25,"e":1E-7,"u":"\\u0000big:0","arr":[{},[],"",0]}';
    assert.deepEqual(parseExactJson(text), JSON.parse(text));
    const v = { s: "\u0000big:0", n: 5n, arr: [undefined, () => 1], skip: undefined };
    assert.equal(stringifyExactJson(v), '{"s":"\\u0000big:0","n":5,"arr":[null,null]}');
  });
  it("keeps a __proto__ key as data", () => {
    const v = parseExactJson('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(Object.keys(v), ["__proto__"]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
  it("rejects what JSON rejects, with the position", () => {
    for (const bad of ["{", "[1,]", '{"a":1,}', "01", "-", "1.", "1e", '"abc', '"a\u0001"', "tru", "1 2", "{'a':1}", "NaN"])
      assert.throws(() => parseExactJson(bad), SyntaxError, bad);
    assert.throws(() => parseExactJson("[".repeat(300) + "]".repeat(300)), /nesting deeper/);
    assert.throws(() => parseExactJson('{"a":01}'), /position 6/);
  });
});

describe("exact JSON: the JSON.parse path gives the scanner's value", () => {
  const same = (text: string) => {
    let want: unknown;
    let wantErr: unknown;
    try {
      want = parseJsonScan(text);
    } catch (e) {
      wantErr = e;
    }
    if (wantErr) assert.throws(() => parseExactJson(text), { message: (wantErr as Error).message }, text);
    else assert.deepEqual(parseExactJson(text), want, text);
  };
  it("long integers outside strings become bigint, inside strings (escaped quotes too) stay text", () => {
    const big = "12345678901234567890";
    for (const text of [
      `{"seed":${big},"neg":-${big},"safe":9007199254740991,"unsafe":9007199254740993,"f":${big}.5,"e":${big}e3,"E":-${big}E-3}`,
      `{"s":"${big}","t":"a\\"${big}\\"","u":"\\\\","v":${big},"w":"x\\\\\\"${big}"}`,
      `[${big},"${big}",[-${big},{"k${big}":${big}}],"\\"",${big}]`,
      `{"__proto__":${big}}`,
      `{"__proto__":{"polluted":${big}}}`,
      `"\\u0000bigint:00:${big}"`,
      `{"a":1,"a":${big}}`,
      `{"hash":"ab${big}cd","d":"${big}${big}","n":${big}${big}}`,
      `${big}`,
      `-0`,
      `[1.0, 2e2, -0.0, 123456789012345]`,
    ])
      same(text);
    const v = parseExactJson(`{"__proto__":${big}}`) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(v, "__proto__")?.value, 12345678901234567890n);
  });
  it("a string shaped like the marker stays a string; errors and depth as the scanner", () => {
    assert.equal(parseExactJson('"\\u0000bigint:x:12345678901234567890"'), "\u0000bigint:x:12345678901234567890");
    for (const bad of [
      "{",
      "[12345678901234567890,]",
      '{"a":12345678901234567890,}',
      '"12345678901234567890',
      "1 2",
      "[012345678901234567890]",
      '{"a":-012345678901234567890}',
      "012345678901234567890",
    ])
      same(bad);
    assert.throws(() => parseExactJson("[012345678901234567890]"), SyntaxError, "a long integer with a leading zero is not JSON");
    same(`${"[".repeat(256)}12345678901234567890${"]".repeat(256)}`);
    same(`${"[".repeat(257)}${"]".repeat(257)}`);
    same(`${"[".repeat(258)}${"]".repeat(258)}`);
    same(`${"[".repeat(257)}1${"]".repeat(257)}`);
  });
  it("random documents: the same value as the scanner", () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const digits = (n: number) => Array.from({ length: n }, (_, i) => String(i === 0 ? 1 + rnd(9) : rnd(10))).join("");
    const str = () => {
      const pieces = ["a", '\\"', "\\\\", digits(1 + rnd(22)), "\\u0000", ":", "é"];
      return `"${Array.from({ length: rnd(5) }, () => pieces[rnd(pieces.length)]).join("")}"`;
    };
    const val = (d: number): string => {
      switch (rnd(d > 3 ? 4 : 6)) {
        case 0:
          return `${rnd(2) ? "-" : ""}${digits(1 + rnd(21))}`;
        case 1:
          return str();
        case 2:
          return `${digits(1 + rnd(18))}.${digits(1 + rnd(3))}`;
        case 3:
          return ["true", "false", "null"][rnd(3)] as string;
        case 4:
          return `[${Array.from({ length: rnd(4) }, () => val(d + 1)).join(",")}]`;
        default:
          return `{${Array.from({ length: rnd(4) }, () => `${str()}:${val(d + 1)}`).join(",")}}`;
      }
    };
    for (let i = 0; i < 2000; i++) same(val(0));
  });
});

describe("transaction hash", () => {
  it("is sha3(creation_date:client_id:to_client_id:value:fee:type:chain_id:sha3(data)) (Cairn's preimage)", () => {
    const t = txn();
    const data = `1700000000:${t.client_id}:${t.to_client_id}:10000000000:${t.transaction_fee}:${t.transaction_type}:${t.chain_id}:${sha3("hello")}`;
    assert.equal(transactionHashData(t), data);
    assert.equal(transactionHash(t), sha3(data));
    assert.equal(
      transactionHash(txn({ to_client_id: "", transaction_value: 0n, transaction_data: "" })),
      sha3(`1700000000:${t.client_id}::0:${t.transaction_fee}:${t.transaction_type}:${t.chain_id}:${EMPTY_HASH}`),
    );
    assert.equal(outputHash(""), EMPTY_HASH);
    assert.equal(outputHash("ok"), sha3("ok"));
  });
  it("covers the fee, the type and the chain id (which the reference's hash does not)", () => {
    const t = txn();
    const h = transactionHash(t);
    assert.notEqual(transactionHash({ ...t, transaction_fee: t.transaction_fee + 1n }), h);
    assert.notEqual(transactionHash({ ...t, transaction_type: t.transaction_type === 0 ? 10 : 0 }), h);
    assert.notEqual(transactionHash({ ...t, chain_id: sha3("another chain") }), h);
    const { transaction_fee: _f, transaction_type: _t, chain_id: _c, ...refFields } = t;
    assert.equal(referenceTransactionHash({ ...refFields }), referenceTransactionHash(t), "the reference ignores them");
  });
  it("pins the reference preimage's known value (computed independently with Python's hashlib.sha3_256)", () => {
    assert.equal(referenceTransactionHash(txn()), "c21bc6302220c2bd2f5e20562e7dfa4536507021b7a65ad4add1dbb8bf9cd243");
  });
  it("matches real reference transactions (gosdk docs: put response and confirmation)", () => {
    const put = (parseExactJson(VECTORS.put_response) as { entity: unknown }).entity;
    const t = transactionFromJson(put);
    assert.equal(t.hash, "a8986181e09f01813ee6226c4605cc34654000d1bb70f20bcca0d590cb8511cb");
    assert.equal(referenceTransactionHash(t), t.hash);
    assert.notEqual(transactionHash(t), t.hash, "Cairn's preimage departs from the reference's");
    assert.equal(t.transaction_type, 1000);
    assert.equal(t.txn_output_hash, undefined, 'txn_output_hash "" means not executed');
    assert.deepEqual(smartContractCall(t), {
      name: "new_allocation_request",
      input: { data_shards: 3, expiration_date: 1569363680, parity_shards: 1, size: 20480 },
    });
    assert.equal(clientIdOfKey(VECTORS.client_public_key), t.client_id);
    assert.ok(getScheme("ed25519").verify(VECTORS.client_public_key, t.hash, t.signature), "reference signature verifies");
    const c = (parseExactJson(VECTORS.confirmation) as { txn: unknown }).txn;
    const ct = transactionFromJson(c);
    assert.equal(referenceTransactionHash(ct), "bee436b5e9753cf6c1170202bb874bd539cdb3319740828c23efa62360c40632");
    assert.equal(outputHash(ct.transaction_output ?? ""), ct.txn_output_hash);
    assert.ok(getScheme("ed25519").verify(VECTORS.client_public_key, ct.hash, ct.signature));
  });
});

describe("transaction codec", () => {
  it("round-trips every field, big values included, in the reference field order", () => {
    const t: Transaction = {
      ...txn({ transaction_value: 9_000_000_000_000_000_000n, transaction_fee: 9_007_199_254_740_993n }),
      public_key: "ab",
      transaction_output: "ok",
      txn_output_hash: sha3("ok"),
      transaction_status: 1,
    };
    const text = encodeTransaction(t);
    assert.deepEqual(decodeTransaction(text), t);
    assert.match(
      text,
      /"transaction_value":9000000000000000000,"signature":"","creation_date":1700000000,"transaction_fee":9007199254740993,/,
    );
    assert.ok(text.startsWith('{"hash":"","version":"1.0","client_id":'));
    assert.equal(encodeTransaction(t), text);
  });
  it("derives a missing client_id from public_key, like the reference", () => {
    const w = createWallet(getScheme("ed25519"));
    const t = decodeTransaction(JSON.stringify({ public_key: w.client_key, creation_date: 1 }));
    assert.equal(t.client_id, w.client_id);
    assert.equal(t.to_client_id, "");
    assert.equal(t.transaction_value, 0n);
    assert.equal(t.transaction_type, 0);
  });
  it("names the field, what was expected and what was found", () => {
    const bad = (text: string, re: RegExp) => assert.throws(() => decodeTransaction(text), coded("invalid_transaction", re));
    bad('{"client_id":5,"creation_date":1}', /field "client_id": expected a string, found 5/);
    bad('{"client_id":"x","creation_date":"now"}', /field "creation_date": expected an integer, found "now"/);
    bad(
      '{"client_id":"x","creation_date":1,"transaction_value":1.5}',
      /field "transaction_value": expected an int64 integer, found 1\.5/,
    );
    bad(
      '{"client_id":"x","creation_date":1,"transaction_value":9223372036854775808}',
      /field "transaction_value": expected an int64 integer, found 9223372036854775808/,
    );
    bad('{"client_id":"x","creation_date":1,"transaction_value":"5"}', /found "5"/);
    bad('{"client_id":"x","creation_date":1,"hash":"zz"}', /field "hash": expected a 64-character lower-case hex hash or ""/);
    bad('{"client_id":"x","creation_date":1,"public_key":"xyz"}', /field "public_key": expected a hex public key/);
    bad('{"client_id":"x","creation_date":-1}', /field "creation_date": expected an integer between 0/);
    bad('{"client_id":"x"}', /field "creation_date": expected an integer, found nothing/);
    bad("[1]", /field "\(root\)": expected a JSON object, found a list of 1/);
    bad("{", /transaction is not valid JSON/);
  });
});

describe("admission checks (reference order and codes)", () => {
  for (const schemeName of ["bls0chain", "ed25519"]) {
    const scheme = (): SignatureScheme => getScheme(schemeName);
    const ctx = (registered?: [string, string], extra: object = {}) => ({
      chainId: CHAIN,
      nowSec: 1_700_000_010,
      scheme: scheme(),
      registeredKey: (id: string) => (registered && id === registered[0] ? registered[1] : undefined),
      ...extra,
    });
    const signed = (o: Partial<Transaction> = {}) => {
      const w = createWallet(scheme());
      const t = signTransaction(
        txn({ client_id: w.client_id, public_key: w.client_key, ...o }),
        scheme(),
        w.keys[0]!.private_key,
      );
      return { w, t };
    };
    const refuse = (t: Transaction, code: string, re?: RegExp, c = ctx()) =>
      assert.throws(() => validateTransaction(t, c), coded(code, re), `${schemeName}: expected ${code}`);

    it(`${schemeName}: a good transaction passes with its own key or the registered one`, () => {
      const { w, t } = signed();
      assert.equal(validateTransaction(t, ctx()), w.client_key);
      const { public_key: _omit, ...noKey } = t;
      assert.equal(validateTransaction(noKey, ctx([w.client_id, w.client_key])), w.client_key);
      refuse(noKey, "put transaction error", new RegExp(`client ${w.client_id} doesn't exist, please register`));
      // a public key that is not the sender's does not count: the registered key is used
      const other = createWallet(scheme());
      refuse({ ...t, public_key: other.client_key }, "put transaction error");
      // a scheme lookup by key
      assert.equal(validateTransaction(t, ctx(undefined, { scheme: () => scheme() })), w.client_key);
      refuse(t, "invalid_signature", /Invalid Signature/, ctx(undefined, { scheme: () => undefined }));
    });

    it(`${schemeName}: each refusal with its code and message`, () => {
      refuse(signed({ transaction_value: -1n }).t, "invalid_value", /value must be greater than or equal to zero \(found -1\)/);
      refuse(signed({ to_client_id: "xyz" }).t, "invalid_request", /to client id must be a hexadecimal hash \(found "xyz"\)/);
      refuse(signed({ transaction_fee: -5n }).t, "invalid_request", /fee must be greater than or equal to zero/);
      refuse(signed({ chain_id: sha3("other") }).t, "invalid_chain", /is not supported by this server/);
      refuse(
        signed({ creation_date: 1_700_000_010 - 31 }).t,
        "past_transaction",
        /Transaction creation time not within tolerance: ts=1700000010 txn\.creation_date=1699999979 \(31 s in the past/,
      );
      refuse(signed({ creation_date: 1_700_000_010 + 31 }).t, "future_transaction", /31 s in the future/);
      assert.doesNotThrow(() => validateTransaction(signed({ creation_date: 1_700_000_010 - 30 }).t, ctx()));
      assert.doesNotThrow(() => validateTransaction(signed({ creation_date: 1_700_000_010 + 30 }).t, ctx()));
      refuse(
        signed({ transaction_data: "x".repeat(98_305) }).t,
        "txn_exceed_max_payload",
        /transaction payload exceeds the max payload \(98304\): transaction_data is 98305 bytes/,
      );
      assert.doesNotThrow(() => validateTransaction(signed({ transaction_data: "x".repeat(98_304) }).t, ctx()));
      refuse(signed({ transaction_type: 7 }).t, "invalid_request", /unknown transaction type 7/);
      const same = signed();
      const self = signTransaction({ ...same.t, to_client_id: same.w.client_id }, scheme(), same.w.keys[0]!.private_key);
      refuse(self, "invalid_request", /from and to client should be different/);
      refuse(
        { ...signed().t, transaction_value: 5n, hash: sha3("not the hash") },
        "hash_mismatch",
        /The hash of the data doesn't match with the provided hash/,
      );
      refuse({ ...signed().t, signature: signed().t.signature }, "invalid_signature");
      refuse({ ...signed().t, hash: "" }, "hash_missing", /hash required for transaction/);
      refuse(
        { ...signed().t, transaction_output: "x", txn_output_hash: sha3("y") },
        "hash_mismatch",
        /The hash of the output doesn't match/,
      );
      assert.doesNotThrow(() =>
        validateTransaction({ ...signed().t, transaction_output: "x", txn_output_hash: sha3("x") }, ctx()),
      );
    });
  }

  for (const schemeName of ["bls0chain", "ed25519"]) {
    it(`${schemeName}: a signed transaction altered afterwards (fee, type, value, chain) is refused with invalid_signature`, () => {
      const scheme = getScheme(schemeName);
      const w = createWallet(scheme);
      const c = { chainId: CHAIN, nowSec: 1_700_000_000, scheme, registeredKey: () => undefined };
      const t = signTransaction(
        txn({ client_id: w.client_id, public_key: w.client_key, transaction_fee: 0n, transaction_type: 0 }),
        scheme,
        w.keys[0]!.private_key,
      );
      assert.doesNotThrow(() => validateTransaction(t, c));
      const altered: Partial<Transaction>[] = [
        { transaction_fee: 99_999_999_999n },
        { transaction_type: 10 },
        { transaction_value: t.transaction_value + 1n },
        { transaction_data: "other" },
      ];
      for (const a of altered) {
        assert.throws(
          () => validateTransaction({ ...t, ...a }, c),
          coded("invalid_signature", /altered after signing/),
          JSON.stringify(a, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
        );
        // re-hashing after the change does not help: the signature is over the original hash
        const rehashed = { ...t, ...a };
        assert.throws(() => validateTransaction({ ...rehashed, hash: transactionHash(rehashed) }, c), coded("invalid_signature"));
      }
      // replay on another chain: that chain refuses it (its id is in the signed hash)
      const other = { ...c, chainId: sha3("other chain") };
      assert.throws(() => validateTransaction({ ...t, chain_id: other.chainId }, other), coded("invalid_signature"));
    });
  }

  it("checks in the reference order: payload first, then value, then chain", () => {
    const t = txn({ transaction_data: "x".repeat(100_000), transaction_value: -1n, chain_id: "other", hash: "" });
    const c = { chainId: CHAIN, nowSec: 1_700_000_000, scheme: getScheme("ed25519"), registeredKey: () => undefined };
    assert.throws(() => validateTransaction(t, c), coded("txn_exceed_max_payload"));
    assert.throws(() => validateTransaction({ ...t, transaction_data: "" }, c), coded("invalid_value"));
    assert.throws(() => validateTransaction({ ...t, transaction_data: "", transaction_value: 0n }, c), coded("invalid_chain"));
    assert.throws(
      () => validateTransaction({ ...t, transaction_data: "", transaction_value: 0n, chain_id: CHAIN }, c),
      coded("hash_missing"),
    );
  });

  it("enforces a minimum fee except for the reference's exempt smart-contract functions", () => {
    const scheme = getScheme("ed25519");
    const w = createWallet(scheme);
    const c = { chainId: CHAIN, nowSec: 1_700_000_000, scheme, registeredKey: () => undefined, minFee: 100n };
    const mk = (o: Partial<Transaction>) =>
      signTransaction(txn({ client_id: w.client_id, public_key: w.client_key, ...o }), scheme, w.keys[0]!.private_key);
    assert.throws(
      () => validateTransaction(mk({ transaction_fee: 99n }), c),
      coded("invalid_request", /less than the minimum required fee/),
    );
    assert.doesNotThrow(() => validateTransaction(mk({ transaction_fee: 100n }), c));
    const exempt = mk({ transaction_type: 1000, transaction_data: '{"name":"add_miner","input":{}}', transaction_value: 0n });
    assert.doesNotThrow(() => validateTransaction(exempt, c));
    const notExempt = mk({ transaction_type: 1000, transaction_data: '{"name":"pour","input":{}}', transaction_value: 0n });
    assert.throws(() => validateTransaction(notExempt, c), coded("invalid_request"));
  });
});
