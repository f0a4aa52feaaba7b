/**
 * Network discovery: the miners and sharders a client talks to, from network.yaml or the block worker's
 * `/network` answer; and a node's id from its `whoami` page.
 */

import { ChainRoutes, routeUrl } from "../../chain/api.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import type { ChainClient, NetworkNodes } from "../chain.js";
import type { SdkErrorCode } from "../errors.js";
import { remoteErrorOf, replyError } from "../multi.js";
import type { Transport } from "../transport.js";

/** Miners and sharders: network.yaml when it lists them, else `GET <block_worker>/network` (not cached here). */
export async function discoverNetwork(client: ChainClient): Promise<NetworkNodes> {
  const o = client.opts.network;
  let miners = o?.miners ?? [];
  let sharders = o?.sharders ?? [];
  if (miners.length === 0 || sharders.length === 0) {
    const url = routeUrl(client.opts.blockWorker, ChainRoutes.network);
    let res: Awaited<ReturnType<Transport["request"]>>;
    try {
      res = await client.opts.transport.request({ method: "GET", url, timeoutMs: 10_000 });
    } catch (err) {
      throw new CodedError<SdkErrorCode>(
        { code: "network_unreachable", op: "discover network", node: client.opts.blockWorker },
        `block worker unreachable: ${errorMessage(err)}`,
        { cause: err },
      );
    }
    if (res.status !== 200) {
      throw new CodedError<SdkErrorCode>(
        { code: "network_unreachable", op: "discover network", node: client.opts.blockWorker },
        `block worker ${url} answered HTTP ${res.status}: ${replyError({ status: res.status, body: res.text() })}`,
      );
    }
    let j: { miners?: unknown; sharders?: unknown };
    try {
      j = res.json();
    } catch (err) {
      throw new CodedError<SdkErrorCode>(
        { code: "network_invalid", op: "discover network", node: client.opts.blockWorker },
        `block worker ${url} returned invalid JSON`,
        { cause: err },
      );
    }
    const list = (v: unknown, what: string): string[] => {
      if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
        throw new CodedError<SdkErrorCode>(
          { code: "network_invalid", op: "discover network", node: client.opts.blockWorker },
          `block worker ${url}: "${what}" is not a list of URLs`,
        );
      }
      return (v as string[]).map((u) => u.replace(/\/+$/, ""));
    };
    if (miners.length === 0) miners = list(j.miners, "miners");
    if (sharders.length === 0) sharders = list(j.sharders, "sharders");
  }
  if (miners.length === 0)
    throw new CodedError<SdkErrorCode>(
      { code: "network_empty", op: "discover network", node: client.opts.blockWorker },
      "the network has no miners",
    );
  if (sharders.length === 0)
    throw new CodedError<SdkErrorCode>(
      { code: "network_empty", op: "discover network", node: client.opts.blockWorker },
      "the network has no sharders",
    );
  return { miners, sharders };
}

/** Node id from `GET <url>/_nh/whoami` (`type,host,port,id,public_key`). */
export async function whoami(client: ChainClient, url: string): Promise<string> {
  const target = routeUrl(url, ChainRoutes.whoami);
  let res: Awaited<ReturnType<Transport["request"]>>;
  try {
    res = await client.opts.transport.request({ method: "GET", url: target, timeoutMs: 10_000 });
  } catch (err) {
    throw new CodedError<SdkErrorCode>(
      { code: "id_not_found", op: "get node id", node: url },
      `ID not found: ${target}: ${errorMessage(err)}`,
      { cause: err },
    );
  }
  if (res.status !== 200) {
    const remote = remoteErrorOf(url, res.status, res.text());
    throw new CodedError<SdkErrorCode>(
      { code: "id_not_found", op: "get node id", node: url, remote },
      `ID not found: ${target}: HTTP ${res.status}: ${remote.error}`,
    );
  }
  const text = res.text();
  const id = text.trim().split(",")[3];
  if (!id || !/^[0-9a-f]{64}$/.test(id))
    throw new CodedError<SdkErrorCode>(
      { code: "id_not_found", op: "get node id", node: url },
      `ID not found: ${target} answered "${text.slice(0, 80)}"`,
    );
  return id;
}
