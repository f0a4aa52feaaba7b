// cairn-deploy's network-config Secret (keys, genesis, node.yaml of every pod, with in-cluster addresses) and the
// pods' mounts of it; Kibana with Elasticsearch and Rancher when the monitoring flags ask; the setup command's
// run: manifests written, the dashboards password printed once — all validated offline (kubernetes-models).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { clusterNetworkFiles, podOf, standaloneBlobberFiles } from "../../src/localnet/cluster.js";
import { basicLoginAccepts } from "../../src/nodes/blobber/pages.js";
import { parseBlobberConfig, parseValidatorConfig } from "../../src/nodes/config/operator.js";
import { parseDeployInput } from "../../src/orchestrate/input.js";
import { htpasswdLine } from "../../src/orchestrate/main.js";
import { buildManifests, type Manifest, nodeRoutes } from "../../src/orchestrate/manifests.js";
import {
  networkConfigSecret,
  networkFiles,
  secretKey,
  USER_CONFIG_PATH,
  userClientConfig,
} from "../../src/orchestrate/network-config.js";
import { loadClientConfig } from "../../src/sdk/configfiles.js";
import { clientIdOf } from "../../src/sdk/index.js";
import { deployInput, STANDALONE, validateManifests } from "../support/deploy-input.js";

const INPUT = deployInput();

type Pod = { containers: { name: string; args: string[]; env?: unknown[] }[]; volumes: Record<string, unknown>[] };
function podOfSet(ms: Manifest[], name: string): Pod {
  const m = ms.find((x) => x.metadata.name === name && (x.kind === "StatefulSet" || x.kind === "Deployment"));
  assert.ok(m, name);
  return (m.spec as { template: { spec: Pod } }).template.spec;
}

describe("cairn-deploy: the network-config Secret and the monitoring deployments", () => {
  it("pod names of the local network's processes", () => {
    assert.equal(podOf("miner1"), "miner-0");
    assert.equal(podOf("sharder2"), "sharder-1");
    assert.equal(podOf("validator3"), "blobber-2");
    assert.equal(podOf("blockworker"), "blockworker");
  });

  it("every pod's files, with in-cluster addresses, mounted in folders the pods' arguments name", async () => {
    const input = parseDeployInput(INPUT);
    const files = await networkFiles(input, clusterNetworkFiles);
    for (const p of [
      "genesis/magic_block.json",
      "genesis/initial_state.yaml",
      "genesis/sc.yaml",
      "blockworker/node.yaml",
      "sharder-0/node.yaml",
      "sharder-0/keys.txt",
      "miner-2/node.yaml",
      "miner-2/dkg.json",
      "blobber-1/keys.txt",
      "blobber-1/validator_keys.txt",
      "blobber-1/config/0chain_blobber.yaml",
      "blobber-1/config/0chain_validator.yaml",
      "zcn/config.yaml",
    ])
      assert.ok(p in files, `${p} in ${Object.keys(files).join(", ")}`);
    const miner = parse(files["miner-1/node.yaml"] as string) as { host: string; data_dir: string; magic_block_file: string };
    assert.equal(miner.host, "miner-1.miner.cairn-test.svc.cluster.local");
    assert.equal(miner.data_dir, "/cairn/data");
    assert.equal(miner.magic_block_file, "../genesis/magic_block.json");
    const mb = JSON.parse(files["genesis/magic_block.json"] as string) as { miners: { nodes: Record<string, { host: string }> } };
    assert.deepEqual(
      Object.values(mb.miners.nodes)
        .map((n) => n.host)
        .sort(),
      [0, 1, 2].map((i) => `miner-${i}.miner.cairn-test.svc.cluster.local`),
    );
    assert.equal(
      (files["blobber-1/validator_keys.txt"] as string).split("\n")[2],
      "blobber-1.blobber.cairn-test.svc.cluster.local",
    );
    assert.match(
      files["blobber-0/config/0chain_blobber.yaml"] as string,
      /block_worker: http:\/\/blockworker\.cairn-test\.svc\.cluster\.local:9091\/dns/,
    );
    // clients outside the cluster: the ingress's paths, handed out by the block worker and registered by providers
    const bw = parse(files["blockworker/node.yaml"] as string) as { public_urls: Record<string, string> };
    assert.equal(bw.public_urls["miner-2.miner.cairn-test.svc.cluster.local"], `https://${input.host_address}/miner2`);
    assert.equal(bw.public_urls["sharder-0.sharder.cairn-test.svc.cluster.local"], `https://${input.host_address}/sharder0`);
    assert.equal(Object.keys(bw.public_urls).length, 4);
    assert.equal(
      (parse(files["blobber-1/config/0chain_blobber.yaml"] as string) as { public_url: string }).public_url,
      `https://${input.host_address}/blobber1`,
    );
    assert.equal(
      (parse(files["blobber-1/config/0chain_validator.yaml"] as string) as { public_url: string }).public_url,
      `https://${input.host_address}/validator1`,
    );
    const routed = new Set(nodeRoutes(input).map((r) => r.path));
    for (const u of [...Object.values(bw.public_urls), `https://${input.host_address}/validator1`])
      assert.ok(routed.has(new URL(u).pathname), `${u} has an ingress path`);

    const config = networkConfigSecret(input, files);
    const ms = buildManifests(input, "pw", htpasswdLine("admin", "pw"), config);
    validateManifests(ms);
    const secret = ms.find((m) => m.kind === "Secret" && m.metadata.name === "cairn-network-config");
    assert.ok(secret);
    assert.equal(ms.indexOf(secret), 1, "the Secret right after the namespace");
    assert.equal((secret.stringData as Record<string, string>)[secretKey("miner-1/node.yaml")], files["miner-1/node.yaml"]);
    // each pod finds its files where its arguments say
    const mounted = new Set(
      ((config.volume.secret as { items: { path: string }[] }).items ?? []).map((i) => `/cairn/config/${i.path}`),
    );
    const expand = (arg: string, pod: string) => arg.replace("$(POD_NAME)", pod);
    for (const [set, count] of [
      ["sharder", 1],
      ["miner", 3],
    ] as const) {
      const pod = podOfSet(ms, set);
      assert.deepEqual(pod.volumes, [config.volume]);
      for (let i = 0; i < count; i++) {
        const args = pod.containers[0]?.args ?? [];
        assert.equal(args[0], "--config", "the image's entrypoint names the role");
        assert.ok(mounted.has(expand(args[1] as string, `${set}-${i}`)), `${set}-${i}: ${args.join(" ")}`);
      }
    }
    assert.ok(mounted.has(podOfSet(ms, "blockworker").containers[0]?.args[1] as string));
    const blobberPod = podOfSet(ms, "blobber");
    for (const c of blobberPod.containers.filter((x) => x.name !== "validator-log")) {
      const at = (flag: string) => c.args[c.args.indexOf(flag) + 1] as string;
      assert.ok(mounted.has(expand(at("--keys_file"), "blobber-1")), c.name);
      const configDir = expand(at("--config_dir"), "blobber-1");
      assert.ok(mounted.has(`${configDir}/0chain_${c.name}.yaml`), `${c.name}: ${configDir}`);
      assert.equal(at("--hostname"), "$(POD_NAME).blobber.cairn-test.svc.cluster.local");
    }
  });

  it("the users' config.yaml: the pods' with block_worker through the ingress, the rest kept; none in standalone mode", () => {
    const input = parseDeployInput(INPUT);
    const pods =
      "# CLI\nblock_worker: http://blockworker.cairn-test.svc.cluster.local:9091/dns\nsignature_scheme: bls0chain\nchain_id: ab\n";
    assert.equal(
      userClientConfig(input, { "zcn/config.yaml": pods }),
      "# CLI\nblock_worker: https://cairn.example.com/dns\nsignature_scheme: bls0chain\nchain_id: ab\n",
    );
    assert.equal(
      userClientConfig(input, { "zcn/config.yaml": "signature_scheme: ed25519\n" }),
      "block_worker: https://cairn.example.com/dns\nsignature_scheme: ed25519\n",
    );
    assert.equal(userClientConfig(input, {}), undefined);
  });

  it("standalone: the one blobber's Secret from the input's keys, network, delegate, prices and capacity", async () => {
    await initCrypto();
    const kp = getScheme("bls0chain").generateKeys();
    const standalone = { ...STANDALONE, public_key: kp.publicKey, private_key: kp.privateKey, capacity: "5368709120" };
    const input = parseDeployInput(deployInput({ standalone }));
    const line = htpasswdLine("admin", "pw");
    const files = await networkFiles(input, clusterNetworkFiles, line, standaloneBlobberFiles);
    assert.deepEqual(Object.keys(files).sort(), [
      "blobber-0/config/0chain_blobber.yaml",
      "blobber-0/config/0chain_validator.yaml",
      "blobber-0/keys.txt",
      "blobber-0/validator_keys.txt",
    ]);
    const host = "blobber-0.blobber.cairn-test.svc.cluster.local";
    assert.equal(files["blobber-0/keys.txt"], `${kp.publicKey}\n${kp.privateKey}\n${host}\n5051\n`);
    const vkeys = (files["blobber-0/validator_keys.txt"] as string).split("\n");
    assert.notEqual(vkeys[0], kp.publicKey, "the validator has keys of its own (its stake pool is keyed by its id)");
    assert.deepEqual(vkeys.slice(2), [host, "5061", ""]);
    const b = parseBlobberConfig(files["blobber-0/config/0chain_blobber.yaml"] as string, "b.yaml");
    assert.equal(b.block_worker, "https://cairn.example.com/dns", "the existing network's block worker");
    assert.equal(b.delegate_wallet, STANDALONE.blobber_delegate_ID);
    assert.equal(b.capacity, 5368709120n);
    assert.equal(b.read_price, 100_000_000n, "0.01 ZCN");
    assert.equal(b.write_price, 1_000_000_000n, "0.1 ZCN");
    assert.equal(b.public_url, "https://cairn.example.com/blobber0");
    assert.equal(b.dashboard_login, line);
    const v = parseValidatorConfig(files["blobber-0/config/0chain_validator.yaml"] as string, "v.yaml");
    assert.equal(v.block_worker, "https://cairn.example.com/dns");
    assert.equal(v.delegate_wallet, STANDALONE.blobber_delegate_ID);
    assert.equal(v.public_url, "https://cairn.example.com/validator0");
    assert.notEqual(clientIdOf(vkeys[0] as string), clientIdOf(kp.publicKey));
    const config = networkConfigSecret(input, files);
    const ms = buildManifests(input, "pw", line, config);
    validateManifests(ms);
    assert.ok(ms.some((m) => m.kind === "Secret" && m.metadata.name === "cairn-network-config"));
    const pod = podOfSet(ms, "blobber");
    assert.deepEqual(pod.volumes, [config.volume]);
    assert.ok(!ms.some((m) => m.metadata.name === "miner" || m.metadata.name === "blockworker"));
  });

  it("elk and rancher flags add Elasticsearch, Kibana and Rancher, each dashboard behind the deployment's login", () => {
    const input = parseDeployInput(INPUT);
    const ms = buildManifests(input, "pw", htpasswdLine("admin", "pw"));
    validateManifests(ms);
    for (const name of ["elasticsearch", "kibana", "rancher", "grafana", "prometheus"])
      assert.ok(
        ms.some((m) => m.kind === "Deployment" && m.metadata.name === name),
        name,
      );
    for (const name of ["kibana", "rancher", "grafana"]) {
      const ing = ms.find((m) => m.kind === "Ingress" && m.metadata.name === name);
      assert.equal(ing?.metadata.annotations?.["nginx.ingress.kubernetes.io/auth-secret"], "cairn-dashboards-login", name);
    }
    assert.match(JSON.stringify(podOfSet(ms, "rancher")), /"CATTLE_BOOTSTRAP_PASSWORD".*"key":"password"/);
    assert.match(JSON.stringify(podOfSet(ms, "kibana")), /http:\/\/elasticsearch:9200/);
    const off = buildManifests(
      parseDeployInput({ ...INPUT, monitoring: { ...INPUT.monitoring, elk: "false", rancher: "false" } }),
      "pw",
      htpasswdLine("admin", "pw"),
    );
    for (const name of ["elasticsearch", "kibana", "rancher"]) assert.ok(!off.some((m) => m.metadata.name === name), name);
  });

  it("cairn-deploy writes the manifests with the Secret private to its owner and prints a new password once", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-deploy-"));
    try {
      writeFileSync(join(dir, "in.json"), JSON.stringify(INPUT));
      const bin = resolve(import.meta.dirname, "../../src/bin/deploy.js");
      const runOnce = (out: string) =>
        spawnSync(process.execPath, [bin, "--input", join(dir, "in.json"), "--out", join(dir, out)], { encoding: "utf8" });
      const a = runOnce("a");
      assert.equal(a.status, 0, a.stderr);
      const pw = /Dashboards login \(shown once.*\): admin \/ (\S+)/.exec(a.stdout)?.[1];
      assert.ok(pw && pw.length >= 20, a.stdout);
      assert.equal(a.stdout.split(pw).length, 2, "the password appears once");
      const secretFile = readdirSync(join(dir, "a")).find((f) => f.includes("secret-cairn-network-config"));
      assert.ok(secretFile);
      assert.equal(statSync(join(dir, "a", secretFile)).mode & 0o777, 0o600);
      const login = readdirSync(join(dir, "a")).find((f) => f.includes("secret-cairn-dashboards-login")) as string;
      assert.equal(
        (parse(readFileSync(join(dir, "a", login), "utf8")) as { stringData: { password: string } }).stringData.password,
        pw,
      );
      // two CLI configs: the pods' (in the Secret) names the in-cluster block worker, the users' the ingress's /dns
      const secretText = readFileSync(join(dir, "a", secretFile), "utf8");
      const inCluster = (parse(secretText) as { stringData: Record<string, string> }).stringData[secretKey("zcn/config.yaml")];
      assert.ok(inCluster);
      const userDir = join(dir, "a", "zcn");
      assert.equal(join(dir, "a", USER_CONFIG_PATH), join(userDir, "config.yaml"));
      const user = loadClientConfig({ configDir: userDir }).config;
      const pods = parse(inCluster) as { block_worker: string; chain_id: string; signature_scheme: string };
      assert.equal(pods.block_worker, "http://blockworker.cairn-test.svc.cluster.local:9091/dns");
      assert.equal(user.block_worker, "https://cairn.example.com/dns");
      assert.equal(user.chain_id, pods.chain_id, "the same chain");
      assert.equal(user.signature_scheme, pods.signature_scheme);
      // printed with the verify lines; a folder of its own, so `kubectl apply -f <out>` (not recursive) skips it
      assert.ok(a.stdout.includes(`${join(userDir, "config.yaml")} (block_worker: https://cairn.example.com/dns)`), a.stdout);
      assert.ok(a.stdout.indexOf("Verify:") < a.stdout.indexOf(join(userDir, "config.yaml")));
      for (const f of readdirSync(join(dir, "a")).filter((f) => f.endsWith(".yaml")))
        assert.ok((parse(readFileSync(join(dir, "a", f), "utf8")) as { kind?: string }).kind, `${f} is a manifest`);
      // the blobbers' dashboards ask for the same login (the htpasswd line in their yaml)
      const blobberYaml = (parse(secretText) as { stringData: Record<string, string> }).stringData[
        secretKey("blobber-1/config/0chain_blobber.yaml")
      ] as string;
      const blobberLogin = parseBlobberConfig(blobberYaml, "0chain_blobber.yaml").dashboard_login as string;
      assert.ok(basicLoginAccepts(blobberLogin, `Basic ${Buffer.from(`admin:${pw}`).toString("base64")}`));
      assert.ok(!basicLoginAccepts(blobberLogin, `Basic ${Buffer.from("admin:other").toString("base64")}`));
      const b = runOnce("b");
      assert.equal(b.status, 0, b.stderr);
      assert.ok(!b.stdout.includes(pw), "a password per deployment");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
