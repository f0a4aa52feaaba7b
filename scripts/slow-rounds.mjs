#!/usr/bin/env node
/**
 * The rounds of a bench network that took longer than a threshold, and what each miner traced in them.
 *
 *   node scripts/slow-rounds.mjs <network dir> [--min-ms 1000] [--trace <BENCH_TRACE file>.<rate>] [--lines 40]
 *
 * <network dir> is the directory `bench/run.ts` prints ("Network directory: ..."; kept after the bench). The miners
 * must have run with `log_level: debug` (the bench: BENCH_TRACE or BENCH_LOG_LEVEL=debug) for their consensus trace
 * (`trace ...` lines: round entered, beacon, proposal, proposed, vote, ticket, notarized, soft timeout with each
 * candidate's state, vote due with no valid candidate, parent missing, checked ahead). A round's time is from the
 * first miner entering it to the first miner entering a later one. For each slow round: the finalized block of that
 * round in the sharder's block files (generator, transactions, `round_timeout_count`), each miner's trace lines of
 * the round (ms from the round's start) and its warnings; with --trace, how many transfers were waiting across it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const dir = args[0];
if (!dir || dir.startsWith("--")) {
  console.error("usage: node scripts/slow-rounds.mjs <network dir> [--min-ms 1000] [--trace <file>] [--lines 40]");
  process.exit(2);
}
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i > 0 ? args[i + 1] : dflt;
};
const minMs = Number(opt("--min-ms", 1000));
const maxLines = Number(opt("--lines", 40));
const traceFile = opt("--trace", undefined);

// ---- the miners' logs: trace lines and warnings, by round
const logDir = join(dir, "logs");
const miners = readdirSync(logDir)
  .filter((f) => /^miner\d+\.log$/.test(f))
  .sort();
/** round -> miner -> first time it entered the round (ms) */
const entered = new Map();
/** round -> [{ t, miner, text }] */
const byRound = new Map();
const idName = new Map();
for (const f of miners) {
  const name = f.replace(/\.log$/, "");
  for (const line of readFileSync(join(logDir, f), "utf8").split("\n")) {
    if (!line) continue;
    let j;
    try {
      j = JSON.parse(line);
    } catch {
      continue;
    }
    const msg = String(j.msg ?? "");
    const t = Date.parse(j.time);
    const who = /^miner ([0-9a-f]+) listening/.exec(msg);
    if (who) idName.set(who[1], name);
    const traced = msg.startsWith("trace ");
    if (!traced && j.level < 40 && !msg.startsWith("round timed out")) continue;
    const brace = msg.indexOf(" {");
    let data = {};
    if (brace > 0)
      try {
        data = JSON.parse(msg.slice(brace + 1));
      } catch {
        data = {};
      }
    const round = Number(data.round);
    if (!Number.isSafeInteger(round)) continue;
    const what = (brace > 0 ? msg.slice(0, brace) : msg).replace(/^trace /, "");
    if (what === "round entered") {
      let m = entered.get(round);
      if (!m) {
        m = new Map();
        entered.set(round, m);
      }
      if (!m.has(name)) m.set(name, t);
    }
    let list = byRound.get(round);
    if (!list) {
      list = [];
      byRound.set(round, list);
    }
    const rest = brace > 0 ? msg.slice(brace + 1) : "";
    list.push({ t, miner: name, text: `${j.level >= 40 ? "WARN " : ""}${what} ${rest.replace(/"round":\d+,?/, "")}` });
  }
}
const minerName = (id) => {
  for (const [prefix, name] of idName) if (String(id).startsWith(prefix)) return name;
  return String(id).slice(0, 8);
};

// ---- the sharder's block files: the finalized block of each round
const blocks = new Map();
/** transaction hash -> round of its finalized block */
const txnRound = new Map();
const blockDir = join(dir, "sharder1", "data", "blocks");
try {
  for (const sub of readdirSync(blockDir))
    for (const f of readdirSync(join(blockDir, sub))) {
      if (!f.endsWith(".json")) continue;
      const p = join(blockDir, sub, f);
      try {
        const b = JSON.parse(readFileSync(p, "utf8"));
        for (const t of b.transactions ?? []) txnRound.set(t.hash, b.round);
        blocks.set(b.round, {
          miner: minerName(b.miner_id),
          txns: b.transactions?.length ?? 0,
          rtc: b.round_timeout_count ?? 0,
          written: statSync(p).mtimeMs,
        });
      } catch {}
    }
} catch {
  console.error(`no block files under ${blockDir}`);
}

// ---- the client's trace: transfers waiting across a round
let transfers = [];
if (traceFile)
  transfers = readFileSync(traceFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split("\t"))
    .map(([hash, sent, answered, confirmed]) => ({ hash, sent: +sent, answered: +answered, confirmed: +confirmed }));

// ---- round times
const starts = [...entered.entries()]
  .map(([round, m]) => ({ round, start: Math.min(...m.values()) }))
  .sort((a, b) => a.round - b.round);
const slow = [];
for (let i = 0; i + 1 < starts.length; i++) {
  const { round, start } = starts[i];
  const end = Math.min(...starts.slice(i + 1).map((s) => s.start));
  if (end - start > minMs) slow.push({ round, start, ms: end - start });
}
const durations = starts.slice(0, -1).map((s, i) => Math.min(...starts.slice(i + 1).map((x) => x.start)) - s.start);
const sortedD = [...durations].sort((a, b) => a - b);
const q = (p) => sortedD[Math.min(sortedD.length - 1, Math.floor((sortedD.length * p) / 100))] ?? 0;
const held = [...byRound.values()].flat().filter((l) => l.text.startsWith("vote held")).length;
const softs = [...byRound.values()].flat().filter((l) => l.text.startsWith("soft timeout")).length;
const all = starts.length > 1 ? starts[starts.length - 1].start - starts[0].start : 0;
console.log(
  `${starts.length} rounds traced over ${(all / 1000).toFixed(1)} s, ${blocks.size} finalized blocks in the sharder's files; ` +
    `${slow.length} rounds took more than ${minMs} ms (${(slow.reduce((a, s) => a + s.ms, 0) / 1000).toFixed(1)} s in all)`,
);
console.log(
  `round time p50 ${q(50)} p90 ${q(90)} p99 ${q(99)} max ${sortedD[sortedD.length - 1] ?? 0} ms; soft timeouts ${softs}; votes held for a better proposal being checked ${held}`,
);
const rtcRounds = [...blocks.entries()].filter(([, b]) => b.rtc > 0).map(([r, b]) => `${r} (${b.rtc})`);
if (rtcRounds.length > 0) console.log(`finalized blocks with round_timeout_count > 0: ${rtcRounds.join(", ")}`);
for (const s of slow) {
  const b = blocks.get(s.round);
  const block = b ? `finalized block by ${b.miner}, ${b.txns} txns, round_timeout_count ${b.rtc}` : "no finalized block";
  const waiting = traceFile
    ? `; ${transfers.filter((x) => x.sent <= s.start && x.confirmed >= s.start + s.ms).length} transfers waiting across it`
    : "";
  console.log(`\nround ${s.round}: ${s.ms} ms (${new Date(s.start).toISOString()}), ${block}${waiting}`);
  const lines = (byRound.get(s.round) ?? []).sort((a, b) => a.t - b.t);
  for (const l of lines.slice(0, maxLines)) console.log(`  +${String(l.t - s.start).padStart(5)} ${l.miner} ${l.text}`);
  if (lines.length > maxLines) console.log(`  ... ${lines.length - maxLines} more lines`);
}

// ---- the slowest transfers (beyond p95): their block, and the finalized blocks written after their submission was
// answered that did not carry them (a generator that did not hold them, or a block built before they arrived)
if (transfers.length > 0) {
  const waits = transfers.map((x) => x.confirmed - x.sent).sort((a, b) => a - b);
  const p95 = waits[Math.floor(waits.length * 0.95)];
  const slowT = transfers.filter((x) => x.confirmed - x.sent > p95);
  const order = [...blocks.entries()].sort((a, b) => a[0] - b[0]);
  const byBlock = new Map();
  for (const x of slowT) {
    const r = txnRound.get(x.hash);
    const k = `${r}`;
    let e = byBlock.get(k);
    if (!e) {
      e = { round: r, n: 0, worst: 0, answered: x.answered };
      byBlock.set(k, e);
    }
    e.n++;
    e.worst = Math.max(e.worst, x.confirmed - x.sent);
    e.answered = Math.min(e.answered, x.answered);
  }
  console.log(`\n${slowT.length} transfers beyond p95 (${p95} ms), by the block that carried them:`);
  for (const e of [...byBlock.values()].sort((a, b) => a.round - b.round)) {
    const b = blocks.get(e.round);
    const passed = order.filter(([r, k]) => r < e.round && k.written > e.answered).map(([r, k]) => `${r}:${k.miner}(${k.txns})`);
    console.log(
      `  round ${e.round} by ${b?.miner ?? "?"}: ${e.n} transfers, worst ${e.worst} ms; finalized blocks without them after their submission: ${passed.length} ${passed.join(" ")}`,
    );
  }
}
