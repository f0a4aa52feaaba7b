// The local network's storage providers on disk: blobber N in its own directory with its yaml (parsed by the
// programs' own loaders), keys, delegate wallet funded at genesis, and ports derived from the base port.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { createLocalnetLayout, portOffsets, ports } from "../../src/localnet/layout.js";
import { DELEGATE_GENESIS_SAS, LOCAL_CAPACITY } from "../../src/localnet/providers.js";
import { loadBlobberConfig, loadKeysFile, loadValidatorConfig } from "../../src/nodes/config/operator.js";
import { parseBlobberFlags, parseValidatorFlags } from "../../src/nodes/provider/flags.js";
import * as sdk from "../../src/sdk/index.js";

describe("local network layout with blobbers and validators", () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-layout-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("ports: 5050+N / 5060+N by default, base+100+N / base+110+N with a base port", () => {
    const d = ports({});
    assert.deepEqual([d.blobber(1), d.blobber(6), d.validator(1), d.validator(6)], [5051, 5056, 5061, 5066]);
    const b = ports({ basePort: 24000 });
    assert.deepEqual([b.blobber(1), b.validator(6)], [24101, 24116]);
    assert.deepEqual(portOffsets(1, 1, 2), [0, 10, 50, 101, 111, 102, 112]);
  });

  it("writes each blobber's directory, yaml, keys and delegate wallet, funded at genesis", async () => {
    const layout = await createLocalnetLayout(dir, { miners: 1, sharders: 1, blobbers: 2, basePort: 24000 });
    assert.equal(layout.providers?.length, 2);
    const states = readFileSync(join(dir, "genesis", "initial_state.yaml"), "utf8");
    for (const p of layout.providers ?? []) {
      assert.equal(p.dir, join(dir, `blobber${p.n}`));
      const bf = parseBlobberFlags(p.blobber.args ?? []);
      assert.equal(bf.port, 24100 + p.n);
      assert.equal(bf.deploymentMode, 0);
      assert.equal(bf.bind, "127.0.0.1");
      const cfg = loadBlobberConfig(join(bf.configDir, "0chain_blobber.yaml"));
      assert.equal(cfg.capacity, LOCAL_CAPACITY);
      assert.equal(cfg.block_worker, "http://127.0.0.1:24000/dns");
      const delegate = sdk.readWalletFile(p.delegateWalletFile);
      assert.equal(cfg.delegate_wallet, delegate.client_id);
      assert.equal(sdk.clientIdOf(loadKeysFile(bf.keysFile).public_key), p.id);
      const vf = parseValidatorFlags(p.validator.args ?? []);
      assert.equal(vf.port, 24110 + p.n);
      const vcfg = loadValidatorConfig(join(vf.configDir, "0chain_validator.yaml"));
      assert.equal(vcfg.delegate_wallet, delegate.client_id);
      assert.equal(sdk.clientIdOf(loadKeysFile(vf.keysFile).public_key), p.validatorId);
      assert.notEqual(p.validatorId, p.id);
      assert.ok(states.includes(`id: ${delegate.client_id}\n    tokens: ${DELEGATE_GENESIS_SAS}`), "delegate funded at genesis");
      for (const f of ["keys.txt", "validator_keys.txt", "delegate_wallet.json", "config/0chain_blobber.yaml"])
        assert.ok(existsSync(join(p.dir, f)), f);
    }
  });
});
