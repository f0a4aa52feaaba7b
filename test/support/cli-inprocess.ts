/**
 * Running zbox / zwallet inside the test process against an in-process network on virtual time: output captured,
 * the network's transport and the manual clock injected, the clock driven until the command ends.
 */
import type { CliIo } from "../../src/cli/common.js";
import type { ManualClock } from "../../src/nodes/io/clock.js";
import type * as sdk from "../../src/sdk/index.js";
import type { CliRun } from "./cli-process.js";
import type { VirtualTime } from "./virtual-time.js";

/** A CLI entry point (`zwalletMain`, `zboxMain`). */
export type CliMain = (argv: string[], io: CliIo) => Promise<number>;

export interface InProcessCliContext {
  transport: sdk.Transport;
  clock: ManualClock;
  drive: VirtualTime["drive"];
}

/** Run `main` with `argv` (flags such as `--configDir` included by the caller). */
export async function runInProcess(main: CliMain, argv: string[], ctx: InProcessCliContext): Promise<CliRun> {
  let out = "";
  let err = "";
  const io: CliIo = {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    transport: ctx.transport,
    nowMs: () => ctx.clock.now(),
    sleep: (ms) => ctx.clock.sleep(ms),
  };
  const code = await ctx.drive(main(argv, io));
  return { code, out, err };
}
