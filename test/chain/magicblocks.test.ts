// The magic block schedule: which magic block is in force at a round, and what may follow the latest.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { MagicBlockSchedule } from "../../src/chain/magicblocks.js";
import { CodedError } from "../../src/core/errors.js";
import { generateGenesis, nextMagicBlock } from "../../src/localnet/genesis.js";

describe("magic block schedule", () => {
  let g: Awaited<ReturnType<typeof generateGenesis>>;
  before(async () => {
    g = await generateGenesis({
      miners: 3,
      sharders: 1,
      host: "127.0.0.1",
      minerPort: (i) => 7071 + i,
      sharderPort: (i) => 7171 + i,
      nowSec: 1_700_000_000,
      spareMiners: 1,
    });
  });

  it("answers the magic block in force at each round, its miners and threshold", () => {
    const s = new MagicBlockSchedule(g.magicBlock);
    const chosen = [g.miners[0], g.miners[1], g.spareMiners[0]].map((m) => m as NonNullable<typeof m>);
    const { magicBlock: mb2, shares } = nextMagicBlock(g.magicBlock, chosen, g.sharders, 50);
    assert.equal(shares.size, 3);
    assert.equal(s.add(mb2), true);
    assert.equal(s.add(mb2), false, "adding it again changes nothing");
    assert.equal(s.at(0).magic_block_number, 1);
    assert.equal(s.at(49).magic_block_number, 1);
    assert.equal(s.at(50).magic_block_number, 2);
    assert.equal(s.latest().magic_block_number, 2);
    assert.deepEqual(
      s.membership(60).miners.map((m) => m.id),
      chosen.map((m) => m.node.id),
    );
    assert.equal(s.membership(60).key, 2);
    assert.equal(s.minerAt(10, g.miners[2]?.node.id as string)?.id, g.miners[2]?.node.id);
    assert.equal(s.minerAt(60, g.miners[2]?.node.id as string), undefined, "dropped from round 50");
    assert.ok(s.isMinerAnywhere(g.spareMiners[0]?.node.id as string));
    assert.notEqual(s.groupKeyAt(10), s.groupKeyAt(60), "fresh threshold keys");
    assert.deepEqual(
      s.from(55).map((m) => m.magic_block_number),
      [2],
    );
  });

  it("refuses a magic block that does not follow the latest", () => {
    const s = new MagicBlockSchedule(g.magicBlock);
    const miners = g.miners.map((m) => m);
    const { magicBlock: mb2 } = nextMagicBlock(g.magicBlock, miners, g.sharders, 0);
    const isInvalid = (re: RegExp) => (e: unknown) =>
      e instanceof CodedError && e.code === "invalid_magic_block" && re.test(e.message);
    assert.throws(() => s.add(mb2), isInvalid(/starting round must be after 0/));
    const { magicBlock: mb3 } = nextMagicBlock({ ...g.magicBlock, magic_block_number: 2 }, miners, g.sharders, 10);
    assert.throws(() => s.add(mb3), isInvalid(/expected magic block number 2/));
    const ok = nextMagicBlock(g.magicBlock, miners, g.sharders, 10).magicBlock;
    assert.throws(() => s.add({ ...ok, previous_hash: "ab".repeat(32) }), isInvalid(/previous_hash must be/));
  });
});
