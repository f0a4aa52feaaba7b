#!/usr/bin/env node
import { main } from "../localnet/main.js";

await main(process.argv.slice(2));
