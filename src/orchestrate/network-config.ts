/**
 * The Secret `cairn-network-config` every pod mounts at /cairn/config: the genesis (magic block, initial
 * balances, sc.yaml), one folder per pod (`blockworker/`, `sharder-0/`, `miner-0/`, … with node.yaml and keys;
 * `blobber-0/`, … with the blobber's and validator's keys and `config/` yaml files) and `zcn/config.yaml` for the
 * CLIs. The files themselves are made by the caller (`cairn-deploy` wires the local network's generator) with each
 * node's in-cluster address: `<pod>.<service>.<namespace>.svc.cluster.local`.
 */
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

/** The network's files for `input` (none in standalone mode: that blobber's operator brings its keys). */
export async function networkFiles(input: DeployInput, generate: NetworkFilesGenerator): Promise<Record<string, string>> {
  if (input.standalone) return {};
  return generate({
    miners: input.miner_count,
    sharders: input.sharder_count,
    blobbers: input.blobber_count,
    hostOf: (pod) => podHost(input, pod),
  });
}
