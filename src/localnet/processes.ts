/**
 * Running a local network as separate OS processes: one `cairn-node` per node, logs to files, readiness by
 * HTTP polling, clean shutdown on Ctrl-C (SIGTERM to every child, SIGKILL after a grace period).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Agent, request } from "undici";
import { type Clock, SystemClock } from "../nodes/io/clock.js";
import * as sdk from "../sdk/index.js";

/** One process of the local network. */
export interface NodeProcessSpec {
  name: string;
  role: "miner" | "sharder" | "blockworker" | "blobber" | "validator";
  configFile: string;
  url: string;
  /** Blobbers and validators: the program's flags (they are started as `<role> <args>`, not from a node.yaml). */
  args?: string[];
  /** Over HTTPS: the network's CA certificate (the readiness poll trusts it; the node gets NODE_EXTRA_CA_CERTS). */
  caFile?: string;
}

export interface RunningNode {
  spec: NodeProcessSpec;
  child: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
}

/** Path of the compiled node entry point. */
export function nodeBinPath(): string {
  return resolve(import.meta.dirname, "../bin/node.js");
}

/** The words of a program's first line when it is a `#!` line (none otherwise). */
function shebangWords(file: string): string[] {
  const first = readFileSync(file, "utf8").split("\n", 1)[0] ?? "";
  return first.startsWith("#!") ? first.split(/\s+/) : [];
}

/**
 * The node flags on a program's first line (`#!/usr/bin/env -S [NAME=value…] node --flag…`): a program started as
 * `node <file>` runs with the same flags as when it is started on its own.
 */
export function shebangFlags(file: string): string[] {
  return shebangWords(file).filter((w) => w.startsWith("--"));
}

/** The environment settings on a program's first line (`NAME=value` before `node`), for the same reason. */
export function shebangEnv(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const w of shebangWords(file)) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(w);
    if (m) env[m[1] as string] = m[2] as string;
  }
  return env;
}

/** The program a role runs from (blobbers and validators have their own; the chain roles share cairn-node). */
function programOf(spec: NodeProcessSpec): string {
  return spec.role === "blobber" || spec.role === "validator"
    ? resolve(import.meta.dirname, `../bin/${spec.role}.js`)
    : nodeBinPath();
}

/** The command line (after `node`) that runs `spec`. */
export function nodeCommand(spec: NodeProcessSpec): string[] {
  const bin = programOf(spec);
  if (spec.role === "blobber" || spec.role === "validator") return [...shebangFlags(bin), bin, ...(spec.args ?? [])];
  return [bin, spec.role, "--config", spec.configFile];
}

/**
 * Start one node process; stdout and stderr go to `<logDir>/<name>.log`. `nodeFlags` go to node before the
 * program (the bench's `--cpu-prof`, which NODE_OPTIONS does not allow).
 */
export function startNode(spec: NodeProcessSpec, logDir: string, nodeFlags: string[] = []): RunningNode {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${spec.name}.log`);
  const fd = openSync(logFile, "a");
  const child = spawn(process.execPath, [...nodeFlags, ...nodeCommand(spec)], {
    env: {
      ...process.env,
      ...shebangEnv(programOf(spec)),
      ...(spec.caFile ? { NODE_EXTRA_CA_CERTS: spec.caFile } : {}),
    },
    stdio: ["ignore", fd, fd],
    detached: false,
  });
  closeSync(fd);
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  return { spec, child, logFile, exited };
}

/** Poll `url` until it answers HTTP 200 or `timeoutMs` passes (then throws naming the node and its log). */
export async function waitReady(
  node: RunningNode,
  path: string,
  timeoutMs: number,
  clock: Clock = new SystemClock(),
): Promise<void> {
  const deadline = clock.now() + timeoutMs;
  let last = "";
  let exitCode: number | null | undefined;
  node.exited.then((c) => {
    exitCode = c;
  });
  const dispatcher = node.spec.caFile
    ? new Agent({ connect: { ca: readFileSync(node.spec.caFile, "utf8") }, keepAliveTimeout: 1000 })
    : undefined;
  try {
    return await poll();
  } finally {
    await dispatcher?.close();
  }

  async function poll(): Promise<void> {
    while (clock.now() < deadline) {
      if (exitCode !== undefined)
        throw new Error(`${node.spec.name} exited with code ${exitCode} while starting; see ${node.logFile}`);
      try {
        // undici's request, not fetch: fetch refuses the WHATWG "bad ports", and 5060/5061 (SIP) are among them
        // while 5061 is the reference's first validator port
        const res = await request(`${node.spec.url}${path}`, {
          headersTimeout: 2000,
          bodyTimeout: 2000,
          ...(dispatcher ? { dispatcher } : {}),
        });
        await res.body.dump();
        if (res.statusCode === 200) return;
        last = `HTTP ${res.statusCode}`;
      } catch (err) {
        last = (err as Error).message;
      }
      await clock.sleep(200);
    }
    throw new Error(`${node.spec.name} at ${node.spec.url} not ready after ${timeoutMs} ms (${last}); see ${node.logFile}`);
  }
}

/** SIGKILL the nodes still running (a second Ctrl-C: the user does not wait for the grace period). */
export function killNodes(nodes: RunningNode[]): void {
  for (const n of nodes) if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill("SIGKILL");
}

/** Stop nodes: SIGTERM, then SIGKILL whatever is still running after `graceMs`. */
export async function stopNodes(nodes: RunningNode[], graceMs = 5000): Promise<void> {
  for (const n of nodes) if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill("SIGTERM");
  const timer = sdk.systemTimer(() => {
    for (const n of nodes) if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill("SIGKILL");
  }, graceMs);
  await Promise.all(nodes.map((n) => n.exited));
  clearTimeout(timer);
}
