// The container test (issue 21): the Debian base image (debootstrap, kept by name between runs), the images built
// with buildah from deploy/images/Containerfile, a bridge network made here, block worker, sharder, three miners
// and four blobbers with their validators as podman containers on it; a file uploaded and downloaded byte-exact
// with the CLIs; then every container, volume and the network removed (the base image stays as the cache).
// Skipped, with the reason, where podman/buildah/runc/debootstrap are missing (.ci/run installs them).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { parse, stringify } from "yaml";
import { errorMessage } from "../../src/core/errors.js";
import { clientIdOf, getScheme, initCrypto } from "../../src/core/schemes.js";
import { createLocalnetLayout, type LocalnetLayout, portOffsets } from "../../src/localnet/layout.js";
import { findFreeBase } from "../../src/localnet/ports.js";
import { registerAndStake } from "../../src/localnet/providers.js";
import * as sdk from "../../src/sdk/index.js";
import { type CliRun, runCli } from "../support/cli-process.js";
import {
  composeTestSkipReason,
  containerTestSkipReason,
  must,
  removeComposeProjects,
  removeLabelled,
  removeLeftovers,
  run,
  TEST_LABEL,
} from "../support/containers.js";

const REPO = resolve(import.meta.dirname, "../../..");
const BIN = join(REPO, "docker.local/bin");
const RUN_ID = String(process.pid);
const PREFIX = `cairn-ct${RUN_ID}`;
const TAG = "ct";
const MIN = 60_000;
// CAIRN_CONTAINER_TEST=compose runs only the compose test below (with the images an earlier run built)
const skip =
  process.env.CAIRN_CONTAINER_TEST === "compose"
    ? "CAIRN_CONTAINER_TEST=compose: only the compose test"
    : containerTestSkipReason();

/** The image's user (deploy/images/Containerfile). */
const CAIRN_UID = 10001;

function chownTree(dir: string): void {
  chownSync(dir, CAIRN_UID, CAIRN_UID);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) chownTree(p);
    else chownSync(p, CAIRN_UID, CAIRN_UID);
  }
}

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs: number, detail = async () => ""): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      if (await fn()) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.fail(`timed out after ${timeoutMs / 1000} s waiting for ${what}${await detail()}`);
}

/** GET `url` answers 200 (node:http: fetch refuses port 5061, validator 1's, as a "bad port"). */
const ok = (url: string): Promise<boolean> =>
  new Promise((res) => {
    const req = httpGet(url, { timeout: 3000 }, (r) => {
      r.resume();
      res(r.statusCode === 200);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => res(false));
  });

/** With the CLIs of `cliCfg`: faucet, an allocation (`data`+`parity`), a file uploaded and downloaded byte-exact. */
async function uploadAndDownload(cliCfg: string, work: string, data: number, parity: number): Promise<void> {
  const zbox = (args: string[]): Promise<CliRun> => runCli("zbox", args, cliCfg);
  const f = await runCli("zwallet", ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "5"], cliCfg);
  assert.equal(f.code, 0, f.err + f.out);
  const na = await zbox(["newallocation", "--lock", "2", "--data", String(data), "--parity", String(parity)]);
  assert.equal(na.code, 0, na.err + na.out);
  const alloc = readFileSync(join(cliCfg, "allocation.txt"), "utf8").trim();
  const local = `${work}-up.bin`;
  const bytes = randomBytes(3 * 65536 + 17);
  writeFileSync(local, bytes);
  const up = await zbox(["upload", "--allocation", alloc, "--localpath", local, "--remotepath", "/ct.bin"]);
  assert.equal(up.code, 0, up.err + up.out);
  const rp = await zbox(["rp-lock", "--allocation", alloc, "--duration", "1h", "--tokens", "1"]);
  assert.equal(rp.code, 0, rp.err + rp.out);
  const back = `${work}-down.bin`;
  const down = await zbox(["download", "--allocation", alloc, "--remotepath", "/ct.bin", "--localpath", back]);
  assert.equal(down.code, 0, down.err + down.out);
  assert.equal(statSync(back).size, bytes.length);
  assert.ok(readFileSync(back).equals(bytes), "downloaded bytes equal the uploaded ones");
}

/** The time of each step: `lap(what)` ends one, `times()` lists them. */
function stopwatch(): { lap: (what: string) => void; restart: () => void; times: () => string } {
  const laps: [string, number][] = [];
  let t = Date.now();
  return {
    lap: (what) => {
      const now = Date.now();
      laps.push([what, now - t]);
      t = now;
    },
    restart: () => {
      t = Date.now();
    },
    times: () => laps.map(([w, ms]) => `${w} ${(ms / 1000).toFixed(1)} s`).join("; "),
  };
}

/** How long registerAndStake waits for the providers to register. */
const STAKE_WAIT = {
  now: () => Date.now(),
  sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
  timeoutMs: 5 * MIN,
};

/** `fn` with a chain client of the network whose block worker is `blockWorker`; its transport closed after. */
async function withChain(blockWorker: string, chainId: string, fn: (client: sdk.ChainClient) => Promise<void>): Promise<void> {
  await initCrypto();
  const transport = new sdk.HttpTransport();
  try {
    await fn(new sdk.ChainClient({ blockWorker, chainId, transport, scheme: getScheme("bls0chain") }));
  } finally {
    await transport.close();
  }
}

/** The round the sharder at `url` last finalized. */
async function finalizedRound(url: string): Promise<number> {
  const r = await fetch(`${url}/v1/block/get/latest_finalized`, { signal: AbortSignal.timeout(3000) });
  return ((await r.json()) as { round: number }).round;
}

it("without podman and buildah the container test is skipped and says why", () => {
  assert.equal(
    containerTestSkipReason({ PATH: "/nonexistent" }),
    "podman, buildah, runc, debootstrap not installed (apt-get install buildah podman runc debootstrap; .ci/run does)",
  );
  assert.equal(containerTestSkipReason({ ...process.env, CAIRN_CONTAINER_TEST: "0" }), "CAIRN_CONTAINER_TEST=0");
});

describe("containers: images, a bridge network, the whole network as podman containers", { skip, timeout: 45 * MIN }, () => {
  const { lap, restart, times } = stopwatch();
  let dir = "";
  let layout: LocalnetLayout;
  const names: string[] = [];
  const onSignal = (): void => {
    removeLabelled(RUN_ID);
    process.exit(130);
  };

  /** The log tail of every container, for a failure's message. */
  const logs = async (): Promise<string> => {
    const ps = await run("podman", ["ps", "-a", "--filter", `label=${TEST_LABEL}=${RUN_ID}`], 30_000);
    const parts = await Promise.all(
      names.map(async (n) => {
        const out = (await run("podman", ["logs", "--tail", "10", n], 30_000)).out;
        // blobbers and validators log to files under their data volume
        const files = (await run("podman", ["exec", n, "sh", "-c", "tail -n 10 /cairn/data/log/*.log 2>/dev/null"], 30_000)).out;
        return `\n--- ${n}\n${out}${files}`;
      }),
    );
    return `\n${ps.out}${parts.join("")}`;
  };

  before(async () => {
    restart();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    const left = removeLeftovers();
    if (left.length > 0) console.log(`# removed what an earlier run left: ${left.join(", ")}`);
    // (a) the base image: made once, then found by name
    await must("bash", [join(BIN, "build.base.sh")], 20 * MIN);
    lap("base image (debootstrap, or found)");
    // (b) the images
    await must("bash", [join(BIN, "build.image.sh"), "sharder", "miner", "blockworker", "blobber", "validator"], 20 * MIN, {
      IMAGE_TAG: TAG,
    });
    lap("five images (buildah)");
    // (c) the network: podman picks a free private /24; the nodes get fixed addresses in it
    const net = `${PREFIX}-net`;
    await must("podman", ["network", "create", "--driver", "bridge", "--label", `${TEST_LABEL}=${RUN_ID}`, net], MIN);
    const info = JSON.parse(await must("podman", ["network", "inspect", net], MIN)) as {
      subnets?: { subnet: string; gateway: string }[];
    }[];
    const subnet = info[0]?.subnets?.[0];
    assert.ok(subnet && /^\d+\.\d+\.\d+\.0\/24$/.test(subnet.subnet), JSON.stringify(info));
    const prefix = subnet.subnet.replace(/\.0\/24$/, "");
    console.log(`# bridge network ${net}: subnet ${subnet.subnet}, gateway ${subnet.gateway}`);
    const ipOf: Record<string, string> = { blockworker: `${prefix}.10`, sharder1: `${prefix}.11` };
    for (const i of [1, 2, 3]) ipOf[`miner${i}`] = `${prefix}.${20 + i}`;
    for (const n of [1, 2, 3, 4]) {
      ipOf[`blobber${n}`] = `${prefix}.${30 + n}`;
      ipOf[`validator${n}`] = `${prefix}.${40 + n}`;
    }
    dir = mkdtempSync(join(tmpdir(), "cairn-ct-"));
    chmodSync(dir, 0o755);
    layout = await createLocalnetLayout(dir, {
      miners: 3,
      sharders: 1,
      blobbers: 4,
      bind: "0.0.0.0",
      hostOf: (name) => ipOf[name] ?? assert.fail(`no address for ${name}`),
    });
    // chain nodes keep their data on the container's data volume
    for (const s of [layout.blockworker, ...layout.sharders, ...layout.miners]) {
      const cfg = parse(readFileSync(s.configFile, "utf8")) as Record<string, unknown>;
      writeFileSync(s.configFile, stringify({ ...cfg, data_dir: "/cairn/data" }));
    }
    chownTree(dir);

    const start = async (name: string, image: string, port: number, args: string[]): Promise<void> => {
      const container = `${PREFIX}-${name}`;
      const volume = `${container}-data`;
      await must("podman", ["volume", "create", "--label", `${TEST_LABEL}=${RUN_ID}`, volume], MIN);
      names.push(container);
      await must(
        "podman",
        [
          "run",
          "-d",
          "--name",
          container,
          "--label",
          `${TEST_LABEL}=${RUN_ID}`,
          "--network",
          net,
          "--ip",
          ipOf[name] ?? "",
          "--memory",
          "768m",
          "-e",
          `PORT=${port}`,
          "-v",
          `${dir}:/cairn/config:ro`,
          "-v",
          `${volume}:/cairn/data`,
          `localhost/cairn/${image}:${TAG}`,
          ...args,
        ],
        2 * MIN,
      );
    };
    const port = (url: string): number => Number(new URL(url).port);
    const cfgArgs = (name: string) => ["--config", `/cairn/config/${name}/node.yaml`];
    await start("blockworker", "blockworker", port(layout.blockworker.url), cfgArgs("blockworker"));
    for (const s of layout.sharders) await start(s.name, "sharder", port(s.url), cfgArgs(s.name));
    await waitFor("the block worker", () => ok(`${layout.blockworker.url}/network`), 2 * MIN, logs);
    for (const s of layout.sharders) await waitFor(s.name, () => ok(`${s.url}/_nh/whoami`), 2 * MIN, logs);
    for (const m of layout.miners) await start(m.name, "miner", port(m.url), cfgArgs(m.name));
    for (const m of layout.miners) await waitFor(m.name, () => ok(`${m.url}/_nh/whoami`), 2 * MIN, logs);
    lap("chain containers up");
    const sharder = layout.sharders[0]?.url ?? "";
    await waitFor("round 3 finalized", async () => (await finalizedRound(sharder)) >= 3, 5 * MIN, logs);
    lap("first rounds finalized");
    const providers = layout.providers ?? [];
    for (const p of providers) {
      const common = ["--deployment_mode", "0", "--config_dir", `/cairn/config/blobber${p.n}/config`];
      await start(p.validator.name, "validator", port(p.validator.url), [
        "--port",
        String(port(p.validator.url)),
        "--hostname",
        ipOf[p.validator.name] ?? "",
        ...common,
        "--keys_file",
        `/cairn/config/blobber${p.n}/validator_keys.txt`,
        "--log_dir",
        "/cairn/data/log",
      ]);
      await start(p.blobber.name, "blobber", port(p.blobber.url), [
        "--port",
        String(port(p.blobber.url)),
        "--hostname",
        ipOf[p.blobber.name] ?? "",
        ...common,
        "--keys_file",
        `/cairn/config/blobber${p.n}/keys.txt`,
        "--files_dir",
        "/cairn/data/files",
        "--db_dir",
        "/cairn/data/db",
        "--log_dir",
        "/cairn/data/log",
      ]);
    }
    for (const p of providers)
      for (const s of [p.blobber, p.validator]) await waitFor(s.name, () => ok(`${s.url}/_diagnostics/json`), 3 * MIN, logs);
    await withChain(`${layout.blockworker.url}/dns`, layout.chainId, (client) =>
      registerAndStake(
        client,
        providers.map((p) => ({ id: p.id, validatorId: p.validatorId, delegate: sdk.readWalletFile(p.delegateWalletFile) })),
        STAKE_WAIT,
      ),
    );
    lap("blobbers registered and staked");
  });

  after(() => {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
    const removed = removeLabelled(RUN_ID);
    // the images stay as the next run's cache; the ones this run's build replaced (untagged) go
    spawnSync("podman", ["image", "prune", "-f", "--filter", `label=network.cairn.image_tag=${TAG}`], { stdio: "ignore" });
    if (dir) rmSync(dir, { recursive: true, force: true });
    lap(`removed ${removed.length} containers, volumes and networks`);
    const left = removeLabelled(RUN_ID);
    console.log(`# container test times: ${times()}`);
    assert.deepEqual(left, [], "nothing of this run is left");
  });

  it("uploads a file through the containers with zbox and downloads it byte-exact", async () => {
    await uploadAndDownload(layout.clientConfigDir, join(dir, "client"), 2, 2);
    lap("upload and download through the containers");
  });
});

// The compose files end to end (after the test above, in the same file, so that CI builds the images once):
// docker.local's scripts make the chain (1 sharder, 3 miners) and two blobbers, start each with podman-compose
// from its folder — sharder first, then miners — on a bridge network made here; the CLIs upload and download a
// file through them; every container (podman-compose's project label) and the network are removed after.
const composeSkip = composeTestSkipReason();
describe("compose: the chain and blobbers from docker.local's compose files with podman-compose", {
  skip: composeSkip,
  timeout: 30 * MIN,
}, () => {
  const projects = `cairn-cc${RUN_ID}-`;
  const { lap, restart, times } = stopwatch();
  let dir = "";
  let env: Record<string, string> = {};
  const chainDir = (): string => join(dir, "chain");
  const onSignal = (): void => {
    removeComposeProjects(projects);
    removeLabelled(RUN_ID);
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  };
  const logs = async (): Promise<string> => {
    const ps = await run("podman", ["ps", "-a", "--filter", `name=^${projects}`, "--format", "{{.Names}} {{.Status}}"], 30_000);
    const names = ps.out
      .split("\n")
      .map((l) => l.split(" ")[0] ?? "")
      .filter(Boolean);
    const parts = await Promise.all(
      names.map(async (n) => `\n--- ${n}\n${(await run("podman", ["logs", "--tail", "10", n], 30_000)).out}`),
    );
    return `\n${ps.out}${parts.join("")}`;
  };
  /** A docker.local script run from `cwd` with the test's settings. */
  const script = (name: string, cwd: string, args: string[] = []): Promise<string> =>
    must("bash", ["-c", `cd "$1" && shift && exec bash "$@"`, "script", cwd, join(BIN, name), ...args], 5 * MIN, env);

  before(async () => {
    restart();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    const left = [...removeComposeProjects(), ...removeLeftovers()];
    if (left.length > 0) console.log(`# removed what an earlier run left: ${left.join(", ")}`);
    // the images the test above built (built here only when this test runs alone on a machine without them)
    const roles = ["sharder", "miner", "blockworker", "blobber", "validator"];
    const have = await Promise.all(
      roles.map(async (r) => (await run("podman", ["image", "exists", `localhost/cairn/${r}:${TAG}`], MIN)).code === 0),
    );
    if (have.includes(false)) {
      await must("bash", [join(BIN, "build.base.sh")], 20 * MIN);
      await must("bash", [join(BIN, "build.image.sh"), ...roles], 20 * MIN, { IMAGE_TAG: TAG });
    }
    lap("images (found or built)");
    // the bridge network, made here (podman picks a free subnet) and passed to the scripts, which check it
    const net = `${projects}net`;
    await must("podman", ["network", "create", "--driver", "bridge", "--label", `${TEST_LABEL}=${RUN_ID}`, net], MIN);
    const info = JSON.parse(await must("podman", ["network", "inspect", net], MIN)) as {
      subnets?: { subnet: string; gateway: string }[];
    }[];
    const subnet = info[0]?.subnets?.[0];
    assert.ok(subnet, JSON.stringify(info));
    dir = mkdtempSync(join(tmpdir(), "cairn-cc-"));
    chmodSync(dir, 0o755);
    // ports published on the host: a free base (the defaults 9091/70xx/71xx/50xx may be taken by a local network)
    const base = await findFreeBase({ offsets: portOffsets(3, 1, 2), host: "0.0.0.0" });
    env = {
      ENGINE: "podman",
      NETWORK: net,
      SUBNET: subnet.subnet,
      GATEWAY: subnet.gateway,
      BASE_PORT: String(base),
      IMAGE_TAG: TAG,
      PROJECT_PREFIX: projects,
      CHAIN_DIR: chainDir(),
      BLOBBERS: "2",
      BLOBBERS_DIR: dir,
    };
    console.log(`# network ${net} (${subnet.subnet}, gateway ${subnet.gateway}), ports from ${base}`);
    await script("chain.init.setup.sh", REPO);
    // the block worker, then the sharder, then the miners (the miner's script refuses before the sharder answers)
    await script("blockworker.start.sh", join(chainDir(), "blockworker"), ["-d"]);
    await script("sharder.start_bls.sh", join(chainDir(), "sharder1"), ["-d"]);
    const sharder = `http://${subnet.gateway}:${base + 50}`;
    await waitFor("sharder1", () => ok(`${sharder}/_nh/whoami`), 3 * MIN, logs);
    for (const m of [1, 2, 3]) await script("miner.start_bls.sh", join(chainDir(), `miner${m}`), ["-d"]);
    await waitFor("round 3 finalized", async () => (await finalizedRound(sharder)) >= 3, 5 * MIN, logs);
    lap("chain up with podman-compose");
    await script("blobber.init.setup.sh", REPO);
    for (const n of [1, 2]) await script("blobber.start_bls.sh", join(dir, `blobber${n}`), ["-d"]);
    try {
      await withChain(`http://${subnet.gateway}:${base}/dns`, sdk.DEFAULT_CHAIN_ID, async (client) => {
        const keyOf = (file: string): string => readFileSync(file, "utf8").split("\n")[0] ?? "";
        const targets = [1, 2].map((n) => ({
          id: clientIdOf(keyOf(join(dir, `blobber${n}`, "config", "keys.txt"))),
          validatorId: clientIdOf(keyOf(join(dir, `blobber${n}`, "config", "validator_keys.txt"))),
          delegate: sdk.readWalletFile(join(dir, `blobber${n}`, "delegate_wallet.json")),
        }));
        // each folder's delegate wallet gets tokens from the faucet (docs/deploy.md's step), then stakes
        for (const { delegate } of targets) {
          await client.registerClient(delegate);
          // under 10 ZCN per pour (the faucet gives 1 ZCN otherwise); the stakes are 10 + 1 ZCN
          for (const _ of [1, 2])
            await client.execute(delegate, {
              type: sdk.TxnType.smartContract,
              toClientId: sdk.ScAddress.faucet,
              value: 9n * sdk.SAS_PER_ZCN,
              data: JSON.stringify({ name: "pour", input: "{}" }),
            });
        }
        await registerAndStake(client, targets, STAKE_WAIT);
      });
    } catch (err) {
      assert.fail(`${errorMessage(err)}${await logs()}`);
    }
    lap("blobbers up with podman-compose, registered and staked");
  });

  after(() => {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
    const removed = [...removeComposeProjects(projects), ...removeLabelled(RUN_ID)];
    if (dir) rmSync(dir, { recursive: true, force: true });
    lap(`removed ${removed.length} containers and the network`);
    console.log(`# compose test times: ${times()}`);
    assert.deepEqual([...removeComposeProjects(projects), ...removeLabelled(RUN_ID)], [], "nothing of this run is left");
  });

  it("uploads and downloads a file byte-exact through the compose-started network", async () => {
    await uploadAndDownload(join(chainDir(), "zcn"), join(dir, "client"), 1, 1);
    lap("upload and download");
  });
});
