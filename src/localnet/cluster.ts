/**
 * A network's files for a cluster (`cairn-deploy`'s network-config Secret): the local network's layout made with
 * each node's in-cluster address, folders named after the pods (`miner1` → `miner-0`, `blobber1` → `blobber-0`,
 * whose validator shares the pod), chain data on the pod's data volume (/cairn/data).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parse as yamlParse, stringify as yamlStringify } from "yaml";
import * as sdk from "../sdk/index.js";
import { createLocalnetLayout } from "./layout.js";
import { blobberYaml, generateProviders, validatorYaml } from "./providers.js";

/** The pod a local network process runs in: `miner2` → `miner-1`, `validator1` → `blobber-0`. */
export function podOf(name: string): string {
  const m = /^(miner|sharder|blobber|validator)(\d+)$/.exec(name);
  if (!m) return name;
  return `${m[1] === "validator" ? "blobber" : m[1]}-${Number(m[2]) - 1}`;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** Relative path → content of every file a cluster's pods mount. */
export async function clusterNetworkFiles(req: {
  miners: number;
  sharders: number;
  blobbers: number;
  hostOf: (pod: string) => string;
}): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-cluster-"));
  try {
    await createLocalnetLayout(dir, {
      miners: req.miners,
      sharders: req.sharders,
      blobbers: req.blobbers,
      bind: "0.0.0.0",
      hostOf: (name) => req.hostOf(podOf(name)),
    });
    const out: Record<string, string> = {};
    for (const file of filesUnder(dir)) {
      const [top = "", ...rest] = relative(dir, file).split("/");
      if (top === "localnet.json") continue;
      const path = [podOf(top), ...rest].join("/");
      let text = readFileSync(file, "utf8");
      if (rest.join("/") === "node.yaml") text = yamlStringify({ ...(yamlParse(text) as object), data_dir: "/cairn/data" });
      out[path] = text;
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a standalone blobber (one blobber joining an existing network) is made of: the deployment input's fields. */
export interface StandaloneBlobberRequest {
  keys: { public_key: string; private_key: string };
  delegateId: string;
  /** Tokens per GB, as the yaml takes them. */
  readPrice: number;
  writePrice: number;
  capacity: number;
  /** The existing network's block worker (`https://<network_url>/dns`). */
  blockWorker: string;
  /** The pod's in-cluster address (the keys files' host line). */
  host: string;
}

/**
 * The files of a standalone blobber's pod (`blobber-0/`): keys.txt with the operator's keys, validator_keys.txt with
 * keys made here (a validator's stake pool is keyed by its own id), and the two yaml files naming the existing
 * network's block worker, the delegate wallet, the prices and the capacity.
 */
export async function standaloneBlobberFiles(req: StandaloneBlobberRequest): Promise<Record<string, string>> {
  const [gen] = await generateProviders(
    1,
    () => 5051,
    () => 5061,
  );
  if (!gen) throw new Error("no provider generated");
  const p = {
    ...gen,
    keys: req.keys,
    id: sdk.clientIdOf(req.keys.public_key),
    delegate: { ...gen.delegate, client_id: req.delegateId },
  };
  const blobber = {
    ...(yamlParse(blobberYaml(p, req.blockWorker, sdk.DEFAULT_CHAIN_ID)) as object),
    capacity: req.capacity,
    read_price: req.readPrice,
    write_price: req.writePrice,
  };
  return {
    "blobber-0/keys.txt": `${req.keys.public_key}\n${req.keys.private_key}\n${req.host}\n5051\n`,
    "blobber-0/validator_keys.txt": `${p.validatorKeys.public_key}\n${p.validatorKeys.private_key}\n${req.host}\n5061\n`,
    "blobber-0/config/0chain_blobber.yaml": yamlStringify(blobber),
    "blobber-0/config/0chain_validator.yaml": validatorYaml(p, req.blockWorker, sdk.DEFAULT_CHAIN_ID),
  };
}
