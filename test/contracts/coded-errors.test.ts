// Every refusal of a contract is a CodedError with a code of its catalogue: no bare `new Error(` under src/contracts.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";

const DIR = join(resolve(import.meta.dirname, "..", "..", ".."), "src", "contracts");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

test("contracts throw no bare Error", () => {
  assert.ok(files(DIR).length > 20, `the contracts' sources are at ${DIR}`);
  const found = files(DIR).flatMap((f) =>
    readFileSync(f, "utf8")
      .split("\n")
      .map((line, i) => ({ f, line: i + 1, text: line }))
      .filter((l) => /\bnew (Type|Range)?Error\(/.test(l.text)),
  );
  assert.deepEqual(
    found.map((x) => `${x.f.slice(DIR.length + 1)}:${x.line}`),
    [],
    "throw a CodedError with a code of the contract's catalogue",
  );
});
