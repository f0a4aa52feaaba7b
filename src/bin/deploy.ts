#!/usr/bin/env node
import { main } from "../orchestrate/main.js";

await main(process.argv.slice(2));
