import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { parseYaml } from "../../src/core/fields.js";
import { parseFlatYaml } from "../../src/core/flat-yaml.js";

/** A small seeded generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CONFIG = `block_worker: http://127.0.0.1:31310/dns
signature_scheme: bls0chain
min_submit: 50 # in percentage
min_confirmation: 50 # in percentage
confirmation_chain_length: 3
max_txn_query: 5
query_sleep_time: 5
chain_id: 0afc093ffb509f059c55478bc1a60351cef7b4e9c008a53a6cc8241ca8617dfe
`;

/** Values chosen to sit on both sides of what the fast path accepts. */
const VALUES = [
  "bls0chain",
  "ed25519",
  "http://127.0.0.1:9091/dns",
  "https://a.b/c-d_e",
  "0afc09",
  "50",
  "0",
  "007",
  "1e5",
  "12E4",
  "1.5",
  ".5",
  "0x1F",
  "0o17",
  "true",
  "false",
  "True",
  "FALSE",
  "null",
  "Null",
  "~",
  "yes",
  "no",
  "on",
  "-1",
  "+3",
  "1_000",
  "a:b",
  "a:",
  "'q'",
  '"q"',
  "[1]",
  "{a: 1}",
  "&x",
  "*x",
  "!t",
  "|",
  ">",
  "a#b",
  "999999999999999",
  "9999999999999999999",
  ".inf",
  ".nan",
  "x.y",
  "_u",
  "a-b",
  "2024-01-01",
  "12:30",
];

describe("flat YAML fast path", () => {
  it("reads config.yaml as the yaml library does", () => {
    assert.deepEqual(parseFlatYaml(CONFIG), parse(CONFIG));
    assert.deepEqual(parseYaml(CONFIG, "config.yaml"), parse(CONFIG));
  });

  it("gives the library's result or leaves the document to it, for every value and layout (seeded)", () => {
    const next = rng(18);
    const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)] as T;
    let fast = 0;
    for (let n = 0; n < 20000; n++) {
      const lines: string[] = [];
      const count = 1 + Math.floor(next() * 4);
      for (let k = 0; k < count; k++) {
        const key = pick(["a", "b", "min_submit", "chain_id", "true", "null", "k2", " a", "a b", "_x"]);
        const sep = pick([": ", ":  ", ":", ":\t", " : "]);
        const tail = pick(["", " # note", "# note", "  #", " "]);
        lines.push(`${key}${sep}${pick(VALUES)}${tail}`);
        if (next() < 0.2) lines.push(pick(["", "# comment", "  ", "---", "  nested: 1", "- item"]));
      }
      const text = lines.join(pick(["\n", "\r\n"]));
      const flat = parseFlatYaml(text);
      if (flat === undefined) continue;
      fast++;
      let lib: unknown;
      try {
        lib = parse(text);
      } catch (err) {
        assert.fail(`the fast path read ${JSON.stringify(text)} the library refuses: ${(err as Error).message}`);
      }
      assert.deepEqual(flat, lib ?? {}, JSON.stringify(text));
    }
    assert.ok(fast > 200, `the fast path read ${fast} of 20000 documents`);
  });

  it("reads integers as bigints when asked, and leaves what it is unsure of to the library", () => {
    assert.deepEqual(parseFlatYaml("a: 5\nb: x\n", true), { a: 5n, b: "x" });
    assert.deepEqual(parseFlatYaml(""), {});
    for (const doc of ["a: 1\na: 2", "a:\n  b: 1", "a: 1.5", "a: 'x'", "a: [1]", "- 1", "a: null", "a: 1e3", "a: x: y"])
      assert.equal(parseFlatYaml(doc), undefined, doc);
    // the library's refusal of a duplicate key is kept
    assert.throws(() => parseYaml("a: 1\na: 2\n", "c.yaml"), /c\.yaml: not valid YAML/);
  });
});
