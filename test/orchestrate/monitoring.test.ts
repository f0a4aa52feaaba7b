// cairn-deploy's monitoring objects, checked offline: Prometheus can list the pods it scrapes (its ServiceAccount,
// Role and RoleBinding) and keeps one target per node program; Grafana gets the Prometheus data source and the
// repository's dashboard; a node's real log line, as the container runtime writes it, goes through Fluent Bit's
// parsers (the regex of its configuration) into the JSON Elasticsearch indexes; the validator's file log is
// streamed by a sidecar; every dashboard is behind the deployment's login.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { createLogger } from "../../src/nodes/logger.js";
import { VALIDATOR_LOG_FILE } from "../../src/nodes/validator/run.js";
import { parseDeployInput } from "../../src/orchestrate/input.js";
import { GRAFANA_DASHBOARD, htpasswdLine } from "../../src/orchestrate/main.js";
import { buildManifests, type Manifest, VALIDATOR_LOG } from "../../src/orchestrate/manifests.js";
import { CRI_LOG_REGEX, LOGGED_CONTAINERS } from "../../src/orchestrate/monitoring.js";
import { deployInput, validateManifests } from "../support/deploy-input.js";

const INPUT = parseDeployInput(deployInput());
const DASHBOARD = readFileSync(GRAFANA_DASHBOARD, "utf8");
const MS = buildManifests(INPUT, "pw-123", htpasswdLine("admin", "pw-123"), undefined, { grafanaDashboard: DASHBOARD });

type Container = {
  name: string;
  args?: string[];
  command?: string[];
  ports?: { name: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string }[];
};
type PodTemplate = {
  metadata: { annotations?: Record<string, string> };
  spec: { containers: Container[]; volumes?: Record<string, unknown>[]; serviceAccountName?: string };
};

function find(kind: string, name: string, ms: Manifest[] = MS): Manifest {
  const m = ms.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(m, `${kind} ${name}`);
  return m;
}
const template = (m: Manifest): PodTemplate => (m.spec as { template: PodTemplate }).template;
const configMapData = (name: string): Record<string, string> => find("ConfigMap", name).data as Record<string, string>;

/** The node programs' pod templates (block worker, sharders, miners, blobbers with validators). */
const NODE_SETS: [string, string][] = [
  ["Deployment", "blockworker"],
  ["StatefulSet", "sharder"],
  ["StatefulSet", "miner"],
  ["StatefulSet", "blobber"],
];

describe("cairn-deploy monitoring", () => {
  it("every object is a valid Kubernetes object", () => validateManifests(MS));

  it("Prometheus may list the namespace's pods and keeps one target per node program's http port", () => {
    const prom = template(find("Deployment", "prometheus"));
    assert.equal(prom.spec.serviceAccountName, "prometheus");
    find("ServiceAccount", "prometheus");
    const role = find("Role", "prometheus") as Manifest & { rules: { resources: string[]; verbs: string[] }[] };
    assert.ok(role.rules.some((r) => r.resources.includes("pods") && ["list", "watch"].every((v) => r.verbs.includes(v))));
    const binding = find("RoleBinding", "prometheus") as Manifest & {
      roleRef: { kind: string; name: string };
      subjects: { kind: string; name: string; namespace: string }[];
    };
    assert.deepEqual(binding.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "prometheus" });
    assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "prometheus", namespace: "cairn-test" }]);

    const cfg = parse(configMapData("prometheus-config")["prometheus.yml"] as string) as {
      scrape_configs: {
        kubernetes_sd_configs: { role: string; namespaces: { names: string[] } }[];
        relabel_configs: { source_labels: string[]; action?: string; regex?: string; target_label?: string }[];
      }[];
    };
    const job = cfg.scrape_configs[0];
    assert.ok(job);
    assert.deepEqual(job.kubernetes_sd_configs[0]?.namespaces.names, ["cairn-test"]);
    const keep = (label: string) =>
      job.relabel_configs.find((r) => r.action === "keep" && r.source_labels[0] === label)?.regex as string;
    const pathFrom = job.relabel_configs.find((r) => r.target_label === "__metrics_path__")?.source_labels[0];
    assert.equal(pathFrom, "__meta_kubernetes_pod_annotation_prometheus_io_path");
    // each node program: its pod annotated for scraping, one container port named as the config keeps (the
    // validator-log sidecar has none, so it is no target)
    let targets = 0;
    for (const [kind, name] of NODE_SETS) {
      const t = template(find(kind, name));
      assert.match(
        t.metadata.annotations?.["prometheus.io/scrape"] ?? "",
        new RegExp(`^${keep("__meta_kubernetes_pod_annotation_prometheus_io_scrape")}$`),
      );
      for (const c of t.spec.containers) {
        const ports = (c.ports ?? []).filter((p) =>
          new RegExp(`^${keep("__meta_kubernetes_pod_container_port_name")}$`).test(p.name),
        );
        assert.equal(ports.length, c.name === "validator-log" ? 0 : 1, `${name}/${c.name}`);
        targets += ports.length;
      }
    }
    assert.equal(targets, 5, "block worker, sharder, miner, blobber, validator");
  });

  it("Grafana: the admin password from the login Secret, the Prometheus data source and the network dashboard provisioned", () => {
    const g = template(find("Deployment", "grafana"));
    const c = g.spec.containers[0] as Container;
    const env = new Map((c.env ?? []).map((e) => [e.name, e]));
    assert.deepEqual(env.get("GF_SECURITY_ADMIN_PASSWORD")?.valueFrom?.secretKeyRef, {
      name: "cairn-dashboards-login",
      key: "password",
    });
    assert.equal(env.get("GF_AUTH_ANONYMOUS_ENABLED")?.value, "false");
    const prov = configMapData("grafana-provisioning");
    const ds = (parse(prov["datasources.yaml"] as string) as { datasources: { type: string; url: string; isDefault: boolean }[] })
      .datasources[0];
    assert.ok(ds?.isDefault);
    // the data source is the Prometheus Service of the deployment
    const url = new URL(ds.url);
    const promSvc = find("Service", url.hostname).spec as { ports: { port: number }[] };
    assert.equal(promSvc.ports[0]?.port, Number(url.port));
    // the dashboard: the repository's file, its data source variable of the provisioned type, in the provider's folder
    assert.equal(configMapData("grafana-dashboards")["cairn-network.json"], DASHBOARD);
    const dash = JSON.parse(DASHBOARD) as { templating: { list: { type: string; query: string }[] } };
    assert.ok(dash.templating.list.some((v) => v.type === "datasource" && v.query === ds.type));
    const provider = (parse(prov["dashboards.yaml"] as string) as { providers: { options: { path: string } }[] }).providers[0];
    const mounts = new Map((c.volumeMounts ?? []).map((m) => [m.mountPath, m]));
    assert.equal(mounts.get(provider?.options.path as string)?.name, "dashboards");
    const items = (
      (g.spec.volumes ?? []).find((v) => (v as { name: string }).name === "provisioning") as unknown as {
        configMap: { items: { key: string; path: string }[] };
      }
    ).configMap.items;
    for (const [dir, key] of [
      ["/etc/grafana/provisioning/datasources", "datasources.yaml"],
      ["/etc/grafana/provisioning/dashboards", "dashboards.yaml"],
    ]) {
      const sub = mounts.get(dir as string)?.subPath;
      assert.ok(
        items.some((i) => i.key === key && i.path.startsWith(`${sub}/`)),
        dir,
      );
    }
    // without the dashboard text no dashboard ConfigMap (and no mount of it)
    const bare = buildManifests(INPUT, "pw", htpasswdLine("admin", "pw"));
    validateManifests(bare);
    assert.ok(!bare.some((m) => m.metadata.name === "grafana-dashboards"));
  });

  it("logs: a node's JSON line, as the container runtime writes it, parses with Fluent Bit's configuration", () => {
    const fb = configMapData("fluent-bit-config");
    const conf = fb["fluent-bit.conf"] as string;
    const parsers = fb["parsers.conf"] as string;
    const regex = /Regex\s+(.*)$/m.exec(parsers)?.[1];
    assert.equal(regex, CRI_LOG_REGEX);
    // a real line of a node's logger
    const lines: string[] = [];
    const logger = createLogger({ name: "miner", base: { port: 7071 }, stream: { write: (s: string) => lines.push(s) } });
    logger.info({ round: 42, private_key: "00ff" }, "round 42 finalized");
    const line = (lines[0] as string).trimEnd();
    const cri = `2026-11-28T00:40:01.123456789Z stdout F ${line}`;
    const m = new RegExp(regex).exec(cri);
    assert.ok(m?.groups);
    assert.equal(m.groups.stream, "stdout");
    // the filter parses the `message` key with the json parser; its Time_Format fits pino's ISO time
    assert.match(conf, /Key_Name\s+message\b/);
    assert.match(conf, /Parser\s+cairn_json\b/);
    const record = JSON.parse(m.groups.message as string) as Record<string, unknown>;
    assert.equal(record.msg, "round 42 finalized");
    assert.equal(record.round, 42);
    assert.equal(record.private_key, "[redacted]");
    assert.equal(/Time_Format\s+(\S+)\n\s+Time_Keep/.exec(parsers)?.[1], "%Y-%m-%dT%H:%M:%S.%LZ");
    assert.match(record.time as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // shipped to the deployment's Elasticsearch Service
    const host = /^\s+Host\s+(\S+)/m.exec(conf)?.[1];
    const port = Number(/^\s+Port\s+(\d+)/m.exec(conf)?.[1]);
    assert.equal((find("Service", host as string).spec as { ports: { port: number }[] }).ports[0]?.port, port);
  });

  it("logs: Fluent Bit tails every node container of the namespace; the validator's file is streamed by a sidecar", () => {
    const conf = configMapData("fluent-bit-config")["fluent-bit.conf"] as string;
    const globs = (/^\s+Path\s+(\S+)/m.exec(conf)?.[1] ?? "").split(",");
    const matches = (file: string) =>
      globs.some((g) => new RegExp(`^${g.replaceAll(".", "\\.").replaceAll("*", "[^/]*")}$`).test(file));
    for (const [kind, name] of NODE_SETS)
      for (const c of template(find(kind, name)).spec.containers) {
        // /var/log/containers/<pod>_<namespace>_<container>-<id>.log
        const file = `/var/log/containers/${name}-0_cairn-test_${c.name}-0123abcd.log`;
        if (c.name === "validator") assert.ok(!matches(file), "the validator's stdout is empty: its log goes to its file");
        else assert.ok(matches(file), `${name}/${c.name}`);
      }
    assert.ok(!matches("/var/log/containers/x-0_other_miner-0123abcd.log"), "only this namespace");
    assert.ok(!matches("/var/log/containers/kibana-1_cairn-test_kibana-0123abcd.log"), "not the dashboards");
    assert.deepEqual(LOGGED_CONTAINERS.sort(), ["blobber", "blockworker", "miner", "sharder", "validator-log"]);
    const pod = template(find("StatefulSet", "blobber")).spec.containers;
    const validator = pod.find((c) => c.name === "validator") as Container;
    const logDir = validator.args?.[(validator.args?.indexOf("--log_dir") ?? 0) + 1];
    assert.equal(VALIDATOR_LOG, join(logDir as string, VALIDATOR_LOG_FILE));
    const sidecar = pod.find((c) => c.name === "validator-log") as Container;
    assert.match(sidecar.command?.join(" ") ?? "", new RegExp(`tail -n \\+1 -F ${VALIDATOR_LOG}$`));
    const ds = template(find("DaemonSet", "fluent-bit"));
    assert.ok(ds.spec.containers[0]?.volumeMounts?.some((v) => v.mountPath === "/var/log"));
  });

  it("each dashboard behind the login: basic auth from the Secret's htpasswd line, Grafana and Rancher its password", () => {
    const secret = find("Secret", "cairn-dashboards-login").stringData as Record<string, string>;
    assert.equal(secret.password, "pw-123");
    const [user, hash] = (secret.auth as string).split(":");
    assert.equal(user, "admin");
    assert.equal(hash, `{SHA}${createHash("sha1").update("pw-123").digest("base64")}`);
    const dashboards = MS.filter((m) => m.kind === "Ingress" && m.metadata.name !== "cairn");
    assert.deepEqual(dashboards.map((m) => m.metadata.name).sort(), ["grafana", "kibana", "rancher"]);
    for (const ing of dashboards) {
      assert.equal(ing.metadata.annotations?.["nginx.ingress.kubernetes.io/auth-type"], "basic");
      assert.equal(ing.metadata.annotations?.["nginx.ingress.kubernetes.io/auth-secret"], "cairn-dashboards-login");
      const host = (ing.spec as { rules: { host: string }[] }).rules[0]?.host;
      assert.equal(host, `${ing.metadata.name}.cairn.example.com`);
    }
    const rancher = template(find("Deployment", "rancher")).spec.containers[0] as Container;
    assert.deepEqual(rancher.env?.find((e) => e.name === "CATTLE_BOOTSTRAP_PASSWORD")?.valueFrom?.secretKeyRef, {
      name: "cairn-dashboards-login",
      key: "password",
    });
    // Elasticsearch has no login of its own: reachable only from the namespace's pods
    const np = find("NetworkPolicy", "elasticsearch").spec as { ingress: { from: { podSelector: object }[] }[] };
    assert.deepEqual(np.ingress[0]?.from, [{ podSelector: {} }]);
    // no flags, no monitoring objects and no login
    const none = buildManifests(
      parseDeployInput(
        deployInput({
          monitoring: {
            elk: "false",
            elk_address: "",
            rancher: "false",
            rancher_address: "",
            grafana: "false",
            grafana_address: "",
          },
        }),
      ),
      "pw",
      htpasswdLine("admin", "pw"),
    );
    assert.ok(!none.some((m) => m.metadata.name === "cairn-dashboards-login" || m.kind === "DaemonSet"));
  });
});
