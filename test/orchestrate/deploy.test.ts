// cairn-deploy: the deployment input (every field checked; one refusal per field naming it and what it expected)
// and the manifests it writes, validated offline against the Kubernetes schemas (kubernetes-models).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StatefulSet } from "kubernetes-models/apps/v1";
import { CodedError } from "../../src/core/errors.js";
import { parseDeployInput } from "../../src/orchestrate/input.js";
import { htpasswdLine } from "../../src/orchestrate/main.js";
import { buildManifests, dnsRecords } from "../../src/orchestrate/manifests.js";
import { deployInput, STANDALONE, validateManifests } from "../support/deploy-input.js";

const GOOD = deployInput({
  sharder_count: "2",
  blobber_count: "4",
  fs_type: "microk8s-hostpath",
  monitoring: { elk: "true", elk_address: "", rancher: "false", rancher_address: "", grafana: "true", grafana_address: "" },
});

function withField(path: string, value: unknown, base: Record<string, unknown> = GOOD): Record<string, unknown> {
  const copy = structuredClone(base) as Record<string, unknown>;
  const parts = path.split(".");
  let o = copy;
  for (const p of parts.slice(0, -1)) o = o[p] as Record<string, unknown>;
  const last = parts.at(-1) as string;
  if (value === undefined) delete o[last];
  else o[last] = value;
  return copy;
}

function refused(input: unknown, field: string, expected: RegExp): void {
  assert.throws(
    () => parseDeployInput(input),
    (err: unknown) => {
      assert.ok(err instanceof CodedError);
      assert.equal(err.code, "deploy_input_invalid");
      assert.ok(err.message.includes(`field "${field}": expected `), err.message);
      assert.match(err.message, expected);
      return true;
    },
  );
}

describe("deployment input", () => {
  it("reads a good input", () => {
    const d = parseDeployInput(GOOD);
    assert.equal(d.sharder_count, 2);
    assert.equal(d.miner_count, 3);
    assert.equal(d.blobber_count, 4);
    assert.equal(d.monitoring.grafana, true);
    assert.equal(d.monitoring.rancher, false);
    assert.equal(d.standalone, undefined);
    assert.equal(parseDeployInput(withField("n2n_delay", "250ms")).n2n_delay, 250);
  });

  const BAD: [string, unknown, RegExp][] = [
    ["cloud_provider", "", /non-empty string/],
    ["cluster_name", "Cairn_Net", /namespace name/],
    ["sharder_count", 2, /given as a string/],
    ["miner_count", "0", /from 1 to 64/],
    ["blobber_count", "many", /given as a string/],
    ["deploy_main", "yes", /true or false/],
    ["deploy_auxiliary", undefined, /true or false, found nothing/],
    ["host_address", "not a domain", /domain name/],
    ["host_ip", "300.1.1.1", /IPv4/],
    ["kubeconfig_path", 7, /a path/],
    ["n2n_delay", "soon", /milliseconds/],
    ["fs_type", "ssd", /one of standard, microk8s-hostpath, openebs-cstore-sc/],
    ["repo_type", "Bad Repo", /image repository/],
    ["image_tag", "-x", /image tag/],
    ["record_type", "MX", /one of A, AAAA, CNAME/],
    ["deployment_type", "internal", /"public" or "private"/],
    ["monitoring", "on", /an object \{elk/],
    ["monitoring.elk", "maybe", /"true" or "false"/],
    ["monitoring.elk_address", "bad address", /domain name, or an empty string/],
    ["monitoring.rancher", 1, /"true" or "false"/],
    ["monitoring.rancher_address", "x y", /domain name/],
    ["monitoring.grafana", undefined, /"true" or "false"/],
    ["monitoring.grafana_address", "-", /domain name/],
    ["on_premise", null, /an object \{environment, host_ip\}/],
    ["on_premise.environment", 3, /a string/],
    ["on_premise.host_ip", "localhost", /IPv4 address, or an empty string/],
    ["standalone", [], /an object \{public_key/],
    ["standalone.public_key", "xyz", /bls0chain public key in hex \(128 characters\)/],
  ];
  for (const [field, value, expected] of BAD)
    it(`refuses a bad ${field}`, () => refused(withField(field, value), field, expected));

  const SBAD: [string, unknown, RegExp][] = [
    ["private_key", "12", /private key in hex/],
    ["network_url", "", /domain name/],
    ["blobber_delegate_ID", "abc", /client id/],
    ["read_price", "cheap", /decimal string/],
    ["write_price", "-1", /decimal string/],
    ["capacity", "0", /bytes as a decimal string/],
  ];
  const standalone = withField("standalone", STANDALONE);
  for (const [field, value, expected] of SBAD)
    it(`refuses a bad standalone.${field}`, () =>
      refused(withField(`standalone.${field}`, value, standalone), `standalone.${field}`, expected));

  it("refuses what is not an object", () => {
    assert.throws(() => parseDeployInput([]), /expected a JSON object/);
  });
});

describe("manifests", () => {
  it("a whole network: namespace, StatefulSets, block worker, ingress, monitoring — valid Kubernetes objects", () => {
    const input = parseDeployInput(GOOD);
    const ms = buildManifests(input, "pw", htpasswdLine("admin", "pw"));
    validateManifests(ms);
    // the schema check is real: a StatefulSet without its selector and template is refused
    assert.throws(() => new StatefulSet({ metadata: { name: "x" }, spec: { serviceName: "x" } } as never).validate());
    assert.equal(ms[0]?.kind, "Namespace");
    assert.equal(ms[0]?.metadata.name, "cairn-test");
    for (const m of ms.slice(1)) assert.equal(m.metadata.namespace, "cairn-test", `${m.kind} ${m.metadata.name}`);
    const sets = new Map(
      ms.filter((m) => m.kind === "StatefulSet").map((m) => [m.metadata.name, m.spec as Record<string, never>]),
    );
    assert.deepEqual([...sets.keys()].sort(), ["blobber", "miner", "sharder"]);
    assert.equal(sets.get("sharder")?.replicas, 2);
    assert.equal(sets.get("miner")?.replicas, 3);
    assert.equal(sets.get("blobber")?.replicas, 4);
    const blobberPod = JSON.stringify(sets.get("blobber"));
    assert.match(blobberPod, /"name":"validator"/);
    assert.match(blobberPod, /"storageClassName":"microk8s-hostpath"/);
    assert.match(blobberPod, /localhost\/cairn\/blobber:0\.1\.0/);
    const ingress = ms.find((m) => m.kind === "Ingress" && m.metadata.name === "cairn");
    const paths = JSON.stringify(ingress?.spec);
    for (const p of ["/dns", "/sharder1", "/miner2", "/blobber3", "/validator0"]) assert.ok(paths.includes(`"${p}(/|$)(.*)"`), p);
    const grafana = ms.find((m) => m.kind === "Ingress" && m.metadata.name === "grafana");
    assert.equal(grafana?.metadata.annotations?.["nginx.ingress.kubernetes.io/auth-type"], "basic");
    assert.ok(ms.some((m) => m.kind === "Ingress" && m.metadata.name === "kibana"));
    assert.ok(!ms.some((m) => m.metadata.name === "rancher"));
  });

  it("standalone adds one blobber and its validator, nothing of the chain", () => {
    const input = parseDeployInput(withField("standalone", STANDALONE));
    const ms = buildManifests(input, "pw", htpasswdLine("admin", "pw"));
    validateManifests(ms);
    const sets = ms.filter((m) => m.kind === "StatefulSet");
    assert.deepEqual(
      sets.map((m) => m.metadata.name),
      ["blobber"],
    );
    assert.equal((sets[0]?.spec as { replicas: number } | undefined)?.replicas, 1);
    assert.ok(!ms.some((m) => m.metadata.name === "blockworker"));
  });

  it("four DNS records of record_type: the domain, grafana, kibana, rancher", () => {
    const recs = dnsRecords(parseDeployInput(GOOD));
    assert.deepEqual(
      recs.map((r) => `${r.name} ${r.type} ${r.value}`),
      [
        "cairn.example.com A 203.0.113.7",
        "grafana.cairn.example.com A 203.0.113.7",
        "kibana.cairn.example.com A 203.0.113.7",
        "rancher.cairn.example.com A 203.0.113.7",
      ],
    );
  });
});
