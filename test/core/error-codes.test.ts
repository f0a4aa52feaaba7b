/**
 * The error-code catalogues: one naming style (lower snake_case) except the reference spellings clients see,
 * no duplicates, and — checked by the compiler, since tests compile with the sources — a code outside the
 * catalogues does not compile.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CHAIN_ERROR_CODES, CHAIN_REFERENCE_SPELLINGS, chainError } from "../../src/chain/errors.js";
import {
  COMMON_CONTRACT_ERROR_CODES,
  CONTRACT_REFERENCE_SPELLINGS,
  contractError,
  FAUCET_ERROR_CODES,
  INTEREST_ERROR_CODES,
  MINER_SC_ERROR_CODES,
  MULTISIG_ERROR_CODES,
  STORAGE_SC_ERROR_CODES,
  VESTING_ERROR_CODES,
} from "../../src/contracts/errors.js";
import { CORE_ERROR_CODES, CodedError, codedError, coreError } from "../../src/core/errors.js";
import { LOCALNET_ERROR_CODES } from "../../src/localnet/errors.js";
import { NODE_ERROR_CODES } from "../../src/nodes/errors.js";
import { SDK_ERROR_CODES, sdkError } from "../../src/sdk/index.js";
import { STORAGE_ERROR_CODES, storageError } from "../../src/storage/errors.js";

const catalogues: Record<string, readonly string[]> = {
  core: CORE_ERROR_CODES,
  chain: CHAIN_ERROR_CODES,
  storage: STORAGE_ERROR_CODES,
  "contracts (common)": COMMON_CONTRACT_ERROR_CODES,
  faucet: FAUCET_ERROR_CODES,
  interest: INTEREST_ERROR_CODES,
  vesting: VESTING_ERROR_CODES,
  multisig: MULTISIG_ERROR_CODES,
  "miner sc": MINER_SC_ERROR_CODES,
  "storage sc": STORAGE_SC_ERROR_CODES,
  nodes: NODE_ERROR_CODES,
  sdk: SDK_ERROR_CODES,
  localnet: LOCALNET_ERROR_CODES,
};

const referenceSpellings = new Set<string>([...CHAIN_REFERENCE_SPELLINGS, ...CONTRACT_REFERENCE_SPELLINGS]);

describe("error code catalogues", () => {
  it("use lower snake_case, except the reference spellings clients see", () => {
    const bad: string[] = [];
    for (const [domain, codes] of Object.entries(catalogues))
      for (const c of codes)
        if (!/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(c) && !referenceSpellings.has(c)) bad.push(`${domain}: ${c}`);
    assert.deepEqual(bad, []);
  });

  it("list each code once per domain, and core codes only in core", () => {
    const core = new Set<string>(CORE_ERROR_CODES);
    for (const [domain, codes] of Object.entries(catalogues)) {
      assert.equal(new Set(codes).size, codes.length, `${domain} lists a code twice`);
      if (domain !== "core" && domain !== "storage")
        assert.deepEqual(
          codes.filter((c) => core.has(c)),
          [],
          `${domain} repeats core codes`,
        );
    }
  });

  it("keeps the reference spellings in the catalogues", () => {
    for (const c of referenceSpellings)
      assert.ok(
        Object.values(catalogues).some((codes) => codes.includes(c)),
        c,
      );
  });

  it("builds errors of each domain with the wire form {code, error}", () => {
    assert.deepEqual(chainError("invalid_chain", "put transaction", "wrong chain").toJSON(), {
      code: "invalid_chain",
      error: "invalid_chain: wrong chain",
    });
    assert.equal(contractError("failed locking tokens", "interest", "too little").code, "failed locking tokens");
    assert.equal(storageError("duplicate_file", "upload", "exists").code, "duplicate_file");
    assert.equal(
      sdkError("submit_failed", "submit transaction", "no", { node: "m1" }).describe(),
      "submit transaction failed on m1: no",
    );
    assert.equal(coreError("invalid_amount", "parse tokens", "x").code, "invalid_amount");
    assert.equal(codedError("invalid_request", "bad").code, "invalid_request");
  });

  it("keeps a remote node's answer", () => {
    const remote = { node: "http://s1", status: 404, code: "resource_not_found", error: "resource_not_found: value not present" };
    const e = new CodedError({ code: "query_failed", op: "get balance", node: "http://s1", remote }, "value not present");
    assert.deepEqual(e.remote, remote);
  });

  it("refuses, at compile time, codes outside the catalogues", () => {
    // each line below must fail to compile (tsc reports an unused @ts-expect-error otherwise)
    // @ts-expect-error: not a code of any catalogue
    new CodedError({ code: "no_such_code" }, "x");
    // @ts-expect-error: not a code of any catalogue
    codedError("value not present", "x");
    // @ts-expect-error: a contract's code is not the chain's
    chainError("broke", "x", "y");
    // @ts-expect-error: a chain code is not the storage protocol's
    storageError("invalid_chain", "x", "y");
    // @ts-expect-error: a node's code is not the sdk's
    sdkError("kv_closed", "x", "y");
    assert.ok(true);
  });
});
