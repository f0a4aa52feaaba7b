#!/usr/bin/env node
// Runs node:test over the compiled test files (dist/test/**/*.test.js), or over the files given.
// A test without a timeout of its own gets CAIRN_TEST_TIMEOUT_MS (30 min; node applies it to each file as well); the whole run is bounded by
// CAIRN_TEST_WATCHDOG_MIN (50 min): past it, the test files still running are named with their age and the run
// fails, so a hang shows where it is instead of eating the CI's time. No --test-force-exit: it drops the tail of a
// file's results, and of the run's report, when it exits (nodejs/node#64833), so a test file must close what it opens.
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith(".test.js")) out.push(p);
  }
  return out;
}

const args = process.argv.slice(2);
const files = args.length > 0 ? args.map((a) => (a.startsWith("dist/") ? a : join("dist", a))) : walk("dist/test", []).sort();
if (files.length === 0) {
  console.error("run-tests: no compiled test files under dist/test (did the build run?)");
  process.exit(1);
}
const testTimeout = Number(process.env.CAIRN_TEST_TIMEOUT_MS ?? 1_800_000);
const watchdogMin = Number(process.env.CAIRN_TEST_WATCHDOG_MIN ?? 50);
const started = Date.now();
const child = spawn(
  process.execPath,
  [
    "--test",
    "--test-concurrency=2",
    `--test-timeout=${testTimeout}`,
    "--test-reporter=spec",
    ...files.map((f) => relative(".", f)),
  ],
  { stdio: "inherit", env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } },
);

/** The test files the runner is executing now, with how long each has run (from ps). */
function running() {
  const ps = spawnSync("ps", ["-o", "pid=,etimes=,args=", "--ppid", String(child.pid)], { encoding: "utf8" });
  return (ps.stdout ?? "")
    .split("\n")
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m) => m !== null)
    .map((m) => `  ${m[3].split(" ").find((a) => a.endsWith(".test.js")) ?? m[3]} (running ${m[2]} s, pid ${m[1]})`);
}

const watchdog = setTimeout(() => {
  const mins = ((Date.now() - started) / 60_000).toFixed(1);
  console.error(`run-tests: the suite ran past its ${watchdogMin} min bound (${mins} min); still running:`);
  for (const line of running()) console.error(line);
  spawnSync("pkill", ["-KILL", "-P", String(child.pid)]);
  child.kill("SIGKILL");
  process.exit(1);
}, watchdogMin * 60_000);
watchdog.unref();
child.on("exit", (code) => {
  clearTimeout(watchdog);
  process.exit(code ?? 1);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
