/**
 * `cairn-deploy --input <file> --out <dir> [--apply]`: read the deployment input, write the Kubernetes manifests
 * (one YAML file per object, in apply order), print the dashboard login (generated here, shown once), the DNS
 * records to create and how to verify; with `--apply`, apply them with the official Kubernetes client to the
 * cluster of `kubeconfig_path` (or the default kubeconfig).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stringify } from "yaml";
import { CodedError, errorMessage } from "../core/errors.js";
import type { OrchestrateErrorCode } from "./errors.js";
import { type DeployInput, parseDeployInput } from "./input.js";
import { buildManifests, dnsRecords, type Manifest, nodeRoutes } from "./manifests.js";
import {
  CONFIG_SECRET,
  externalBlockWorker,
  type NetworkFilesGenerator,
  networkConfigSecret,
  networkFiles,
  type StandaloneFilesGenerator,
  USER_CONFIG_PATH,
  userClientConfig,
} from "./network-config.js";

/** The network's Grafana dashboard in the repository (dist/src/orchestrate/ → deploy/monitoring/). */
export const GRAFANA_DASHBOARD = new URL("../../../deploy/monitoring/grafana-dashboard.json", import.meta.url);

/** An htpasswd line (`{SHA}` scheme, which nginx's basic auth accepts). */
export function htpasswdLine(user: string, password: string): string {
  return `${user}:{SHA}${createHash("sha1").update(password).digest("base64")}`;
}

/** Write `manifests` under `dir` as `NN-kind-name.yaml`; returns the file names. */
export function writeManifests(dir: string, manifests: Manifest[]): string[] {
  mkdirSync(dir, { recursive: true });
  return manifests.map((m, i) => {
    const name = `${String(i).padStart(2, "0")}-${m.kind.toLowerCase()}-${m.metadata.name}.yaml`;
    // the network-config Secret holds the nodes' private keys: readable by its owner only
    writeFileSync(join(dir, name), stringify(m), { mode: m.kind === "Secret" ? 0o600 : 0o644 });
    return name;
  });
}

/** What a Kubernetes API error says: the Status object's reason and message (ApiException's body), or the error. */
export function apiErrorReason(err: unknown): string {
  const raw = (err as { body?: unknown }).body;
  let body = raw;
  if (typeof raw === "string") {
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
  }
  const status = body as { reason?: unknown; message?: unknown; code?: unknown } | undefined;
  if (status && (typeof status.reason === "string" || typeof status.message === "string"))
    return [status.code, status.reason, status.message].filter((x) => x !== undefined && x !== "").join(" ");
  return errorMessage(err).split("\n")[0] ?? "";
}

/** `Kind namespace/name` of a manifest, as the apply lines name it. */
const objectName = (m: Manifest): string =>
  `${m.kind} ${m.metadata.namespace ? `${m.metadata.namespace}/` : ""}${m.metadata.name}`;

/**
 * Apply with @kubernetes/client-node (server-side apply: one PATCH per object creates it or updates it, so a
 * second apply of the same input updates instead of failing); loaded only when asked. A refused object stops the
 * apply, named with the server's reason.
 */
async function apply(input: DeployInput, manifests: Manifest[]): Promise<void> {
  const k8s = await import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  const cluster = (): string => kc.getCurrentCluster()?.server ?? "(none configured)";
  const fail = (what: string, err: unknown): CodedError<OrchestrateErrorCode> =>
    new CodedError<OrchestrateErrorCode>(
      { code: "deploy_apply_failed", op: "apply manifests" },
      `cluster ${cluster()}: ${what}: ${apiErrorReason(err)}`,
      {
        cause: err,
      },
    );
  let client: InstanceType<typeof k8s.KubernetesObjectApi>;
  try {
    if (input.kubeconfig_path) kc.loadFromFile(input.kubeconfig_path);
    else kc.loadFromDefault();
    client = k8s.KubernetesObjectApi.makeApiClient(kc);
  } catch (err) {
    throw fail(`kubeconfig ${input.kubeconfig_path || "(default)"}`, err);
  }
  for (const m of manifests) {
    try {
      await client.patch(
        structuredClone(m) as never,
        undefined,
        undefined,
        "cairn-deploy",
        true,
        k8s.PatchStrategy.ServerSideApply,
      );
    } catch (err) {
      throw fail(objectName(m), err);
    }
    console.log(`applied ${objectName(m)}`);
  }
}

/** `generate` makes the network's files (keys, genesis, node.yaml) for the network-config Secret. */
export async function main(
  argv: string[],
  generate: NetworkFilesGenerator,
  standalone?: StandaloneFilesGenerator,
): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const inputFile = arg("--input");
  const out = arg("--out");
  if (!inputFile || !out) {
    console.error("usage: cairn-deploy --input <deployment.json> --out <dir> [--apply]");
    process.exit(2);
  }
  try {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(inputFile, "utf8"));
    } catch (err) {
      throw new CodedError<OrchestrateErrorCode>(
        { code: "deploy_input_invalid", op: "read deployment input" },
        `${inputFile}: ${errorMessage(err)}`,
      );
    }
    const input = parseDeployInput(json);
    const password = randomBytes(18).toString("base64url");
    const files = await networkFiles(input, generate, htpasswdLine("admin", password), standalone);
    const config = Object.keys(files).length > 0 ? networkConfigSecret(input, files) : undefined;
    const manifests = buildManifests(input, password, htpasswdLine("admin", password), config, {
      ...(input.monitoring.grafana ? { grafanaDashboard: readFileSync(GRAFANA_DASHBOARD, "utf8") } : {}),
    });
    const written = writeManifests(out, manifests);
    // the users' CLI config (the nodes keep the Secret's, which names the in-cluster block worker)
    const userConfig = userClientConfig(input, files);
    const userConfigFile = join(out, USER_CONFIG_PATH);
    if (userConfig !== undefined) {
      mkdirSync(dirname(userConfigFile), { recursive: true });
      writeFileSync(userConfigFile, userConfig);
    }
    console.log(
      `Wrote ${written.length} manifests to ${out} (namespace ${input.cluster_name}, images ${input.repo_type}/*:${input.image_tag}).`,
    );
    if (config && input.standalone)
      console.log(
        `The Secret ${CONFIG_SECRET} holds the blobber's keys (and its validator's, made here) and yaml files naming https://${input.standalone.network_url}/dns: keep ${out} private.`,
      );
    else if (config)
      console.log(
        `The Secret ${CONFIG_SECRET} holds the network's keys, genesis and node.yaml files (${Object.keys(files).length} files): keep ${out} private.`,
      );
    else
      console.log(
        `Standalone: create the Secret ${CONFIG_SECRET} with blobber-0/keys.txt, validator_keys.txt and config/ yourself.`,
      );
    const monitored = input.monitoring.grafana || input.monitoring.elk || input.monitoring.rancher;
    if (config || monitored)
      console.log(
        `\nDashboards login (shown once; ${[config ? "the blobbers' dashboards" : "", monitored ? "Grafana, Kibana, Rancher as deployed, also in the Secret cairn-dashboards-login" : ""].filter((x) => x).join("; ")}): admin / ${password}`,
      );
    console.log("\nCreate these DNS records:");
    for (const r of dnsRecords(input)) console.log(`  ${r.name.padEnd(40)} ${r.type.padEnd(6)} ${r.value}`);
    if (argv.includes("--apply")) await apply(input, manifests);
    else console.log(`\nApply with: cairn-deploy --input ${inputFile} --out ${out} --apply   (or kubectl apply -f ${out})`);
    const first = nodeRoutes(input).find((r) => r.path.startsWith("/sharder") || r.path.startsWith("/blobber"));
    console.log(`\nVerify: https://${input.host_address}/dns/network lists the nodes;`);
    if (first) console.log(`        https://${input.host_address}${first.path}/_diagnostics shows a node's health.`);
    if (userConfig !== undefined)
      console.log(
        `        CLIs outside the cluster use ${userConfigFile} (block_worker: ${externalBlockWorker(input)}):\n` +
          `        copy it to ~/.zcn/config.yaml, or run zwallet/zbox with --configDir ${dirname(userConfigFile)}`,
      );
  } catch (err) {
    console.error(`cairn-deploy: ${errorMessage(err)}`);
    process.exit(1);
  }
}
