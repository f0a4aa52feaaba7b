/**
 * What the container test needs of podman/buildah: whether they are here, running a command with a bound time,
 * and removing everything labelled with one test run's label (containers, volumes, network) — also what an
 * earlier run that was killed left behind.
 */
import { spawn, spawnSync } from "node:child_process";

/** The label every container, volume and network of a container test run carries (value: the run's pid). */
export const TEST_LABEL = "network.cairn.container-test";

/** Why the container test cannot run here, or undefined when it can. */
export function containerTestSkipReason(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CAIRN_CONTAINER_TEST === "0") return "CAIRN_CONTAINER_TEST=0";
  const missing = ["podman", "buildah", "runc", "debootstrap"].filter(
    (t) => spawnSync("/bin/sh", ["-c", `command -v ${t}`], { stdio: "ignore", env }).status !== 0,
  );
  if (missing.length > 0)
    return `${missing.join(", ")} not installed (apt-get install buildah podman runc debootstrap; .ci/run does)`;
  if (process.getuid?.() !== 0) return "needs root (rootful podman: the test reaches the containers on their bridge network)";
  return undefined;
}

export interface Run {
  code: number;
  out: string;
}

/** Run `cmd args…`, output (stdout and stderr) captured; killed after `timeoutMs`. */
export function run(cmd: string, args: string[], timeoutMs: number, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((res) => {
    const c = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const add = (d: Buffer): void => {
      out += d.toString();
      if (out.length > 400_000) out = out.slice(-200_000);
    };
    c.stdout.on("data", add);
    c.stderr.on("data", add);
    const timer = setTimeout(() => {
      out += `\n[killed after ${timeoutMs / 1000} s]`;
      c.kill("SIGKILL");
    }, timeoutMs);
    c.on("error", (err) => {
      out += String(err);
    });
    c.on("close", (code) => {
      clearTimeout(timer);
      res({ code: code ?? -1, out });
    });
  });
}

/** Run and fail with the command's output when it does not succeed. */
export async function must(cmd: string, args: string[], timeoutMs: number, env: Record<string, string> = {}): Promise<string> {
  const r = await run(cmd, args, timeoutMs, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.code}:\n${r.out.slice(-4000)}`);
  return r.out;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Remove the containers, volumes and networks labelled {@link TEST_LABEL}=`value` (synchronous, so that it also
 * runs from a signal handler). Returns what it removed.
 */
export function removeLabelled(value: string): string[] {
  const filter = `label=${TEST_LABEL}=${value}`;
  const list = (args: string[]): string[] =>
    (spawnSync("podman", args, { encoding: "utf8" }).stdout ?? "")
      .split("\n")
      .map((s) => s.trim())
      .filter(Boolean);
  const removed: string[] = [];
  const containers = list(["ps", "-a", "--filter", filter, "--format", "{{.Names}}"]);
  if (containers.length > 0) spawnSync("podman", ["rm", "-f", "-v", "-t", "0", ...containers], { stdio: "ignore" });
  removed.push(...containers);
  const volumes = list(["volume", "ls", "--filter", filter, "--format", "{{.Name}}"]);
  if (volumes.length > 0) spawnSync("podman", ["volume", "rm", "-f", ...volumes], { stdio: "ignore" });
  removed.push(...volumes);
  const networks = list(["network", "ls", "--filter", filter, "--format", "{{.Name}}"]);
  if (networks.length > 0) spawnSync("podman", ["network", "rm", "-f", ...networks], { stdio: "ignore" });
  removed.push(...networks);
  return removed;
}

/** Remove what earlier runs whose process is gone left behind (a run killed before its cleanup). */
export function removeLeftovers(): string[] {
  const labels = (what: string[]): string =>
    spawnSync("podman", [...what, "--filter", `label=${TEST_LABEL}`, "--format", `{{index .Labels "${TEST_LABEL}"}}`], {
      encoding: "utf8",
    }).stdout ?? "";
  const runs = new Set(
    [labels(["ps", "-a"]), labels(["network", "ls"]), labels(["volume", "ls"])]
      .join("\n")
      .split("\n")
      .map((s) => s.trim())
      .filter((s) => /^\d+$/.test(s) && !isAlive(Number(s))),
  );
  return [...runs].flatMap((v) => removeLabelled(v));
}

/** The label podman-compose puts on every container it makes (value: the compose project's name). */
const COMPOSE_PROJECT_LABEL = "io.podman.compose.project";

/**
 * Remove the containers of the compose projects named `<prefix>…` (what a compose test started through
 * docker.local's scripts); with no prefix, those of compose tests (`cairn-cc<pid>-…`) whose process is gone.
 */
export function removeComposeProjects(prefix?: string): string[] {
  const rows = (
    spawnSync("podman", ["ps", "-a", "--filter", `label=${COMPOSE_PROJECT_LABEL}`, "--format", "{{.Names}}"], {
      encoding: "utf8",
    }).stdout ?? ""
  )
    .split("\n")
    .map((s) => s.trim())
    .filter(Boolean);
  const gone = rows.filter((n) => {
    if (prefix) return n.startsWith(prefix);
    const m = /^cairn-cc(\d+)-/.exec(n);
    return m !== null && !isAlive(Number(m[1]));
  });
  if (gone.length > 0) spawnSync("podman", ["rm", "-f", "-t", "0", ...gone], { stdio: "ignore" });
  return gone;
}

/** Why the compose test cannot run here (podman-compose missing, or the container test's own reasons). */
export function composeTestSkipReason(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const base = containerTestSkipReason(env);
  if (base) return base;
  if (spawnSync("/bin/sh", ["-c", "command -v podman-compose"], { stdio: "ignore", env }).status !== 0)
    return "podman-compose not installed (apt-get install podman-compose; .ci/run does): Debian 12's podman 4.3 has no `podman compose`";
  return undefined;
}
