/**
 * The real-process storage network of the e2e stories (test/e2e/{challenges,adversary}.test.ts): the layout of
 * `npm start` with block worker, 1 sharder, 1 miner and 2 blobbers with their validators, each a process on free
 * loopback ports, the providers registered and staked. `edit` changes the written files (sc.yaml, blobber
 * configs) before any node starts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createLocalnetLayout, type LocalnetLayout, portOffsets } from "../../src/localnet/layout.js";
import { findFreeBase } from "../../src/localnet/ports.js";
import { type RunningNode, startNode, stopNodes, waitReady } from "../../src/localnet/processes.js";
import { registerAndStake } from "../../src/localnet/providers.js";
import * as sdk from "../../src/sdk/index.js";
import { BlobberPages } from "../../src/storage/api.js";
import { json } from "./poll.js";

export interface StorageLocalnet {
  dir: string;
  layout: LocalnetLayout;
  /** Every running node (a test restarting one replaces its entry). */
  nodes: RunningNode[];
  /** The CLIs' config directory. */
  cfg: string;
  sharder: string;
  logs: string;
  transport: sdk.HttpTransport;
  chain: sdk.ChainClient;
  /** A storage contract REST view through the sharder. */
  screst<T>(endpoint: string, q: Record<string, string>): Promise<T>;
  /** Stop every node and remove the directory. */
  close(): Promise<void>;
}

export async function startStorageLocalnet(
  prefix: string,
  edit: (layout: LocalnetLayout, dir: string) => void = () => {},
): Promise<StorageLocalnet> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const nodes: RunningNode[] = [];
  const transport = new sdk.HttpTransport();
  const close = async () => {
    await transport.close();
    await stopNodes(nodes);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const basePort = await findFreeBase({ offsets: [...portOffsets(1, 1, 2), 99] });
    const layout = await createLocalnetLayout(dir, {
      miners: 1,
      sharders: 1,
      blobbers: 2,
      basePort,
      softTimeout: "1s",
      proposalWait: "50ms",
    });
    edit(layout, dir);
    const sharder = layout.sharders[0]?.url ?? "";
    const logs = join(dir, "logs");
    const bw = startNode(layout.blockworker, logs);
    nodes.push(bw);
    await waitReady(bw, "/", 20_000);
    for (const n of [...layout.sharders, ...layout.miners]) nodes.push(startNode(n, logs));
    for (const n of nodes.slice(1)) await waitReady(n, "/_nh/whoami", 30_000);
    const providers = layout.providers ?? [];
    const first = nodes.length;
    for (const p of providers) nodes.push(startNode(p.validator, logs), startNode(p.blobber, logs));
    for (const n of nodes.slice(first)) await waitReady(n, BlobberPages.diagnosticsJson.path, 60_000);
    await initCrypto();
    const chain = new sdk.ChainClient({
      blockWorker: `${layout.blockworker.url}/dns`,
      chainId: layout.chainId,
      transport,
      scheme: getScheme("bls0chain"),
    });
    await registerAndStake(
      chain,
      providers.map((p) => ({ id: p.id, validatorId: p.validatorId, delegate: sdk.readWalletFile(p.delegateWalletFile) })),
      { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)), timeoutMs: 120_000 },
    );
    return {
      dir,
      layout,
      nodes,
      cfg: layout.clientConfigDir,
      sharder,
      logs,
      transport,
      chain,
      screst: <T>(endpoint: string, q: Record<string, string>) =>
        json<T>(`${sharder}/v1/screst/${sdk.ScAddress.storage}/${endpoint}?${new URLSearchParams(q)}`),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
