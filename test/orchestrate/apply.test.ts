// cairn-deploy --apply against a Kubernetes API stand-in on loopback (no cluster runs here): an HTTP server that
// answers what @kubernetes/client-node calls for a server-side apply — the API discovery lists (/api/v1,
// /apis/apps/v1, /apis/networking.k8s.io/v1, /apis/rbac.authorization.k8s.io/v1) and a PATCH per object that
// creates it or updates it. The command runs as a real process with a kubeconfig pointing at the stand-in.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { stringify } from "yaml";
import { deployInput } from "../support/deploy-input.js";

const DEPLOY = resolve(import.meta.dirname, "../../src/bin/deploy.js");

const RESOURCES: Record<string, { name: string; kind: string; namespaced: boolean }[]> = {
  "/api/v1": [
    { name: "namespaces", kind: "Namespace", namespaced: false },
    { name: "secrets", kind: "Secret", namespaced: true },
    { name: "configmaps", kind: "ConfigMap", namespaced: true },
    { name: "services", kind: "Service", namespaced: true },
    { name: "serviceaccounts", kind: "ServiceAccount", namespaced: true },
  ],
  "/apis/apps/v1": [
    { name: "statefulsets", kind: "StatefulSet", namespaced: true },
    { name: "deployments", kind: "Deployment", namespaced: true },
    { name: "daemonsets", kind: "DaemonSet", namespaced: true },
  ],
  "/apis/networking.k8s.io/v1": [
    { name: "ingresses", kind: "Ingress", namespaced: true },
    { name: "networkpolicies", kind: "NetworkPolicy", namespaced: true },
  ],
  "/apis/rbac.authorization.k8s.io/v1": [
    { name: "roles", kind: "Role", namespaced: true },
    { name: "rolebindings", kind: "RoleBinding", namespaced: true },
  ],
};

interface Stored {
  object: { kind: string; metadata: { name: string; resourceVersion?: string } };
  version: number;
}

/** The API stand-in: objects by path; `refuse` names an object whose apply answers 422 Invalid. */
class ApiStandIn {
  readonly objects = new Map<string, Stored>();
  readonly requests: string[] = [];
  refuse: string | undefined;
  private server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => {
        body += d.toString();
      });
      req.on("end", () => {
        const u = new URL(req.url ?? "/", "http://x");
        this.requests.push(`${req.method} ${u.pathname}`);
        const send = (code: number, obj: unknown): void => {
          res.writeHead(code, { "content-type": "application/json" });
          res.end(JSON.stringify(obj));
        };
        if (req.headers.authorization !== "Bearer stand-in-token")
          return send(401, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Unauthorized", code: 401 });
        const list = RESOURCES[u.pathname];
        if (req.method === "GET" && list)
          return send(200, {
            kind: "APIResourceList",
            apiVersion: "v1",
            groupVersion: u.pathname.replace(/^\/apis?\//, ""),
            resources: list,
          });
        if (req.method !== "PATCH") return send(405, { kind: "Status", reason: "MethodNotAllowed", code: 405 });
        // server-side apply: the apply content type, the field manager, force
        assert.equal(req.headers["content-type"], "application/apply-patch+yaml");
        assert.equal(u.searchParams.get("fieldManager"), "cairn-deploy");
        assert.equal(u.searchParams.get("force"), "true");
        const object = JSON.parse(body) as Stored["object"];
        if (object.metadata.name === this.refuse)
          return send(422, {
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            message: `${object.kind} "${object.metadata.name}" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
            reason: "Invalid",
            code: 422,
          });
        const old = this.objects.get(u.pathname);
        const version = (old?.version ?? 0) + 1;
        this.objects.set(u.pathname, { object, version });
        send(old ? 200 : 201, { ...object, metadata: { ...object.metadata, resourceVersion: String(version) } });
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** A kubeconfig for the stand-in (plain HTTP: the client allows it only with insecure-skip-tls-verify). */
function kubeconfig(file: string, server: string, token: string): string {
  writeFileSync(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "stand-in", cluster: { server, "insecure-skip-tls-verify": true } }],
      users: [{ name: "tester", user: { token } }],
      contexts: [{ name: "stand-in", context: { cluster: "stand-in", user: "tester" } }],
      "current-context": "stand-in",
    }),
  );
  return file;
}

function deploy(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [DEPLOY, ...args], { timeout: 180_000 }, (error, out, err) =>
      res({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

describe("cairn-deploy --apply against a Kubernetes API stand-in", { timeout: 600_000 }, () => {
  const api = new ApiStandIn();
  let dir = "";
  let input = "";

  before(async () => {
    await api.start();
    dir = mkdtempSync(join(tmpdir(), "cairn-apply-"));
    const config = kubeconfig(join(dir, "kubeconfig"), api.url, "stand-in-token");
    input = join(dir, "deployment.json");
    writeFileSync(input, JSON.stringify(deployInput({ kubeconfig_path: config, blobber_count: "1" })));
  });

  after(async () => {
    await api.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("creates every object, in order, at its API path", async () => {
    const r = await deploy(["--input", input, "--out", join(dir, "out"), "--apply"]);
    assert.equal(r.code, 0, r.err + r.out);
    const paths = [...api.objects.keys()];
    assert.equal(paths[0], "/api/v1/namespaces/cairn-test", "the namespace first");
    for (const p of [
      "/api/v1/namespaces/cairn-test/secrets/cairn-network-config",
      "/api/v1/namespaces/cairn-test/secrets/cairn-dashboards-login",
      "/apis/apps/v1/namespaces/cairn-test/statefulsets/sharder",
      "/apis/apps/v1/namespaces/cairn-test/statefulsets/miner",
      "/apis/apps/v1/namespaces/cairn-test/statefulsets/blobber",
      "/apis/apps/v1/namespaces/cairn-test/deployments/blockworker",
      "/api/v1/namespaces/cairn-test/services/blockworker",
    ])
      assert.ok(api.objects.has(p), `${p} applied (have ${paths.join(", ")})`);
    assert.ok(
      paths.some((p) => p.startsWith("/apis/networking.k8s.io/v1/namespaces/cairn-test/ingresses/")),
      "an ingress",
    );
    for (const { version } of api.objects.values()) assert.equal(version, 1);
    const applied = r.out.split("\n").filter((l) => l.startsWith("applied "));
    assert.equal(applied.length, api.objects.size, "one line per object");
    assert.ok(applied.includes("applied StatefulSet cairn-test/miner"), applied.join("\n"));
  });

  it("a second apply of the same input updates every object instead of failing", async () => {
    const before = api.objects.size;
    const r = await deploy(["--input", input, "--out", join(dir, "out2"), "--apply"]);
    assert.equal(r.code, 0, r.err + r.out);
    assert.equal(api.objects.size, before, "no new object");
    for (const [p, { version }] of api.objects) assert.equal(version, 2, `${p} updated once more`);
  });

  it("an object the API refuses: named with the server's reason, exit non-zero, nothing after it applied", async () => {
    api.refuse = "miner";
    const versions = new Map([...api.objects].map(([p, s]) => [p, s.version]));
    const r = await deploy(["--input", input, "--out", join(dir, "out3"), "--apply"]);
    assert.notEqual(r.code, 0);
    assert.match(
      r.err,
      /^cairn-deploy: apply manifests failed: cluster http:\/\/127\.0\.0\.1:\d+: StatefulSet cairn-test\/miner: 422 Invalid StatefulSet "miner" is invalid: spec\.replicas/m,
    );
    assert.doesNotMatch(r.out, /applied StatefulSet cairn-test\/miner/);
    const after = [...api.objects].filter(([p, s]) => s.version > (versions.get(p) ?? 0)).map(([p]) => p);
    assert.ok(after.length > 0 && !after.includes("/apis/apps/v1/namespaces/cairn-test/statefulsets/miner"));
  });

  it("a cluster that refuses the credentials: the first object named with the reason", async () => {
    api.refuse = undefined;
    const bad = kubeconfig(join(dir, "kubeconfig-bad"), api.url, "wrong");
    const badInput = join(dir, "bad.json");
    writeFileSync(badInput, JSON.stringify(deployInput({ kubeconfig_path: bad, blobber_count: "1" })));
    const r = await deploy(["--input", badInput, "--out", join(dir, "out4"), "--apply"]);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /Namespace cairn-test: .*401 Unauthorized/);
  });
});
