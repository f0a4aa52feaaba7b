#!/usr/bin/env -S node --max-semi-space-size=4
// blobber --port <p> --hostname <h> --files_dir <dir> --db_dir <dir> --keys_file <file> [--config_dir ./config] [--log_dir <dir>] [--deployment_mode 0|1|2]
// (V8's young generation capped at 4 MiB per semi-space, as for zbox: a blobber's short-lived garbage per request is
// collected sooner, keeping its peak RSS lower at the same speed; the localnet and the storage bench start it with
// the flags of this line)
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
