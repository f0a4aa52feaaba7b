#!/usr/bin/env -S node --max-semi-space-size=4
// V8's young generation capped at 4 MiB per semi-space (the default grows to 16): a transfer's short-lived garbage is
// collected sooner, which keeps a 1 GiB upload or download about 30 MB lower in peak RSS at the same speed. The
// storage bench runs its client with the flags of this line.
import { processIo } from "../cli/common.js";
import { zboxMain } from "../cli/zbox.js";

process.exitCode = await zboxMain(process.argv.slice(2), processIo);
