/**
 * Kubernetes manifests of a Cairn network from the deployment input: namespace = cluster_name; StatefulSets for
 * sharders, miners and blobbers (each blobber pod with its validator) with volumes of the storage class fs_type
 * names; the block worker; per-node Services and an Ingress for host_address routing `/<node>/` to each node
 * and `/dns/` to the block worker; the monitoring objects per the flags (monitoring.ts: Prometheus and Grafana,
 * Kibana with Elasticsearch and Fluent Bit, Rancher, each behind a login whose password is generated per deployment). Node configuration (keys, genesis,
 * node.yaml) is mounted from the Secret `cairn-network-config` (network-config.ts), folder per pod.
 */
import type { DeployInput } from "./input.js";
import { type MonitoringExtras, monitoringManifests } from "./monitoring.js";
import { CONFIG_SECRET } from "./network-config.js";

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
} & Record<string, unknown>;

/** Ports inside the pods (the local network's defaults). */
export const PORTS = {
  blockworker: 9091,
  miner: 7071,
  sharder: 7171,
  blobber: 5051,
  validator: 5061,
  grafana: 3000,
  prometheus: 9090,
};

/** The validator's log file in a blobber pod (`--log_dir`, the file name the validator writes). */
export const VALIDATOR_LOG = "/cairn/data/validator/log/0chainValidator.log";

function image(input: DeployInput, name: string): string {
  return `${input.repo_type}/${name}:${input.image_tag}`;
}

function labels(role: string, input: DeployInput): Record<string, string> {
  return { "app.kubernetes.io/name": role, "app.kubernetes.io/part-of": "cairn", "cairn.network/image-tag": input.image_tag };
}

function probe(path: string, port: number): Record<string, unknown> {
  return { httpGet: { path, port }, initialDelaySeconds: 10, periodSeconds: 15, timeoutSeconds: 5, failureThreshold: 4 };
}

function nodeContainer(name: string, img: string, port: number, args: string[], health: string): Record<string, unknown> {
  return {
    name,
    image: img,
    args,
    ports: [{ name: "http", containerPort: port }],
    volumeMounts: [
      { name: "data", mountPath: "/cairn/data" },
      { name: "config", mountPath: "/cairn/config", readOnly: true },
    ],
    readinessProbe: probe(health, port),
    livenessProbe: probe(health, port),
    resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "2Gi" } },
    securityContext: { runAsNonRoot: true, runAsUser: 10001, allowPrivilegeEscalation: false },
  };
}

function statefulSet(
  input: DeployInput,
  role: string,
  replicas: number,
  containers: Record<string, unknown>[],
  storage: string,
  configVolume: Record<string, unknown>,
): Manifest {
  const ns = input.cluster_name;
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: role, namespace: ns, labels: labels(role, input) },
    spec: {
      serviceName: role,
      replicas,
      podManagementPolicy: "Parallel",
      selector: { matchLabels: { "app.kubernetes.io/name": role } },
      template: {
        metadata: {
          labels: labels(role, input),
          annotations: { "prometheus.io/scrape": "true", "prometheus.io/path": "/metrics" },
        },
        spec: {
          securityContext: { fsGroup: 10001 },
          containers,
          volumes: [configVolume],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            storageClassName: input.fs_type,
            resources: { requests: { storage } },
          },
        },
      ],
    },
  };
}

function service(
  ns: string,
  name: string,
  selector: Record<string, string>,
  ports: [string, number][],
  headless = false,
): Manifest {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns },
    spec: {
      ...(headless ? { clusterIP: "None" } : {}),
      selector,
      ports: ports.map(([n, p]) => ({ name: n, port: p, targetPort: p })),
    },
  };
}

/** Every node of the network: its path under the domain, service name and port. */
export function nodeRoutes(input: DeployInput): { path: string; service: string; port: number }[] {
  const out: { path: string; service: string; port: number }[] = [
    { path: "/dns", service: "blockworker", port: PORTS.blockworker },
  ];
  const add = (role: string, n: number, port: number, svcRole = role) => {
    for (let i = 0; i < n; i++) out.push({ path: `/${role}${i}`, service: `${svcRole}-${i}`, port });
  };
  add("sharder", input.sharder_count, PORTS.sharder);
  add("miner", input.miner_count, PORTS.miner);
  const blobbers = input.standalone ? 1 : input.blobber_count;
  add("blobber", blobbers, PORTS.blobber);
  add("validator", blobbers, PORTS.validator, "blobber-validator");
  return out;
}

/**
 * The manifests, with the generated dashboard password (printed once by `cairn-deploy`) and, when given, the
 * network-config Secret and the volume mounting it (network-config.ts).
 */
export function buildManifests(
  input: DeployInput,
  dashboardPassword: string,
  htpasswd: string,
  config?: { secret: Manifest; volume: Record<string, unknown> },
  extras: MonitoringExtras = {},
): Manifest[] {
  const ns = input.cluster_name;
  // the config volume of every pod: the network-config Secret with its folder layout (or all of it, as is)
  const configVolume = config?.volume ?? { name: "config", secret: { secretName: CONFIG_SECRET } };
  const out: Manifest[] = [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels: { "app.kubernetes.io/part-of": "cairn" } } },
  ];
  if (config) out.push(config.secret);
  const standalone = input.standalone !== undefined;
  if (input.deploy_main && !standalone) {
    out.push({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "blockworker", namespace: ns, labels: labels("blockworker", input) },
      spec: {
        replicas: 1,
        selector: { matchLabels: { "app.kubernetes.io/name": "blockworker" } },
        template: {
          metadata: { labels: labels("blockworker", input), annotations: { "prometheus.io/scrape": "true" } },
          spec: {
            containers: [
              nodeContainer(
                "blockworker",
                image(input, "blockworker"),
                PORTS.blockworker,
                ["--config", "/cairn/config/blockworker/node.yaml"],
                "/",
              ),
            ],
            volumes: [configVolume, { name: "data", emptyDir: {} }],
          },
        },
      },
    });
    out.push(service(ns, "blockworker", { "app.kubernetes.io/name": "blockworker" }, [["http", PORTS.blockworker]]));
    for (const [role, count, port] of [
      ["sharder", input.sharder_count, PORTS.sharder],
      ["miner", input.miner_count, PORTS.miner],
    ] as const) {
      // each pod reads /cairn/config/<pod name>/node.yaml (sharder-0/node.yaml, …); the image's entrypoint names the role
      const c = nodeContainer(
        role,
        image(input, role),
        port,
        ["--config", "/cairn/config/$(POD_NAME)/node.yaml"],
        "/_diagnostics",
      );
      c.env = [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }];
      out.push(statefulSet(input, role, count, [c], role === "sharder" ? "50Gi" : "10Gi", configVolume));
      out.push(service(ns, role, { "app.kubernetes.io/name": role }, [["http", port]], true));
    }
  }
  const blobbers = standalone ? 1 : input.blobber_count;
  if ((input.deploy_auxiliary || standalone) && blobbers > 0) {
    const flags = (port: number) => [
      "--port",
      String(port),
      "--hostname",
      `$(POD_NAME).blobber.${ns}.svc.cluster.local`,
      "--config_dir",
      "/cairn/config/$(POD_NAME)/config",
    ];
    const blobber = nodeContainer(
      "blobber",
      image(input, "blobber"),
      PORTS.blobber,
      [
        ...flags(PORTS.blobber),
        "--keys_file",
        "/cairn/config/$(POD_NAME)/keys.txt",
        "--files_dir",
        "/cairn/data/files",
        "--db_dir",
        "/cairn/data/db",
      ],
      "/_diagnostics",
    );
    const validator = nodeContainer(
      "validator",
      image(input, "validator"),
      PORTS.validator,
      // the validator keeps its state beside its log folder (<log_dir>/../validator_data), on the data volume
      [
        ...flags(PORTS.validator),
        "--keys_file",
        "/cairn/config/$(POD_NAME)/validator_keys.txt",
        "--log_dir",
        VALIDATOR_LOG.replace(/\/[^/]*$/, ""),
      ],
      "/_diagnostics",
    );
    for (const c of [blobber, validator]) c.env = [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }];
    // the validator logs to its file (its state lives beside the log folder): a sidecar streams it to stdout, where
    // the cluster's log shipper (monitoring.ts: Fluent Bit) reads every container's lines
    const validatorLog = {
      name: "validator-log",
      image: "busybox:1.36",
      command: ["sh", "-c", `until [ -f ${VALIDATOR_LOG} ]; do sleep 2; done; exec tail -n +1 -F ${VALIDATOR_LOG}`],
      volumeMounts: [{ name: "data", mountPath: "/cairn/data", readOnly: true }],
      resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { memory: "64Mi" } },
      securityContext: { runAsNonRoot: true, runAsUser: 10001, allowPrivilegeEscalation: false },
    };
    out.push(statefulSet(input, "blobber", blobbers, [blobber, validator, validatorLog], "100Gi", configVolume));
    out.push(service(ns, "blobber", { "app.kubernetes.io/name": "blobber" }, [["http", PORTS.blobber]], true));
  }
  // one Service per pod, for the ingress's path routing
  for (const r of nodeRoutes(input)) {
    if (r.service === "blockworker") continue;
    const m = /^(.*)-(\d+)$/.exec(r.service) as RegExpExecArray;
    const set = (m[1] as string).replace(/-validator$/, "");
    if (set !== "blobber" && (standalone || !input.deploy_main)) continue;
    if (set === "blobber" && !(input.deploy_auxiliary || standalone)) continue;
    out.push(service(ns, r.service, { "statefulset.kubernetes.io/pod-name": `${set}-${m[2]}` }, [["http", r.port]]));
  }
  const routes = nodeRoutes(input).filter((r) => out.some((x) => x.kind === "Service" && x.metadata.name === r.service));
  const rules: Record<string, unknown>[] = [
    {
      host: input.host_address,
      http: {
        paths: routes.map((r) => ({
          path: `${r.path}(/|$)(.*)`,
          pathType: "ImplementationSpecific",
          backend: { service: { name: r.service, port: { number: r.port } } },
        })),
      },
    },
  ];
  out.push({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name: "cairn",
      namespace: ns,
      annotations: {
        "nginx.ingress.kubernetes.io/rewrite-target": "/$2",
        "nginx.ingress.kubernetes.io/use-regex": "true",
        "cert-manager.io/cluster-issuer": "letsencrypt",
      },
    },
    spec: { ingressClassName: "nginx", tls: [{ hosts: [input.host_address], secretName: `${ns}-tls` }], rules },
  });
  out.push(...monitoringManifests(input, dashboardPassword, htpasswd, extras));
  return out;
}

/** The DNS records to create: the domain and its grafana, kibana and rancher sub-domains. */
export function dnsRecords(input: DeployInput): { name: string; type: string; value: string }[] {
  return ["", "grafana.", "kibana.", "rancher."].map((p) => ({
    name: `${p}${input.host_address}`,
    type: input.record_type,
    // a CNAME for the sub-domains points at the domain; the domain itself (an apex) keeps its address
    value: input.record_type === "CNAME" && p !== "" ? input.host_address : input.host_ip,
  }));
}
