/**
 * Run the consensus simulation over many seeds, or replay one.
 *
 *   npm run sim -- --seeds 5000 [--start 1] [--miners 4] [--scenario <name>]
 *   npm run sim -- --seed 1234 [--scenario <name>] [--miners 4] [--trace]
 *
 * Many seeds: prints progress, each failing seed with its reason and one-line replay command, and a summary;
 * exit code 1 when any seed failed. One seed: prints the scenario and the run (or the failure with its trace
 * tail; `--trace` prints every event). Same seed, same build → same trace. `--from` and `--n` are accepted
 * as aliases of `--start` and `--miners`. Scenarios: `random` (default) and those of `sim/scenarios.ts`
 * (`byzantine-2-of-4` exceeds the fault model on purpose: some of its seeds must fail).
 */
import { parseArgs } from "node:util";
import { SCENARIOS, UNSAFE_SCENARIOS } from "./sim/scenarios.js";
import { randomScenario, replayCommand, runScenario, type Scenario, SimFailure, type SimResult } from "./sim/simulator.js";

function scenarioFor(name: string | undefined, seed: number, n: number | undefined, trace: boolean): Scenario {
  const extra: Partial<Scenario> = trace ? { fullTrace: true } : {};
  if (name === undefined || name === "random")
    return randomScenario(seed, n === undefined ? extra : { ...extra, n, T: Math.floor(n / 2) + 1 });
  const make = SCENARIOS[name] ?? UNSAFE_SCENARIOS[name];
  if (!make)
    throw new Error(
      `unknown scenario ${name}; known: random, ${[...Object.keys(SCENARIOS), ...Object.keys(UNSAFE_SCENARIOS)].join(", ")}`,
    );
  const base = make(seed);
  if (n === undefined) return { ...base, ...extra };
  return { ...base, ...extra, n, T: Math.floor(n / 2) + 1, replayArgs: `${base.replayArgs} --miners ${n}` };
}

function summary(r: SimResult): string {
  const s = r.scenario;
  return `${s.name} seed ${s.seed}: ok — ${r.events} events, ${r.endMs} virtual ms, finalized height ${r.finalized.length - 1} (${r.healHeight} at heal, recovered in ${r.recoveryMs} ms), forked heights ${r.forkHeights}, digest ${r.digest}, warnings ${r.warnings.length}`;
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const v = Number(value);
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--${name} must be a non-negative integer, got ${value}`);
  return v;
}

function main(): number {
  const { values } = parseArgs({
    options: {
      seeds: { type: "string" },
      start: { type: "string" },
      from: { type: "string" },
      seed: { type: "string" },
      scenario: { type: "string" },
      miners: { type: "string" },
      n: { type: "string" },
      trace: { type: "boolean", default: false },
    },
  });
  const minersArg = values.miners ?? values.n;
  const n = minersArg === undefined ? undefined : positiveInt("miners", minersArg, 4);
  if (n !== undefined && (n < 1 || n > 64)) throw new Error(`--miners must be in 1..64, got ${n}`);
  if (values.seed !== undefined) {
    const scn = scenarioFor(values.scenario, positiveInt("seed", values.seed, 1), n, values.trace);
    console.log(JSON.stringify(scn, null, 2));
    try {
      const r = runScenario(scn);
      if (values.trace) for (const line of r.trace) console.log(line);
      for (const w of r.warnings) console.log(w);
      for (const m of r.miners) console.log(`miner ${m.id.slice(0, 8)} ${m.up ? "up" : "down"} ${JSON.stringify(m.status)}`);
      console.log(summary(r));
      return 0;
    } catch (err) {
      if (err instanceof SimFailure) {
        console.log(err.report());
        return 1;
      }
      throw err;
    }
  }
  const count = positiveInt("seeds", values.seeds, 100);
  const from = positiveInt("start", values.start ?? values.from, 1);
  const failures: SimFailure[] = [];
  const started = process.hrtime.bigint();
  let events = 0;
  for (let seed = from; seed < from + count; seed++) {
    try {
      events += runScenario(scenarioFor(values.scenario, seed, n, false)).events;
    } catch (err) {
      if (!(err instanceof SimFailure)) throw err;
      failures.push(err);
      console.log(`FAIL ${err.message}`);
    }
    if ((seed - from + 1) % 500 === 0) console.log(`… ${seed - from + 1}/${count} seeds, ${failures.length} failing`);
  }
  const secs = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(
    `${count} seeds (${from}..${from + count - 1}), ${events} events, ${secs.toFixed(1)} s: ${failures.length} failing`,
  );
  for (const f of failures) console.log(`  seed ${f.scenario.seed}: ${f.reason}\n    replay: ${replayCommand(f.scenario)}`);
  return failures.length > 0 ? 1 : 0;
}

process.exitCode = main();
