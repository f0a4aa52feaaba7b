#!/usr/bin/env node
import { freeMarkerMain } from "../localnet/free-marker.js";

process.exitCode = await freeMarkerMain(process.argv.slice(2));
