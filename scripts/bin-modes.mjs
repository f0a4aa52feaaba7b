// After `tsc`: make every command listed in package.json "bin" executable. tsc writes files without the
// executable bit, and `npx zbox` / `npx zwallet` on a fresh clone run the file itself ("Permission denied"
// without it).
import { chmodSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
for (const file of Object.values(pkg.bin ?? {})) {
  const path = join(root, file);
  chmodSync(path, statSync(path).mode | 0o111);
}
