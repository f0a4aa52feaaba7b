// Adding a miner or sharder to an existing local network's files (`npm start -- --add-miner|--add-sharder`):
// new keys, a node.yaml like the first node of its role on the next port (no genesis key share for a miner),
// the layout updated for the next `npm start`; and the genesis sc.yaml with `development.view_change`.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { parse } from "yaml";
import { initCrypto } from "../../src/core/schemes.js";
import {
  addLocalnetNode,
  createLocalnetLayout,
  LOCALNET_MINER_SC,
  layoutViewChange,
  loadLocalnetLayout,
  scConfigYaml,
} from "../../src/localnet/layout.js";
import { parseNodeConfig } from "../../src/nodes/config/node.js";
import { parseScConfig } from "../../src/nodes/config/sc.js";

describe("local network: view-change setting and added nodes", () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), "cairn-addnode-"));
    dirs.push(d);
    return d;
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("idle rounds: 3 s on the default timing, the minimum round time where 3 s would reach min_round_time + soft_timeout", async () => {
    await initCrypto();
    const consensusOf = async (opts: { softTimeout?: string; minRoundTime?: string }) => {
      const l = await createLocalnetLayout(tmp(), { miners: 1, sharders: 1, basePort: 23800, ...opts });
      const file = l.miners[0]?.configFile as string;
      return parseNodeConfig(readFileSync(file, "utf8"), file).consensus;
    };
    const dflt = await consensusOf({});
    assert.deepEqual([dflt.minRoundTimeMs, dflt.idleRoundTimeMs], [1000, 3000]);
    const fast = await consensusOf({ softTimeout: "1s" }); // 3 s would be refused by every node
    assert.deepEqual([fast.minRoundTimeMs, fast.idleRoundTimeMs], [1000, 1000]);
    const set = await consensusOf({ minRoundTime: "300ms" });
    assert.deepEqual([set.minRoundTimeMs, set.idleRoundTimeMs], [300, 300]);
  });

  it("busy rounds: off unless asked for; a setting every node would refuse is left out", async () => {
    await initCrypto();
    const consensusOf = async (opts: { softTimeout?: string; busyRoundTime?: string }) => {
      const l = await createLocalnetLayout(tmp(), { miners: 1, sharders: 1, basePort: 23900, ...opts });
      const file = l.miners[0]?.configFile as string;
      return parseNodeConfig(readFileSync(file, "utf8"), file).consensus;
    };
    assert.equal((await consensusOf({})).busyRoundTimeMs, 0);
    assert.equal((await consensusOf({ busyRoundTime: "150ms" })).busyRoundTimeMs, 150);
    // 1 s min_round_time + 1 s soft_timeout: 2 s would be refused
    assert.equal((await consensusOf({ softTimeout: "1s", busyRoundTime: "2s" })).busyRoundTimeMs, 0);
  });

  it("sc.yaml: view changes off by default, on with the option; phase settings read back", async () => {
    await initCrypto();
    const off = await createLocalnetLayout(tmp(), { miners: 2, sharders: 1, basePort: 23700 });
    assert.equal(layoutViewChange(off), false);
    const dir = tmp();
    const on = await createLocalnetLayout(dir, {
      miners: 2,
      sharders: 1,
      basePort: 23700,
      viewChange: true,
      minerSc: { wait_rounds: 9 },
    });
    assert.equal(layoutViewChange(on), true);
    const sc = parseScConfig(readFileSync(join(dir, "genesis", "sc.yaml"), "utf8"), "sc.yaml");
    assert.equal(sc.view_change_enabled, true);
    assert.equal(sc.wait_rounds, 9);
    assert.equal(sc.reward_round_frequency, LOCALNET_MINER_SC.reward_round_frequency);
    const node = parseNodeConfig(readFileSync(on.miners[0]?.configFile as string, "utf8"), on.miners[0]?.configFile as string);
    assert.equal(node.scConfigFile, join(dir, "genesis", "sc.yaml"));
    assert.equal(node.viewChangePollMs, 1000);
    assert.equal(node.healthCheckMs, 60_000);
    assert.deepEqual(parseScConfig(scConfigYaml(false), "x"), { view_change_enabled: false, ...LOCALNET_MINER_SC });
    assert.throws(
      () => parseScConfig("smart_contracts:\n  minersc:\n    wait_rounds: 1\n", "genesis/sc.yaml"),
      /genesis\/sc\.yaml: field "smart_contracts\.minersc\.wait_rounds": expected an integer of at least 4, found 1/,
    );
    assert.throws(
      () => parseScConfig("development:\n  view_change: yes please\n", "sc.yaml"),
      /view_change": expected true or false/,
    );
  });

  it("adds a miner (no genesis share) and a sharder on the next ports, kept in the layout", async () => {
    await initCrypto();
    const dir = tmp();
    const layout = await createLocalnetLayout(dir, { miners: 3, sharders: 1, basePort: 23700, viewChange: true });
    const m = await addLocalnetNode(layout, "miner");
    assert.equal(m.spec.name, "miner4");
    assert.equal(m.spec.url, "http://127.0.0.1:23713");
    assert.match(m.id, /^[0-9a-f]{64}$/);
    const yaml = parse(readFileSync(m.spec.configFile, "utf8")) as Record<string, unknown>;
    assert.equal(yaml.port, 23713);
    assert.equal(yaml.dkg_file, undefined, "an added miner has no genesis key share");
    assert.equal(yaml.sc_config_file, "../genesis/sc.yaml");
    const cfg = parseNodeConfig(readFileSync(m.spec.configFile, "utf8"), m.spec.configFile);
    assert.equal(cfg.dkgFile, undefined);
    assert.equal(cfg.keysFile, join(dir, "miner4", "keys.txt"));
    const s = await addLocalnetNode(m.layout, "sharder");
    assert.equal(s.spec.name, "sharder2");
    assert.equal(s.spec.url, "http://127.0.0.1:23751");
    const saved = loadLocalnetLayout(dir);
    assert.deepEqual(
      saved.miners.map((x) => x.name),
      ["miner1", "miner2", "miner3", "miner4"],
    );
    assert.deepEqual(
      saved.sharders.map((x) => x.name),
      ["sharder1", "sharder2"],
    );
  });
});
