#!/usr/bin/env node
import { clusterNetworkFiles } from "../localnet/cluster.js";
import { main } from "../orchestrate/main.js";

await main(process.argv.slice(2), clusterNetworkFiles);
