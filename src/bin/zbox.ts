#!/usr/bin/env node
import { processIo } from "../cli/common.js";
import { zboxMain } from "../cli/zbox.js";

process.exitCode = await zboxMain(process.argv.slice(2), processIo);
