// The sdk's ambient edges and coded failures: an abortable sleep, transport preflight, whoami's refusal, a blobber's
// refusal passed on with its cause.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { systemRandomBytes, systemSleep } from "../../src/sdk/ambient.js";
import { ChainClient } from "../../src/sdk/chain.js";
import { makeResponse, preflight } from "../../src/sdk/internal.js";
import { refused } from "../../src/sdk/storage/files/failures.js";
import type { Transport } from "../../src/sdk/transport.js";

describe("sdk ambient edges", () => {
  it("systemSleep ends when its signal aborts (a wait no longer needed holds nothing open)", async () => {
    const wake = new AbortController();
    const waiting = systemSleep(3_600_000, wake.signal);
    wake.abort();
    await waiting; // without the signal this would wait an hour and the test would time out
    await systemSleep(3_600_000, AbortSignal.abort()); // already aborted: at once
  });

  it("systemRandomBytes draws the bytes asked for", () => {
    assert.equal(systemRandomBytes(16).length, 16);
  });
});

describe("sdk coded failures", () => {
  it("preflight refuses a URL that is not http(s) with request_failed", () => {
    assert.throws(
      () => preflight({ method: "GET", url: "ftp://127.0.0.1/x" }, false, 1000),
      (err: unknown) =>
        err instanceof CodedError && err.code === "request_failed" && /unsupported protocol ftp:/.test(err.message),
    );
    assert.throws(
      () => preflight({ method: "GET", url: "not a url" }, false, 1000),
      (err: unknown) => err instanceof CodedError && err.code === "request_failed" && err.cause instanceof TypeError,
    );
  });

  it("whoami: a node's refusal is id_not_found with the node's own body kept", async () => {
    const transport: Transport = {
      request: async () =>
        makeResponse(503, {}, new TextEncoder().encode(JSON.stringify({ code: "node_busy", error: "node_busy: later" }))),
    };
    const client = new ChainClient({ blockWorker: "http://bw", chainId: "c", transport, scheme: {} as never });
    await assert.rejects(client.whoami("http://n1"), (err: unknown) => {
      assert.ok(err instanceof CodedError);
      assert.equal(err.code, "id_not_found");
      assert.equal(err.remote?.code, "node_busy");
      assert.equal(err.remote?.status, 503);
      assert.match(err.message, /HTTP 503: node_busy: later/);
      return true;
    });
  });

  it("a blobber's refusal passed on keeps its code, node, remote body and the refusal as cause", () => {
    const r = new CodedError<"duplicate_file">(
      {
        code: "duplicate_file",
        op: "upload",
        node: "http://b1",
        remote: { node: "http://b1", status: 400, code: "duplicate_file", error: "x" },
      },
      "blobber http://b1: duplicate_file: /a exists",
    );
    const e = refused(r as never, "upload");
    assert.equal(e.code, "duplicate_file");
    assert.equal(e.node, "http://b1");
    assert.equal(e.remote?.code, "duplicate_file");
    assert.equal(e.cause, r);
    assert.equal(e.message, r.message);
  });
});
