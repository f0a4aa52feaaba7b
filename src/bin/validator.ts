#!/usr/bin/env node
// validator --port <p> --hostname <h> --keys_file <file> [--config_dir ./config] [--log_dir <dir>] [--deployment_mode 0|1|2]
import { runProgram } from "../nodes/provider/boot.js";
import { parseValidatorFlags, usage } from "../nodes/provider/flags.js";
import { runValidator } from "../nodes/validator/run.js";

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write(usage("validator"));
  process.exit(0);
}
let flags: ReturnType<typeof parseValidatorFlags>;
try {
  flags = parseValidatorFlags(argv);
} catch (err) {
  process.stderr.write(`validator: ${(err as Error).message}\n${usage("validator")}`);
  process.exit(2);
}
await runProgram("validator", () => runValidator(flags));
