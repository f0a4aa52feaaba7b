#!/usr/bin/env node
// After `tsc`: bundle zbox and zwallet (each with everything it imports, ours and the libraries') into one module
// per program under dist/cli/, with bls-wasm split into a chunk of its own that is loaded only when a command
// signs or verifies with bls0chain. Node then reads and compiles a few files instead of about 330 (undici alone is
// 112), which is most of a command's start-up time. package.json "bin" points at these files; the tests and the
// benches run them, so what is tested is what a user runs.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const outdir = join(root, "dist/cli");
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { zbox: join(root, "dist/src/bin/zbox.js"), zwallet: join(root, "dist/src/bin/zwallet.js") },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outExtension: { ".js": ".mjs" },
  chunkNames: "chunks/[name]-[hash]",
  // bundled CommonJS libraries call require() for Node's built-ins and read __dirname / __filename
  banner: {
    js: [
      'import { createRequire as __cairnRequire } from "node:module";',
      'import { fileURLToPath as __cairnPath } from "node:url";',
      "const require = __cairnRequire(import.meta.url);",
      "const __filename = __cairnPath(import.meta.url);",
      'const __dirname = __cairnPath(new URL(".", import.meta.url));',
    ].join(" "),
  },
  logLevel: "warning",
  legalComments: "none",
});
