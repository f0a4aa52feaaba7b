/**
 * A network's files for a cluster (`cairn-deploy`'s network-config Secret): the local network's layout made with
 * each node's in-cluster address, folders named after the pods (`miner1` → `miner-0`, `blobber1` → `blobber-0`,
 * whose validator shares the pod), chain data on the pod's data volume (/cairn/data).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parse as yamlParse, stringify as yamlStringify } from "yaml";
import { createLocalnetLayout } from "./layout.js";

/** The pod a local network process runs in: `miner2` → `miner-1`, `validator1` → `blobber-0`. */
export function podOf(name: string): string {
  const m = /^(miner|sharder|blobber|validator)(\d+)$/.exec(name);
  if (!m) return name;
  return `${m[1] === "validator" ? "blobber" : m[1]}-${Number(m[2]) - 1}`;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** Relative path → content of every file a cluster's pods mount. */
export async function clusterNetworkFiles(req: {
  miners: number;
  sharders: number;
  blobbers: number;
  hostOf: (pod: string) => string;
}): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-cluster-"));
  try {
    await createLocalnetLayout(dir, {
      miners: req.miners,
      sharders: req.sharders,
      blobbers: req.blobbers,
      bind: "0.0.0.0",
      hostOf: (name) => req.hostOf(podOf(name)),
    });
    const out: Record<string, string> = {};
    for (const file of filesUnder(dir)) {
      const [top = "", ...rest] = relative(dir, file).split("/");
      if (top === "localnet.json") continue;
      const path = [podOf(top), ...rest].join("/");
      let text = readFileSync(file, "utf8");
      if (rest.join("/") === "node.yaml") text = yamlStringify({ ...(yamlParse(text) as object), data_dir: "/cairn/data" });
      out[path] = text;
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
