import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { before, describe, it } from "node:test";
import { decodeBlock, encodeBlock } from "../../src/chain/block.js";
import { genesisBlock, parseInitialStates } from "../../src/chain/genesis.js";
import { beaconKeys, magicBlockHash, minersOf, parseMagicBlock } from "../../src/chain/magicblock.js";
import { getBalance, getTotalSupply } from "../../src/chain/state.js";
import { MapNodeDb, Trie } from "../../src/chain/trie.js";
import { type MagicBlock, type MagicNode, ScAddress } from "../../src/chain/types.js";
import { publicKeyFromHerumiString, secretKeyFromHerumiString } from "../../src/core/bls.js";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";
import { clientIdOf, getScheme, initCrypto } from "../../src/core/schemes.js";
import { aggregateSecretShares, dealShares, recoverSignature, signShare, verifyGroup } from "../../src/core/threshold.js";

const vector = (name: string) => readFileSync(resolve(import.meta.dirname, "../../../test/vectors", name), "utf8");
const REF_TEXT = vector("b0magicBlock_4_miners_1_sharder.json");
const DKG = JSON.parse(vector("dkg.json")) as {
  miners: { id: string; set_index: number }[];
  secret_shares: Record<string, Record<string, string>>;
};

before(async () => {
  await initCrypto();
});

const invalid = (re: RegExp) => (e: unknown) => e instanceof CodedError && e.code === "invalid_magic_block" && re.test(e.message);

/** A small dealer magic block with deterministic keys (2 miners of t = 2, 1 sharder). */
function dealerBlock(): { mb: MagicBlock; shares: ReturnType<typeof dealShares> } {
  const node = (i: number, type: 0 | 1): MagicNode => {
    const pk = sha3(`node${i}`) + sha3(`node${i}b`);
    return {
      id: clientIdOf(pk),
      version: "1.0",
      creation_date: 1_700_000_000 + i,
      public_key: pk,
      n2n_host: "127.0.0.1",
      host: "127.0.0.1",
      port: 7070 + i,
      path: "",
      type,
      description: `node${i}`,
      set_index: type === 0 ? i : 0,
      status: 0,
      info: {},
    };
  };
  const miners = [node(0, 0), node(1, 0)];
  const sharder = node(5, 1);
  const shares = dealShares(
    2,
    miners.map((m) => m.id),
    new TextEncoder().encode("test seed"),
  );
  const rest: Omit<MagicBlock, "hash"> = {
    previous_hash: "",
    magic_block_number: 1,
    starting_round: 0,
    miners: { type: 0, nodes: Object.fromEntries(miners.map((m) => [m.id, m])) },
    sharders: { type: 1, nodes: { [sharder.id]: sharder } },
    mpks: { mpks: Object.fromEntries(miners.map((m) => [m.id, { ID: m.id, Mpk: shares.mpk }])) },
    share_or_signs: { shares: {} },
    t: 2,
    k: 2,
    n: 2,
  };
  return { mb: { hash: magicBlockHash(rest), ...rest }, shares };
}

/** The reference file with one change, re-serialized. */
// biome-ignore lint/suspicious/noExplicitAny: free-form edits of a parsed JSON document
type Json = any;
function refWith(patch: (o: Json) => void): string {
  const o = JSON.parse(REF_TEXT) as Json;
  patch(o);
  return JSON.stringify(o);
}

describe("magic block", () => {
  it("parses the reference genesis file and reproduces its hash exactly", () => {
    const mb = parseMagicBlock(REF_TEXT, "b0magicBlock_4_miners_1_sharder.json");
    assert.equal(mb.hash, "9293fbafd2dd2dc5281c20316cc3c260a7b70ba76b07b63b9038d199229c8c76");
    const { hash: _h, ...rest } = mb;
    assert.equal(magicBlockHash(rest), mb.hash);
    assert.equal(Object.keys(mb.miners.nodes).length, 4);
    assert.equal(Object.keys(mb.sharders.nodes).length, 1);
    assert.deepEqual([mb.t, mb.k, mb.n], [3, 3, 4]);
    assert.equal(Object.keys(mb.mpks.mpks).length, 4, "the reference key is Mpks; it is read case-insensitively");
    const m3 = mb.miners.nodes["8877e3da19b4cb51e59b4646ec7c0cf4849bc7b860257d69ddbf753b9a981e1b"];
    assert.equal(m3?.n2n_host, "198.18.0.74");
    assert.equal(m3?.port, 7074);
  });

  it("derives the beacon keys of the reference DKG: each miner's aggregated share signs, 3 shares recover a group signature", () => {
    const mb = parseMagicBlock(REF_TEXT, "ref");
    const keys = beaconKeys(mb);
    const bls = getScheme("bls0chain");
    const msg = sha3("round 1");
    const sigs = DKG.miners.map((m) => {
      const share = aggregateSecretShares(Object.values(DKG.secret_shares[m.id] ?? {}).map(secretKeyFromHerumiString));
      assert.equal(bls.publicKeyOf(share), keys.sharePublicKeys[m.id], `share public key of ${m.id.slice(0, 8)}`);
      return { id: m.id, sig: signShare(share, msg) };
    });
    const group = recoverSignature(sigs.slice(1), 3);
    assert.ok(verifyGroup(keys.groupPublicKey, group, msg));
    const infos = minersOf(mb);
    assert.deepEqual(
      infos.map((i) => i.set_index),
      [0, 1, 2, 3],
    );
    assert.equal(infos[0]?.share_public_key, keys.sharePublicKeys[infos[0]?.id ?? ""]);
    const firstMpk = mb.mpks.mpks[infos[0]?.id ?? ""]?.Mpk[0] ?? "";
    assert.notEqual(keys.groupPublicKey, publicKeyFromHerumiString(firstMpk), "several dealers: the group key is a sum");
  });

  it("a trusted dealer's magic block: group key = mpk[0], share keys = the dealt ones", () => {
    const { mb, shares } = dealerBlock();
    const parsed = parseMagicBlock(JSON.stringify(mb), "dealer.json");
    assert.deepEqual(parsed, mb);
    const keys = beaconKeys(parsed);
    assert.equal(keys.groupPublicKey, shares.groupPublicKey);
    for (const s of shares.shares) assert.equal(keys.sharePublicKeys[s.id], s.publicKey);
  });

  it("names the field, the expectation and what was found", () => {
    const src = "mb.json";
    const bad = (text: string, re: RegExp) => assert.throws(() => parseMagicBlock(text, src), invalid(re), String(re));
    const m0 = "31810bd1258ae95955fb40c7ef72498a556d3587121376d9059119d280f34929";
    bad("{", /^mb\.json: magic block is not valid JSON/);
    bad(
      refWith((o) => (o.hash = "0".repeat(64))),
      /^mb\.json: field "hash": expected the magic block hash 9293fbaf[0-9a-f]+, found "0{64}"/,
    );
    bad(
      refWith((o) => (o.t = 5)),
      /field "t": expected an integer between 1 and the number of miners \(4\), found 5/,
    );
    bad(
      refWith((o) => (o.n = 3)),
      /field "n": expected the number of miners \(4\), found 3/,
    );
    bad(
      refWith((o) => (o.k = 2)),
      /field "k": expected an integer between t \(3\) and the number of miners/,
    );
    bad(
      refWith((o) => (o.miners.nodes[m0].set_index = 1)),
      /field "miners\.nodes\.\*\.set_index": expected each of 0\.\.3 exactly once/,
    );
    bad(
      refWith((o) => (o.miners.nodes[m0].port = 70000)),
      new RegExp(`field "miners\\.nodes\\.${m0}\\.port": expected an integer between 1 and 65535, found 70000`),
    );
    bad(
      refWith((o) => (o.miners.nodes[m0].type = 1)),
      /\.type": expected 0 \(miner\), found 1/,
    );
    bad(
      refWith((o) => (o.miners.nodes[m0].public_key = "ab".repeat(64))),
      /\.id": expected sha3-256 of public_key/,
    );
    bad(
      refWith((o) => (o.miners.nodes[m0].host = 5)),
      /\.host": expected a string, found 5/,
    );
    bad(
      refWith((o) => delete o.mpks.Mpks[m0]),
      new RegExp(`field "mpks\\.mpks\\.${m0}": expected the master public key of miner`),
    );
    bad(
      refWith((o) => o.mpks.Mpks[m0].Mpk.pop()),
      /\.Mpk": expected a list of t = 3 G2 points, found a list of 2/,
    );
    bad(
      refWith((o) => (o.mpks.Mpks[m0].Mpk[1] = "zz")),
      /\.Mpk\[1\]": expected a G2 point/,
    );
    bad(
      refWith((o) => (o.share_or_signs.shares[m0].share_or_sign[m0].sign = 5)),
      /share_or_sign\..*\.sign": expected a string, found 5/,
    );
    bad(
      refWith((o) => (o.sharders.nodes = {})),
      /field "sharders\.nodes": expected at least one sharder, found nothing/,
    );
    bad(
      refWith((o) => (o.miners = [])),
      /field "miners": expected a JSON object, found a list of 0/,
    );
  });

  it("survives the block codec (genesis blocks carry it)", () => {
    const { mb } = dealerBlock();
    const { block } = genesisBlock(mb, [], "chain");
    assert.deepEqual(decodeBlock(encodeBlock(block)).magic_block, mb);
  });
});

describe("genesis", () => {
  it("builds round 0 deterministically with the faucet funded", () => {
    const { mb } = dealerBlock();
    const states = parseInitialStates(
      {
        initialStates: [
          { id: ScAddress.faucet, tokens: 20_000_000_000_000_000n },
          { id: sha3("alice"), tokens: "10000000000" },
          { id: sha3("bob"), tokens: 5 },
        ],
      },
      "initial_state.yaml",
    );
    const a = genesisBlock(mb, states, "chain-id");
    const b = genesisBlock(mb, [...states].reverse(), "chain-id");
    assert.equal(a.block.hash, b.block.hash);
    assert.equal(a.block.state_hash, b.block.state_hash, "the order of initial states does not matter");
    assert.equal(a.block.round, 0);
    assert.equal(a.block.creation_date, 1_700_000_000, "earliest miner creation date");
    assert.equal(a.block.latest_finalized_magic_block_hash, mb.hash);
    assert.equal(a.block.hash, sha3(":" + ":1700000000:0:0::"));
    const db = new MapNodeDb();
    db.putAll(a.newNodes);
    const t = Trie.at(a.block.state_hash, db);
    assert.equal(getBalance(t, ScAddress.faucet), 20_000_000_000_000_000n);
    assert.equal(getTotalSupply(t), 20_000_010_000_000_005n);
  });

  it("refuses bad initial states naming the entry", () => {
    const bad = (v: unknown, re: RegExp) =>
      assert.throws(
        () => parseInitialStates(v, "initial_state.yaml"),
        (e: unknown) => e instanceof CodedError && e.code === "config_invalid" && re.test(e.message),
        String(re),
      );
    bad({}, /initial_state\.yaml: field "initialStates": expected a list of \{id, tokens\}, found nothing/);
    bad({ initialStates: [{ id: "x", tokens: 1 }] }, /field "initialStates\[0\]\.id": expected a 64-character hex id, found "x"/);
    bad(
      { initialStates: [{ id: sha3("a"), tokens: -1 }] },
      /field "initialStates\[0\]\.tokens": expected a non-negative integer/,
    );
    bad({ initialStates: [{ id: sha3("a"), tokens: 1.5 }] }, /initialStates\[0\]\.tokens/);
    bad(
      {
        initialStates: [
          { id: sha3("a"), tokens: 1 },
          { id: sha3("a"), tokens: 2 },
        ],
      },
      /field "initialStates\[1\]\.id": expected an id not listed before/,
    );
    bad(
      {
        initialStates: [
          { id: sha3("a"), tokens: (1n << 63n) - 1n },
          { id: sha3("b"), tokens: 1 },
        ],
      },
      /a total supply of at most 2\^63-1 SAS/,
    );
  });
});
