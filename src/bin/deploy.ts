#!/usr/bin/env node
import { clusterNetworkFiles, standaloneBlobberFiles } from "../localnet/cluster.js";
import { main } from "../orchestrate/main.js";

await main(process.argv.slice(2), clusterNetworkFiles, standaloneBlobberFiles);
