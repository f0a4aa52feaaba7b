/**
 * The monitoring objects of a deployment, per the input's flags, every dashboard behind the deployment's login
 * (the Secret `cairn-dashboards-login`: user `admin`, the password generated per deployment, its htpasswd line):
 * - `grafana`: Prometheus (its own ServiceAccount and a Role to list the namespace's pods, scraping every pod
 *   annotated `prometheus.io/scrape` on its `http` port at `prometheus.io/path`) and Grafana (admin password from
 *   the Secret, the Prometheus data source and the repository's network dashboard provisioned);
 * - `elk`: Elasticsearch (one node, reachable from the namespace only), Kibana, and Fluent Bit on every cluster
 *   node shipping the Cairn containers' JSON log lines (CRI log files) to Elasticsearch, index `cairn-<date>`;
 * - `rancher`: Rancher, its bootstrap password the deployment's password.
 * Grafana, Kibana and Rancher each get an Ingress asking for the login (ingress-nginx basic auth).
 */
import type { DeployInput } from "./input.js";
import type { Manifest } from "./manifests.js";

export const LOGIN_SECRET = "cairn-dashboards-login";

const GRAFANA_PORT = 3000;
const PROMETHEUS_PORT = 9090;

/** The containers whose logs Fluent Bit ships: the node programs (the validator through its log-streaming sidecar). */
export const LOGGED_CONTAINERS = ["blockworker", "sharder", "miner", "blobber", "validator-log"];

/** Images of the monitoring programs. */
export const MONITORING_IMAGES = {
  prometheus: "prom/prometheus:v2.53.0",
  grafana: "grafana/grafana:11.1.0",
  elasticsearch: "docker.elastic.co/elasticsearch/elasticsearch:8.14.3",
  kibana: "docker.elastic.co/kibana/kibana:8.14.3",
  fluentBit: "cr.fluentbit.io/fluent/fluent-bit:3.1.9",
  rancher: "rancher/rancher:v2.8.5",
};

/** Extra content for the monitoring objects. */
export interface MonitoringExtras {
  /** The Grafana dashboard JSON to provision (deploy/monitoring/grafana-dashboard.json). */
  grafanaDashboard?: string;
}

export function monitoringManifests(
  input: DeployInput,
  password: string,
  htpasswd: string,
  extras: MonitoringExtras = {},
): Manifest[] {
  const ns = input.cluster_name;
  const m = input.monitoring;
  const out: Manifest[] = [];
  if (!m.grafana && !m.elk && !m.rancher) return out;
  const meta = (name: string) => ({ name, namespace: ns, labels: { "app.kubernetes.io/part-of": "cairn" } });
  const service = (name: string, port: number): Manifest => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(name),
    spec: { selector: { "app.kubernetes.io/name": name }, ports: [{ name: "http", port, targetPort: port }] },
  });
  const configMap = (name: string, data: Record<string, string>): Manifest => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(name),
    data,
  });
  const podSpec = (name: string, img: string, port: number | undefined, extra: Record<string, unknown>) => ({
    metadata: { labels: { "app.kubernetes.io/name": name } },
    spec: {
      ...(extra.pod as Record<string, unknown> | undefined),
      containers: [
        {
          name,
          image: img,
          ...(port !== undefined ? { ports: [{ name: "http", containerPort: port }] } : {}),
          ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "pod")),
        },
      ],
    },
  });
  const deployment = (name: string, img: string, port: number, extra: Record<string, unknown>): Manifest => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(name),
    spec: {
      replicas: 1,
      selector: { matchLabels: { "app.kubernetes.io/name": name } },
      template: podSpec(name, img, port, extra),
    },
  });
  const exposed = (name: string, address: string, port: number): void => {
    const host = address || `${name}.${input.host_address}`;
    out.push(service(name, port), {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: {
        ...meta(name),
        annotations: {
          "nginx.ingress.kubernetes.io/auth-type": "basic",
          "nginx.ingress.kubernetes.io/auth-secret": LOGIN_SECRET,
          "nginx.ingress.kubernetes.io/auth-realm": "Cairn monitoring",
          "cert-manager.io/cluster-issuer": "letsencrypt",
        },
      },
      spec: {
        ingressClassName: "nginx",
        tls: [{ hosts: [host], secretName: `${name}-tls` }],
        rules: [
          { host, http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name, port: { number: port } } } }] } },
        ],
      },
    });
  };
  const fromLogin = (key: string) => ({ valueFrom: { secretKeyRef: { name: LOGIN_SECRET, key } } });

  out.push({
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(LOGIN_SECRET),
    type: "Opaque",
    stringData: { username: "admin", password, auth: htpasswd },
  });

  if (m.grafana) {
    out.push(
      ...serviceAccountWithRole(ns, "prometheus", [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }]),
    );
    out.push(configMap("prometheus-config", { "prometheus.yml": prometheusConfig(ns) }));
    out.push(
      deployment("prometheus", MONITORING_IMAGES.prometheus, PROMETHEUS_PORT, {
        args: ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.retention.time=15d"],
        volumeMounts: [{ name: "config", mountPath: "/etc/prometheus", readOnly: true }],
        pod: { serviceAccountName: "prometheus", volumes: [{ name: "config", configMap: { name: "prometheus-config" } }] },
      }),
      service("prometheus", PROMETHEUS_PORT),
    );
    out.push(configMap("grafana-provisioning", grafanaProvisioning()));
    const dashboards = extras.grafanaDashboard !== undefined;
    if (dashboards) out.push(configMap("grafana-dashboards", { "cairn-network.json": extras.grafanaDashboard as string }));
    out.push(
      deployment("grafana", MONITORING_IMAGES.grafana, GRAFANA_PORT, {
        env: [
          { name: "GF_SECURITY_ADMIN_USER", value: "admin" },
          { name: "GF_SECURITY_ADMIN_PASSWORD", ...fromLogin("password") },
          { name: "GF_AUTH_ANONYMOUS_ENABLED", value: "false" },
          { name: "GF_USERS_ALLOW_SIGN_UP", value: "false" },
        ],
        volumeMounts: [
          { name: "provisioning", mountPath: "/etc/grafana/provisioning/datasources", subPath: "datasources", readOnly: true },
          { name: "provisioning", mountPath: "/etc/grafana/provisioning/dashboards", subPath: "dashboards", readOnly: true },
          ...(dashboards ? [{ name: "dashboards", mountPath: "/var/lib/grafana/dashboards", readOnly: true }] : []),
        ],
        pod: {
          volumes: [
            {
              name: "provisioning",
              configMap: {
                name: "grafana-provisioning",
                items: [
                  { key: "datasources.yaml", path: "datasources/prometheus.yaml" },
                  { key: "dashboards.yaml", path: "dashboards/cairn.yaml" },
                ],
              },
            },
            ...(dashboards ? [{ name: "dashboards", configMap: { name: "grafana-dashboards" } }] : []),
          ],
        },
      }),
    );
    exposed("grafana", m.grafana_address, GRAFANA_PORT);
  }

  if (m.elk) {
    out.push(
      deployment("elasticsearch", MONITORING_IMAGES.elasticsearch, 9200, {
        env: [
          { name: "discovery.type", value: "single-node" },
          { name: "xpack.security.enabled", value: "false" },
          { name: "ES_JAVA_OPTS", value: "-Xms512m -Xmx512m" },
        ],
        resources: { requests: { cpu: "250m", memory: "1Gi" }, limits: { memory: "2Gi" } },
      }),
      service("elasticsearch", 9200),
      {
        // Elasticsearch runs without its own security: only the namespace's pods (Kibana, Fluent Bit) may reach it
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: meta("elasticsearch"),
        spec: {
          podSelector: { matchLabels: { "app.kubernetes.io/name": "elasticsearch" } },
          policyTypes: ["Ingress"],
          ingress: [{ from: [{ podSelector: {} }], ports: [{ protocol: "TCP", port: 9200 }] }],
        },
      },
      deployment("kibana", MONITORING_IMAGES.kibana, 5601, {
        env: [{ name: "ELASTICSEARCH_HOSTS", value: "http://elasticsearch:9200" }],
      }),
    );
    exposed("kibana", m.elk_address, 5601);
    out.push(configMap("fluent-bit-config", fluentBitConfig(ns)));
    out.push({
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: meta("fluent-bit"),
      spec: {
        selector: { matchLabels: { "app.kubernetes.io/name": "fluent-bit" } },
        template: podSpec("fluent-bit", MONITORING_IMAGES.fluentBit, undefined, {
          // reads the cluster node's container log files (root-owned), keeps its read positions on the node
          securityContext: { runAsUser: 0, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
          resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
          volumeMounts: [
            { name: "config", mountPath: "/fluent-bit/etc", readOnly: true },
            { name: "varlog", mountPath: "/var/log", readOnly: true },
            { name: "state", mountPath: "/var/lib/fluent-bit" },
          ],
          pod: {
            tolerations: [{ operator: "Exists" }],
            volumes: [
              { name: "config", configMap: { name: "fluent-bit-config" } },
              { name: "varlog", hostPath: { path: "/var/log" } },
              { name: "state", hostPath: { path: `/var/lib/cairn-fluent-bit/${ns}`, type: "DirectoryOrCreate" } },
            ],
          },
        }),
      },
    });
  }

  if (m.rancher) {
    // Rancher's own login: its bootstrap password is the deployment's dashboard password
    out.push(
      deployment("rancher", MONITORING_IMAGES.rancher, 80, {
        args: ["--no-cacerts"],
        env: [{ name: "CATTLE_BOOTSTRAP_PASSWORD", ...fromLogin("password") }],
        securityContext: { privileged: true },
      }),
    );
    exposed("rancher", m.rancher_address, 80);
  }
  return out;
}

/** A ServiceAccount, a Role with `rules` in the namespace and the RoleBinding between them. */
function serviceAccountWithRole(ns: string, name: string, rules: Record<string, unknown>[]): Manifest[] {
  const metadata = { name, namespace: ns, labels: { "app.kubernetes.io/part-of": "cairn" } };
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata, rules },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
    },
  ];
}

/**
 * Prometheus configuration: the namespace's pods annotated `prometheus.io/scrape: "true"`, one target per container
 * port named `http` (a blobber pod: its blobber and its validator), at the `prometheus.io/path` annotation.
 */
export function prometheusConfig(ns: string): string {
  return `global:
  scrape_interval: 15s
scrape_configs:
  - job_name: cairn
    kubernetes_sd_configs:
      - role: pod
        namespaces: { names: [${ns}] }
    relabel_configs:
      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape]
        action: keep
        regex: "true"
      - source_labels: [__meta_kubernetes_pod_container_port_name]
        action: keep
        regex: http
      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_path]
        action: replace
        regex: (.+)
        target_label: __metrics_path__
      - source_labels: [__meta_kubernetes_pod_label_app_kubernetes_io_name]
        target_label: cairn_role
      - source_labels: [__meta_kubernetes_pod_name]
        target_label: pod
      - source_labels: [__meta_kubernetes_pod_container_name]
        target_label: container
`;
}

/** Grafana's provisioning files: the Prometheus data source (the default) and a provider for the dashboards folder. */
export function grafanaProvisioning(): Record<string, string> {
  return {
    "datasources.yaml": `apiVersion: 1
datasources:
  - name: Prometheus
    type: prometheus
    uid: prometheus
    access: proxy
    url: http://prometheus:${PROMETHEUS_PORT}
    isDefault: true
`,
    "dashboards.yaml": `apiVersion: 1
providers:
  - name: cairn
    folder: Cairn
    type: file
    allowUiUpdates: false
    options:
      path: /var/lib/grafana/dashboards
`,
  };
}

/** The CRI log line format (containerd, CRI-O): `<time> <stream> <P|F> <the program's line>`. */
export const CRI_LOG_REGEX = "^(?<time>[^ ]+) (?<stream>stdout|stderr) (?<logtag>[^ ]*) (?<message>.*)$";

/**
 * Fluent Bit's configuration: tail the node programs' container log files of the namespace (CRI format), parse
 * each program's line as JSON (pino: `level`, `time`, `name`, `msg`, …; the record's time is the line's `time`),
 * send to Elasticsearch in daily `cairn-<date>` indices.
 */
export function fluentBitConfig(ns: string): Record<string, string> {
  const paths = LOGGED_CONTAINERS.map((c) => `/var/log/containers/*_${ns}_${c}-*.log`).join(",");
  return {
    "fluent-bit.conf": `[SERVICE]
    Flush         5
    Log_Level     info
    Parsers_File  parsers.conf

[INPUT]
    Name              tail
    Tag               cairn.*
    Path              ${paths}
    Parser            cri
    Path_Key          file
    DB                /var/lib/fluent-bit/tail.db
    Mem_Buf_Limit     16MB
    Skip_Long_Lines   On
    Refresh_Interval  10

[FILTER]
    Name          parser
    Match         cairn.*
    Key_Name      message
    Parser        cairn_json
    Reserve_Data  On

[OUTPUT]
    Name                es
    Match               cairn.*
    Host                elasticsearch
    Port                9200
    Logstash_Format     On
    Logstash_Prefix     cairn
    Suppress_Type_Name  On
    Replace_Dots        On
    Retry_Limit         5
`,
    "parsers.conf": `[PARSER]
    Name         cri
    Format       regex
    Regex        ${CRI_LOG_REGEX}
    Time_Key     time
    Time_Format  %Y-%m-%dT%H:%M:%S.%L%z

[PARSER]
    Name         cairn_json
    Format       json
    Time_Key     time
    Time_Format  %Y-%m-%dT%H:%M:%S.%LZ
    Time_Keep    On
`,
  };
}
