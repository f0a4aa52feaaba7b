/**
 * The Secret `cairn-network-config` every pod mounts at /cairn/config: the genesis (magic block, initial
 * balances, sc.yaml), one folder per pod (`blockworker/`, `sharder-0/`, `miner-0/`, … with node.yaml and keys;
 * `blobber-0/`, … with the blobber's and validator's keys and `config/` yaml files) and `zcn/config.yaml` for the
 * CLIs. The files themselves are made by the caller (`cairn-deploy` wires the local network's generator) with each
 * node's in-cluster address: `<pod>.<service>.<namespace>.svc.cluster.local`.
 */
import { parse as yamlParse, stringify as yamlStringify } from "yaml";
import type { DeployInput } from "./input.js";
import type { Manifest } from "./manifests.js";

export const CONFIG_SECRET = "cairn-network-config";

/** What the network's files generator is asked for. */
export interface NetworkFilesRequest {
  miners: number;
  sharders: number;
  blobbers: number;
  /** Address of a pod by its folder name: `blockworker`, `sharder-0`, `miner-0`, `blobber-0`. */
  hostOf: (pod: string) => string;
}

/** Makes the network's files: relative path (`miner-0/node.yaml`, `genesis/magic_block.json`, …) → content. */
export type NetworkFilesGenerator = (req: NetworkFilesRequest) => Promise<Record<string, string>>;

/** What the standalone blobber's files generator is asked for (the input's `standalone` fields, read). */
export interface StandaloneFilesRequest {
  keys: { public_key: string; private_key: string };
  delegateId: string;
  readPrice: number;
  writePrice: number;
  capacity: number;
  /** The existing network's block worker: `https://<network_url>/dns`. */
  blockWorker: string;
  /** The pod's in-cluster address. */
  host: string;
}

/** Makes a standalone blobber's files (`blobber-0/keys.txt`, `validator_keys.txt`, `config/*.yaml`). */
export type StandaloneFilesGenerator = (req: StandaloneFilesRequest) => Promise<Record<string, string>>;

/** The in-cluster DNS name of a pod (`miner-0`) or of the block worker's service. */
export function podHost(input: DeployInput, pod: string): string {
  const ns = input.cluster_name;
  if (pod === "blockworker") return `blockworker.${ns}.svc.cluster.local`;
  const set = pod.replace(/-\d+$/, "");
  return `${pod}.${set}.${ns}.svc.cluster.local`;
}

/** A Secret key for a file path (keys may not hold `/`: `miner-0/node.yaml` → `miner-0__node.yaml`). */
export function secretKey(path: string): string {
  return path.replaceAll("/", "__");
}

/**
 * The Secret holding `files`, and the volume that mounts it with the folder layout restored
 * (`items`: key → path), readable by the image's group (fsGroup 10001).
 */
export function networkConfigSecret(
  input: DeployInput,
  files: Record<string, string>,
): { secret: Manifest; volume: Record<string, unknown> } {
  const paths = Object.keys(files).sort();
  return {
    secret: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: CONFIG_SECRET, namespace: input.cluster_name, labels: { "app.kubernetes.io/part-of": "cairn" } },
      type: "Opaque",
      stringData: Object.fromEntries(paths.map((p) => [secretKey(p), files[p] as string])),
    },
    volume: {
      name: "config",
      secret: { secretName: CONFIG_SECRET, defaultMode: 0o440, items: paths.map((p) => ({ key: secretKey(p), path: p })) },
    },
  };
}

/**
 * The network's files for `input` (standalone: the one blobber's, from its operator's keys, when `standalone` is
 * given; none otherwise), with the
 * client-facing addresses of {@link withPublicUrls} and, given `dashboardLogin` (an htpasswd line), the blobbers'
 * dashboard pages behind that login.
 */
export async function networkFiles(
  input: DeployInput,
  generate: NetworkFilesGenerator,
  dashboardLogin?: string,
  standalone?: StandaloneFilesGenerator,
): Promise<Record<string, string>> {
  let files: Record<string, string>;
  let blobbers = input.blobber_count;
  if (input.standalone) {
    if (!standalone) return {};
    const s = input.standalone;
    files = await standalone({
      keys: { public_key: s.public_key, private_key: s.private_key },
      delegateId: s.blobber_delegate_ID,
      readPrice: Number(s.read_price),
      writePrice: Number(s.write_price),
      capacity: Number(s.capacity),
      blockWorker: `https://${s.network_url}/dns`,
      host: podHost(input, "blobber-0"),
    });
    blobbers = 1;
  } else
    files = await generate({
      miners: input.miner_count,
      sharders: input.sharder_count,
      blobbers: input.blobber_count,
      hostOf: (pod) => podHost(input, pod),
    });
  const out = withPublicUrls({ ...input, blobber_count: blobbers }, files);
  if (dashboardLogin !== undefined)
    for (let i = 0; i < blobbers; i++) {
      // the blobber's dashboard pages ask for the deployment's login (its htpasswd line)
      const key = `blobber-${i}/config/0chain_blobber.yaml`;
      const text = out[key];
      if (text !== undefined) out[key] = `${text.replace(/\n*$/, "\n")}dashboard_login: ${JSON.stringify(dashboardLogin)}\n`;
    }
  return out;
}

/**
 * Client-facing addresses through the ingress (`https://<host_address>/<role><i>`, the paths of `nodeRoutes`):
 * the block worker's `public_urls` (by each miner's and sharder's in-cluster host) and every blobber's and
 * validator's `public_url`. The nodes still reach each other at their in-cluster addresses.
 */
export function withPublicUrls(input: DeployInput, files: Record<string, string>): Record<string, string> {
  const out = { ...files };
  const base = `https://${input.host_address}`;
  const bw = out["blockworker/node.yaml"];
  if (bw !== undefined) {
    const publicUrls: Record<string, string> = {};
    for (const [role, n] of [
      ["miner", input.miner_count],
      ["sharder", input.sharder_count],
    ] as const)
      for (let i = 0; i < n; i++) publicUrls[podHost(input, `${role}-${i}`)] = `${base}/${role}${i}`;
    out["blockworker/node.yaml"] = yamlStringify({ ...(yamlParse(bw) as object), public_urls: publicUrls });
  }
  for (let i = 0; i < input.blobber_count; i++)
    for (const [file, path] of [
      ["0chain_blobber.yaml", `blobber${i}`],
      ["0chain_validator.yaml", `validator${i}`],
    ] as const) {
      const key = `blobber-${i}/config/${file}`;
      const text = out[key];
      if (text !== undefined) out[key] = `${text.replace(/\n*$/, "\n")}public_url: ${base}/${path}\n`;
    }
  return out;
}

/** Where `cairn-deploy` writes the users' CLI config under `--out` (a folder, so `kubectl apply -f <out>` skips it). */
export const USER_CONFIG_PATH = "zcn/config.yaml";

/** The block worker's URL for clients outside the cluster: through the ingress's `/dns` path. */
export function externalBlockWorker(input: DeployInput): string {
  return `https://${input.host_address}/dns`;
}

/**
 * The CLIs' `config.yaml` for users outside the cluster: the Secret's `zcn/config.yaml` (which the pods use, naming
 * the in-cluster block worker) with `block_worker` set to {@link externalBlockWorker}; everything else (signature
 * scheme, chain id, confirmation settings) kept. Undefined when there is no Secret's config (standalone mode).
 */
export function userClientConfig(input: DeployInput, files: Record<string, string>): string | undefined {
  const inCluster = files["zcn/config.yaml"];
  if (inCluster === undefined) return undefined;
  const line = `block_worker: ${externalBlockWorker(input)}`;
  return /^block_worker:.*$/m.test(inCluster)
    ? inCluster.replace(/^block_worker:.*$/m, line)
    : `${line}\n${inCluster.replace(/^\n+/, "")}`;
}
