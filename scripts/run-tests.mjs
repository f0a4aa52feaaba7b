#!/usr/bin/env node
// Runs node:test over the compiled test files (dist/test/**/*.test.js), or over the files given.
import { spawnSync } from "node:child_process";
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
const res = spawnSync(
  process.execPath,
  ["--test", "--test-concurrency=2", "--test-force-exit", "--test-reporter=spec", ...files.map((f) => relative(".", f))],
  {
    stdio: "inherit",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
  },
);
process.exit(res.status ?? 1);
