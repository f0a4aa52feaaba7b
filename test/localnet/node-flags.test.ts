// Programs started by the local network (and the storage bench) get the node flags of their own first line, so a
// blobber runs with the same V8 settings whether an operator starts it or `npm start` does; zbox and zwallet carry
// theirs in the same place.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { nodeCommand, shebangEnv, shebangFlags } from "../../src/localnet/processes.js";

const bin = (name: string) => resolve(import.meta.dirname, `../../src/bin/${name}.js`);

describe("node flags from a program's first line", () => {
  it("reads the settings and flags of `#!/usr/bin/env -S [NAME=value…] node …`, and none from a plain or missing shebang", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-shebang-"));
    try {
      const f = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        return join(dir, name);
      };
      const a = f("a.js", "#!/usr/bin/env -S MALLOC_ARENA_MAX=2 A_B=x=y node --max-semi-space-size=4 --x=1\nrun();\n");
      assert.deepEqual(shebangFlags(a), ["--max-semi-space-size=4", "--x=1"]);
      assert.deepEqual(shebangEnv(a), { MALLOC_ARENA_MAX: "2", A_B: "x=y" });
      const b = f("b.js", "#!/usr/bin/env node\n");
      assert.deepEqual([shebangFlags(b), shebangEnv(b)], [[], {}]);
      const c = f("c.js", "// --not-a-flag X=1\n");
      assert.deepEqual([shebangFlags(c), shebangEnv(c)], [[], {}]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("starts a blobber with its program's flags; zbox, zwallet and the blobber cap malloc arenas and V8's semi-space", () => {
    for (const name of ["zbox", "zwallet", "blobber"]) {
      assert.ok(shebangFlags(bin(name)).includes("--max-semi-space-size=4"), name);
      assert.deepEqual(shebangEnv(bin(name)), { MALLOC_ARENA_MAX: "2" }, name);
    }
    const cmd = nodeCommand({ name: "blobber1", role: "blobber", configFile: "", url: "", args: ["--port", "5051"] });
    assert.deepEqual(cmd, ["--max-semi-space-size=4", "--initial-old-space-size=64", bin("blobber"), "--port", "5051"]);
  });
});
