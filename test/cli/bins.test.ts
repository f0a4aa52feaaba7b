// The commands package.json publishes run as files: `npx zbox` / `npx zwallet` on a fresh clone execute
// dist/src/bin/*.js directly, which needs the shebang and the executable bit (tsc sets neither mode; the build
// script does). Failed on a fresh clone before scripts/bin-modes.mjs: "sh: 1: zwallet: Permission denied".
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";

const root = join(import.meta.dirname, "..", "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string> };

describe("published commands", () => {
  for (const [name, file] of Object.entries(pkg.bin)) {
    it(`${name} (${file}) is an executable node script`, async () => {
      const path = join(root, file);
      assert.ok((statSync(path).mode & 0o100) !== 0, `${file} is not executable`);
      // plain, or with settings and node flags (`env -S` splits them; zbox and zwallet set malloc and V8 limits)
      assert.match(
        readFileSync(path, "utf8").split("\n", 1)[0] ?? "",
        /^#!\/usr\/bin\/env (node|-S( [A-Z_]+=\S+)* node( --[\w=-]+)+)$/,
        `${file} lacks the node shebang`,
      );
      if (name === "zbox" || name === "zwallet") {
        const { stdout } = await promisify(execFile)(path, ["--help"]);
        assert.match(stdout, new RegExp(`Usage: ${name}`));
      }
    });
  }
});
