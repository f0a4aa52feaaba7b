/**
 * Run the consensus simulation over many seeds, or replay one.
 *
 *   node dist/test/chain/sim-cli.js --seeds 5000 [--from 1] [--n 4]
 *   node dist/test/chain/sim-cli.js --seed 1234 [--scenario <name>] [--trace]
 *
 * Many seeds: prints progress, each failing seed with its reason and replay command, and a summary; exit
 * code 1 when any seed failed. One seed: prints the run (or the failure with its trace tail; `--trace` prints
 * every event). Same seed, same build → same trace.
 */
import { parseArgs } from "node:util";
import { randomScenario, runScenario, type Scenario, SimFailure, type SimResult } from "./sim/simulator.js";
import { SCENARIOS } from "./sim/scenarios.js";

function scenarioFor(name: string | undefined, seed: number, n: number | undefined, trace: boolean): Scenario {
  const extra: Partial<Scenario> = trace ? { fullTrace: true } : {};
  if (n !== undefined) extra.n = n;
  if (name === undefined || name === "random") return randomScenario(seed, extra);
  const make = SCENARIOS[name];
  if (!make) throw new Error(`unknown scenario ${name}; known: random, ${Object.keys(SCENARIOS).join(", ")}`);
  return { ...make(seed), ...extra };
}

function summary(r: SimResult): string {
  const s = r.scenario;
  return `${s.name} seed ${s.seed}: ok — ${r.events} events, ${r.endMs} virtual ms, finalized height ${r.finalized.length - 1} (${r.healHeight} at heal, recovered in ${r.recoveryMs} ms), digest ${r.digest}, warnings ${r.warnings.length}`;
}

function main(): number {
  const { values } = parseArgs({
    options: {
      seeds: { type: "string" },
      from: { type: "string", default: "1" },
      seed: { type: "string" },
      scenario: { type: "string" },
      n: { type: "string" },
      trace: { type: "boolean", default: false },
    },
  });
  const n = values.n === undefined ? undefined : Number(values.n);
  if (values.seed !== undefined) {
    const scn = scenarioFor(values.scenario, Number(values.seed), n, values.trace);
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
  const count = Number(values.seeds ?? "100");
  const from = Number(values.from);
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
  console.log(`${count} seeds (${from}..${from + count - 1}), ${events} events, ${secs.toFixed(1)} s: ${failures.length} failing`);
  for (const f of failures) console.log(`  seed ${f.scenario.seed}: ${f.reason}\n    replay: node dist/test/chain/sim-cli.js --seed ${f.scenario.seed}${values.scenario ? ` --scenario ${values.scenario}` : ""}${n !== undefined ? ` --n ${n}` : ""} --trace`);
  return failures.length > 0 ? 1 : 0;
}

process.exitCode = main();
