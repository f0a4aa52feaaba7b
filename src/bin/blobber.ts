#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4 --initial-old-space-size=64
// blobber --port <p> --hostname <h> --files_dir <dir> --db_dir <dir> --keys_file <file> [--config_dir ./config] [--log_dir <dir>] [--deployment_mode 0|1|2]
// (two malloc arenas and V8's young generation capped at 4 MiB per semi-space, as for zbox: a blobber's peak RSS
// stays lower; an old generation that starts at 64 MiB: with V8's default start the collector marked the whole heap
// 8 times per 128 MiB received; the localnet and the storage bench start it with this line's settings)
import { runBlobber } from "../nodes/blobber/run.js";
import { runProgram } from "../nodes/provider/boot.js";
import { parseBlobberFlags, usage } from "../nodes/provider/flags.js";

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write(usage("blobber"));
  process.exit(0);
}
let flags: ReturnType<typeof parseBlobberFlags>;
try {
  flags = parseBlobberFlags(argv);
} catch (err) {
  process.stderr.write(`blobber: ${(err as Error).message}\n${usage("blobber")}`);
  process.exit(2);
}
await runProgram("blobber", () => runBlobber(flags));
