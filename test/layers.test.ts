// The layer map (DEVELOPERS.md, ARCHITECTURE.md) as a test: a file that imports across it fails here.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "..", "..");
const SRC = join(ROOT, "src");

/** layer -> layers it may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  core: [],
  chain: ["core"],
  storage: ["core", "chain"],
  contracts: ["core", "chain", "storage"],
  nodes: ["core", "chain", "storage", "contracts", "sdk"],
  sdk: ["core", "chain", "storage"],
  cli: ["sdk"],
  localnet: ["core", "chain", "storage", "contracts", "nodes", "sdk"],
  orchestrate: ["core"],
  bin: ["core", "chain", "storage", "contracts", "nodes", "sdk", "cli", "localnet", "orchestrate"],
};
const PURE = new Set(["core", "chain", "storage", "contracts"]);
/** Layers that may be imported only through their public entry file (nodes use the sdk as a client). */
const ENTRY_ONLY: Record<string, string> = { sdk: "sdk/index.js" };
/** A second entry a layer may use besides ENTRY_ONLY's: the nodes' entry into the sdk (transport internals). */
const SECOND_ENTRY: Record<string, Record<string, string>> = { nodes: { sdk: "sdk/internal.js" } };
/** Modules that do I/O; a pure layer may not import them. */
const IO_MODULES = [
  /^node:(fs|net|http|https|child_process|dgram|worker_threads|cluster|os)(\/|$)/,
  /^(fs|net|http|https|child_process)$/,
  /^undici/,
  /^lmdb/,
  /^pino/,
];

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith(".ts")) out.push(p);
  }
  return out;
}

function importsOf(source: string): string[] {
  const out: string[] = [];
  const re =
    /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s+["']([^"']+)["']/g;
  for (const m of source.matchAll(re)) out.push((m[1] ?? m[2] ?? m[3]) as string);
  return out;
}

/**
 * Layer-map violations in `files` (path relative to src → source text). Returns one line per violation,
 * naming the file, its layer and the import that crosses the map.
 */
function layerViolations(files: Map<string, string>): string[] {
  const violations: string[] = [];
  for (const [rel, source] of files) {
    const layer = rel.split("/")[0] as string;
    const allowed = ALLOWED[layer];
    if (!allowed) {
      violations.push(`${rel}: unknown layer folder src/${layer}`);
      continue;
    }
    for (const spec of importsOf(source)) {
      if (spec.startsWith(".")) {
        const target = relative(SRC, resolve(SRC, dirname(rel), spec));
        const tLayer = target.split("/")[0] as string;
        if (target.startsWith("..")) violations.push(`${rel}: imports outside src: ${spec}`);
        else if (tLayer !== layer && !allowed.includes(tLayer)) violations.push(`${rel} (${layer}) imports ${tLayer}: ${spec}`);
        else if (
          tLayer !== layer &&
          layer !== "localnet" &&
          layer !== "bin" &&
          ENTRY_ONLY[tLayer] &&
          target.replace(/\.ts$/, ".js") !== ENTRY_ONLY[tLayer] &&
          target.replace(/\.ts$/, ".js") !== SECOND_ENTRY[layer]?.[tLayer]
        )
          violations.push(`${rel} (${layer}) imports ${tLayer} internals (use ${ENTRY_ONLY[tLayer]}): ${spec}`);
      } else if (PURE.has(layer) && IO_MODULES.some((re) => re.test(spec))) {
        violations.push(`${rel}: pure layer ${layer} imports I/O module ${spec}`);
      }
    }
  }
  return violations;
}

test("every import follows the layer map", () => {
  const files = new Map(walk(SRC, []).map((f) => [relative(SRC, f), readFileSync(f, "utf8")]));
  assert.ok(files.size > 50, "the source tree was found");
  assert.deepEqual(layerViolations(files), []);
});

test("the layer check reports a fixture that violates the map", () => {
  const fixture = new Map([
    ["core/upward.ts", 'import { MinerNode } from "../nodes/miner/miner.js";'],
    ["chain/io.ts", 'import { readFileSync } from "node:fs";'],
    ["cli/deep.ts", 'import { ChainClient } from "../sdk/chain.js";'],
    ["nodes/ok.ts", 'import * as sdk from "../sdk/index.js";\nimport { Trie } from "../chain/trie.js";'],
    ["nodes/twin.ts", 'import { makeResponse } from "../sdk/internal.js";'],
    ["nodes/deep.ts", 'import { requestAll } from "../sdk/multi.js";'],
    ["cli/twin.ts", 'import { makeResponse } from "../sdk/internal.js";'],
    ["sdk/escape.ts", 'export { x } from "../../test/x.js";'],
    ["storagex/new.ts", "export const x = 1;"],
  ]);
  assert.deepEqual(layerViolations(fixture), [
    "core/upward.ts (core) imports nodes: ../nodes/miner/miner.js",
    "chain/io.ts: pure layer chain imports I/O module node:fs",
    "cli/deep.ts (cli) imports sdk internals (use sdk/index.js): ../sdk/chain.js",
    "nodes/deep.ts (nodes) imports sdk internals (use sdk/index.js): ../sdk/multi.js",
    "cli/twin.ts (cli) imports sdk internals (use sdk/index.js): ../sdk/internal.js",
    "sdk/escape.ts: imports outside src: ../../test/x.js",
    "storagex/new.ts: unknown layer folder src/storagex",
  ]);
});

/**
 * The only files of nodes, sdk, localnet and cli that may read the wall clock, set a timer or draw ambient
 * randomness: the sdk's ambient module and the nodes' Clock.
 */
const AMBIENT_FILES = new Set(["nodes/io/clock.ts", "sdk/ambient.ts"]);

test("nodes, sdk, localnet and cli read time and randomness only through the injected clock and draw", () => {
  const found: string[] = [];
  for (const layer of ["nodes", "sdk", "localnet", "cli"]) {
    for (const file of walk(join(SRC, layer), [])) {
      const rel = relative(SRC, file);
      if (AMBIENT_FILES.has(rel)) continue;
      const lines = readFileSync(file, "utf8").split("\n");
      for (const [i, line] of lines.entries())
        if (
          /\bDate\.now\(|\bMath\.random\(|new Date\(\)|(?<!\.)\bsetTimeout\(|(?<!\.)\brandomBytes\(/.test(
            line.replace(/\/\/.*$/, ""),
          )
        )
          found.push(`${rel}:${i + 1}: ${line.trim()}`);
    }
  }
  assert.deepEqual(found, []);
});
