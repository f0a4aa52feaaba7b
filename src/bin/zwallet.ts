#!/usr/bin/env node
import { processIo } from "../cli/common.js";
import { zwalletMain } from "../cli/zwallet.js";

process.exitCode = await zwalletMain(process.argv.slice(2), processIo);
