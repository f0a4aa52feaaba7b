// Node base URLs with a path prefix (`https://domain/miner0` behind an ingress): joining a route keeps the prefix,
// with or without a trailing slash.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ChainRoutes, routeUrl } from "../../src/chain/api.js";
import { joinUrl } from "../../src/sdk/multi.js";

describe("URLs with a path prefix", () => {
  it("routeUrl and joinUrl keep the base's path", () => {
    assert.equal(routeUrl("https://cairn.example.com/dns", ChainRoutes.network), "https://cairn.example.com/dns/network");
    assert.equal(routeUrl("https://cairn.example.com/dns/", ChainRoutes.network), "https://cairn.example.com/dns/network");
    assert.equal(joinUrl("http://127.0.0.1:8080/blobber1/", "/v1/file/list/x"), "http://127.0.0.1:8080/blobber1/v1/file/list/x");
    assert.equal(joinUrl("http://127.0.0.1:8080/sharder1", "v1/block/get"), "http://127.0.0.1:8080/sharder1/v1/block/get");
  });
});
