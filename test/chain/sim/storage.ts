/**
 * Storage in the seeded simulation: block logic that runs the real storage contract (`src/contracts/storage`)
 * on a real state trie instead of the toy ledger. The genesis state holds three blobbers and three validators,
 * staked, and one 2+1 allocation with a file whose write markers every blobber has redeemed; one blobber has lost
 * most of its shard. Every block runs the contract's block hooks, so challenges are generated from the round seed
 * and closed at their deadline by the contract's own code; the block's generator puts in the answers of every
 * challenge open on its parent: the challenged blobber's proof (the walk, the block, its Merkle path, the latest
 * marker, as the blobber's loop builds it) checked by each of the challenge's validators with the storage layer's
 * `verifyChallengeProof` and signed as a ticket, sent as the blobber's `challenge_response`. The honest blobbers
 * pass and are paid; the lossy one fails when the walk picks a block it lost, and is slashed.
 *
 * Everything is derived from the seed (keys, bytes, ids), so a seed replays identically. `StorageBooks` re-runs
 * each finalized block on the finalized state for the safety checker: the state root must match, every pool
 * entry must be non-negative and equal its blobbers' shares, the contract's balance must be the sum of its pools,
 * and wallets plus pools must equal the genesis supply (nothing is minted: no stake interests are paid here).
 */

import type { BlockLogic } from "../../../src/chain/consensus/types.js";
import { applyBlockTransactions } from "../../../src/chain/execute.js";
import { StateView } from "../../../src/chain/state.js";
import { transactionHash } from "../../../src/chain/transaction.js";
import { MapNodeDb, Trie } from "../../../src/chain/trie.js";
import type { Block, Transaction } from "../../../src/chain/types.js";
import { contractAt } from "../../../src/contracts/index.js";
import { createStorageContract, STORAGE_ADDRESS, storageConfig } from "../../../src/contracts/storage/index.js";
import { ed25519 } from "../../../src/core/ed25519.js";
import { codedError } from "../../../src/core/errors.js";
import { sha3 } from "../../../src/core/hash.js";
import type { Rng } from "../../../src/core/random.js";
import { clientIdOf } from "../../../src/core/schemes.js";
import {
  allocationRoot,
  applyChanges,
  BLOCK_SIZE,
  type ChallengeProof,
  challengedBlock,
  type Entry,
  type FileMeta,
  leafProof,
  leavesOf,
  merkleRoot,
  type Signer,
  signTicket,
  signWriteMarker,
  verifyChallengeProof,
  type WriteMarker,
  walkTree,
} from "../../../src/storage/index.js";
import { poolsTotal, walletsTotal } from "../../contracts/storage/chain.js";
import { checkSimBlock, simBlock, simBlockHash, simGenesisBlock } from "./ledger.js";

const SA = STORAGE_ADDRESS;
const ZCN = 10_000_000_000n;
const HOUR_NS = 3_600_000_000_000n;
const GiB = 1n << 30n;
/** Block times are this plus the virtual seconds of the run. */
export const STORAGE_T0 = 1_700_000_000;
/** Bytes of each blobber's shard of the file: three blocks, the last one short. */
const SHARD = 2 * BLOCK_SIZE + 4321;
const FILE = "/sim/data.bin";

export interface SimWallet {
  id: string;
  publicKey: string;
  privateKey: string;
}

function simWallet(seed: number, name: string): SimWallet {
  const privateKey = sha3(`sim-storage-key:${seed}:${name}`);
  const publicKey = ed25519.publicKeyOf(privateKey);
  return { id: clientIdOf(publicKey), publicKey, privateKey };
}

function signerOf(w: SimWallet): Signer {
  return { clientId: w.id, publicKey: w.publicKey, sign: (h) => ed25519.sign(w.privateKey, h) };
}

/** `n` deterministic bytes. */
function bytesOf(tag: string, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let at = 0, i = 0; at < n; i++) {
    const h = Buffer.from(sha3(`${tag}:${i}`), "hex");
    out.set(h.subarray(0, Math.min(h.length, n - at)), at);
    at += h.length;
  }
  return out;
}

/** One blobber of the simulation: its wallet, what it stores, and whether it lost data. */
export interface SimBlobber {
  wallet: SimWallet;
  delegate: SimWallet;
  /** Its index in the allocation (its shard index). */
  index: number;
  /** The bytes it still has of its shard (the lossy one has lost all but the first block). */
  shard: Uint8Array;
  /** The Merkle leaves it recorded at upload. */
  leaves: Uint8Array[];
  lossy: boolean;
  /** The owner's write marker it redeemed. */
  marker: WriteMarker;
}

/** The genesis of the storage simulation (shared by every miner of a run: a content-addressed node store). */
export interface StorageWorld {
  db: MapNodeDb;
  sc: ReturnType<typeof createStorageContract>;
  root: string;
  supply: bigint;
  owner: SimWallet;
  allocationId: string;
  blobbers: SimBlobber[];
  validators: SimWallet[];
  listings: Map<string, Record<string, Entry>>;
  file: FileMeta;
}

function txnOf(from: SimWallet, name: string, input: unknown, value: bigint, at: number, nonce: string): Transaction {
  const t: Transaction = {
    hash: "",
    version: "1.0",
    client_id: from.id,
    public_key: from.publicKey,
    to_client_id: SA,
    chain_id: "sim",
    transaction_data: JSON.stringify({ name, input, nonce }, (_k, v) => (typeof v === "bigint" ? Number(v) : v)),
    transaction_value: value,
    signature: "",
    creation_date: at,
    transaction_fee: 0n,
    transaction_type: 1000,
  };
  t.hash = transactionHash(t);
  t.signature = ed25519.sign(from.privateKey, t.hash);
  return t;
}

/** Build the genesis state of a seed: registrations, stakes, the allocation and the redeemed write markers. */
export function storageWorld(seed: number): StorageWorld {
  const db = new MapNodeDb();
  const sc = createStorageContract(
    storageConfig({
      challenge_rate_per_mb_min: 600,
      max_challenges_per_generation: 3,
      validators_per_challenge: 3,
      num_validators_rewarded: 3,
    }),
  );
  const at = STORAGE_T0;
  let root = Trie.at("", db).commit().root;
  let round = 1;
  const run = (txns: Transaction[]): string[] => {
    const r = applyBlockTransactions(root, db, txns, {
      round: round++,
      minerId: sha3("sim-storage-genesis"),
      prevHash: sha3(`sim-storage-genesis-${round}`),
      time: at,
      contracts: (a) => (a === SA ? sc : contractAt(a)),
    });
    db.putAll(r.newNodes);
    root = r.root;
    for (const x of r.results) if (x.status !== 1) throw new Error(`genesis transaction failed: ${x.output}`);
    return r.results.map((x) => x.output);
  };
  const mint = (w: SimWallet, amount: bigint) => {
    const t = Trie.at(root, db);
    new StateView(t).mint(w.id, amount, "", 0);
    const c = t.commit();
    db.putAll(c.newNodes);
    root = c.root;
  };
  let seq = 0;
  const n = () => `${seed}:${seq++}`;
  const owner = simWallet(seed, "owner");
  const blobberWallets = [0, 1, 2].map((i) => ({
    wallet: simWallet(seed, `blobber${i}`),
    delegate: simWallet(seed, `bdelegate${i}`),
  }));
  const validators = [0, 1, 2].map((i) => ({
    wallet: simWallet(seed, `validator${i}`),
    delegate: simWallet(seed, `vdelegate${i}`),
  }));
  mint(owner, 10n * ZCN);
  for (const x of [...blobberWallets, ...validators]) mint(x.delegate, 10n * ZCN);
  const supply = 10n * ZCN * 7n;
  blobberWallets.forEach((b, i) => {
    run([
      txnOf(
        b.wallet,
        "add_blobber",
        {
          url: `http://sim-b${i}.test:5051`,
          geolocation: { latitude: 0, longitude: 0 },
          terms: {
            read_price: ZCN / 100n,
            // dear, so a pass a few seconds after the last one is still paid a few hundred SAS
            write_price: 50n * ZCN,
            min_lock_demand: 0.1,
            max_offer_duration: 744n * HOUR_NS,
            challenge_completion_time: 30_000_000_000n,
          },
          capacity: 10n * GiB,
          stake_pool_settings: {
            delegate_wallet: b.delegate.id,
            min_stake: ZCN / 10n,
            max_stake: 100n * ZCN,
            num_delegates: 50,
            service_charge: 0.3,
          },
        },
        0n,
        at,
        n(),
      ),
    ]);
    run([txnOf(b.delegate, "stake_pool_lock", { blobber_id: b.wallet.id }, 2n * ZCN, at, n())]);
  });
  validators.forEach((v, i) => {
    run([
      txnOf(
        v.wallet,
        "add_validator",
        {
          url: `http://sim-v${i}.test:5061`,
          stake_pool_settings: {
            delegate_wallet: v.delegate.id,
            min_stake: ZCN / 10n,
            max_stake: 100n * ZCN,
            num_delegates: 5,
            service_charge: 0.1,
          },
        },
        0n,
        at,
        n(),
      ),
    ]);
    run([txnOf(v.delegate, "stake_pool_lock", { validator_id: v.wallet.id }, ZCN, at, n())]);
  });
  const [out] = run([
    txnOf(
      owner,
      "new_allocation_request",
      {
        data_shards: 2,
        parity_shards: 1,
        size: 16 * 1024 * 1024,
        expiration_date: at + 720 * 3600,
        owner_id: owner.id,
        owner_public_key: owner.publicKey,
        preferred_blobbers: [],
        read_price_range: { min: 0, max: Number.MAX_SAFE_INTEGER },
        write_price_range: { min: 0, max: Number.MAX_SAFE_INTEGER },
        max_challenge_completion_time: 3_600_000_000_000,
        diversify_blobbers: false,
      },
      2n * ZCN,
      at,
      n(),
    ),
  ]);
  const allocationId = (JSON.parse(out as string) as { id: string }).id;
  const view = new StateView(Trie.at(root, db));
  const alloc = sc.rest(view, "allocation", { allocation: allocationId }, at) as { blobbers: { id: string }[] };
  const order = alloc.blobbers.map((b) => b.id);
  // one file; blobber k (in the allocation's order) holds shard k
  const shards = order.map((_, k) => bytesOf(`sim-shard:${seed}:${k}`, SHARD));
  const leaves = shards.map((s) => leavesOf(s));
  const file: FileMeta = {
    size: 2 * SHARD,
    actual_hash: sha3(`sim-file:${seed}`),
    mimetype: "application/octet-stream",
    shard_size: SHARD,
    shard_roots: leaves.map((l) => merkleRoot(l)),
    data_shards: 2,
  };
  const applied = applyChanges(new Map(), [{ op: "upload", path: FILE, file }]);
  const listings = new Map([...applied.listings].map(([p, l]) => [p, l.children]));
  const ownerSigner = signerOf(owner);
  const blobbers: SimBlobber[] = order.map((id, k) => {
    const b = blobberWallets.find((x) => x.wallet.id === id);
    if (!b) throw new Error(`allocation blobber ${id} is not one of the simulation's`);
    const wm = signWriteMarker(ownerSigner, {
      allocation_root: allocationRoot(applied.contentRoot, at),
      prev_allocation_root: "",
      allocation_id: allocationId,
      size: applied.sizeDelta,
      blobber_id: id,
      timestamp: at,
    });
    run([
      txnOf(
        b.wallet,
        "commit_connection",
        { allocation_root: wm.allocation_root, prev_allocation_root: "", write_marker: wm },
        0n,
        at,
        n(),
      ),
    ]);
    const lossy = k === order.length - 1;
    const shard = (shards[k] as Uint8Array).slice();
    // the lossy blobber lost every block but the first
    if (lossy) shard.fill(0, BLOCK_SIZE);
    return { wallet: b.wallet, delegate: b.delegate, index: k, shard, leaves: leaves[k] as Uint8Array[], lossy, marker: wm };
  });
  return {
    db,
    sc,
    root,
    supply,
    owner,
    allocationId,
    blobbers,
    validators: validators.map((v) => v.wallet),
    listings,
    file,
  };
}

interface OpenChallenge {
  id: string;
  seed: string;
  allocation_id: string;
  blobber_id: string;
  validators: { id: string }[];
}

/** The proof blobber `b` builds for a challenge (as `nodes/blobber/challenges/loop.ts` does, from what it holds). */
function proofOf(w: StorageWorld, b: SimBlobber, ch: OpenChallenge): ChallengeProof {
  const walk = walkTree(ch.seed, (dir) => w.listings.get(dir));
  const proof: ChallengeProof = {
    challenge_id: ch.id,
    write_marker: b.marker,
    listings: walk.listings,
    path: walk.path,
    block_index: 0,
    block: "",
    merkle_path: [],
  };
  if (!walk.path) return proof;
  proof.file = w.file;
  const index = challengedBlock(walk.rng, w.file.shard_size);
  if (index === undefined) return proof;
  const len = Math.min(BLOCK_SIZE, w.file.shard_size - index * BLOCK_SIZE);
  proof.block_index = index;
  proof.block = Buffer.from(b.shard.subarray(index * BLOCK_SIZE, index * BLOCK_SIZE + len)).toString("base64");
  proof.merkle_path = leafProof(b.leaves, index).map((h) => Buffer.from(h).toString("hex"));
  return proof;
}

/** The `challenge_response` transactions for every challenge open on `root` at block time `time`. */
export function challengeAnswers(w: StorageWorld, root: string, time: number): Transaction[] {
  const view = new StateView(Trie.at(root, w.db));
  const open = (w.sc.rest(view, "openchallenges", {}, time) as { challenges: OpenChallenge[] }).challenges;
  const alloc = w.sc.rest(view, "allocation", { allocation: w.allocationId }, time) as {
    owner_id: string;
    owner_public_key: string;
    blobbers: { id: string }[];
    blobber_details: { blobber_id: string; allocation_root: string }[];
  };
  const out: Transaction[] = [];
  for (const ch of [...open].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const b = w.blobbers.find((x) => x.wallet.id === ch.blobber_id);
    if (!b || ch.allocation_id !== w.allocationId) continue;
    const proof = proofOf(w, b, ch);
    const record = {
      owner_id: alloc.owner_id,
      owner_public_key: alloc.owner_public_key,
      blobber_index: alloc.blobbers.findIndex((x) => x.id === b.wallet.id),
      allocation_root: alloc.blobber_details.find((d) => d.blobber_id === b.wallet.id)?.allocation_root ?? "",
    };
    const tickets = ch.validators.map((cv) => {
      const v = w.validators.find((x) => x.id === cv.id) as SimWallet;
      const verdict = verifyChallengeProof(ch, record, proof);
      return signTicket(
        {
          challenge_id: ch.id,
          blobber_id: b.wallet.id,
          validator_id: v.id,
          validator_key: v.publicKey,
          result: verdict.ok,
          message: verdict.ok ? "" : verdict.reason,
          timestamp: time,
        },
        v.privateKey,
      );
    });
    out.push(txnOf(b.wallet, "challenge_response", { challenge_id: ch.id, validation_tickets: tickets }, 0n, time, ch.id));
  }
  return out;
}

/** Execute a block's transactions and hooks on `root`; the new root. */
export function executeStorageBlock(w: StorageWorld, root: string, b: Block): string {
  const r = applyBlockTransactions(root, w.db, b.transactions, {
    round: b.round,
    minerId: b.miner_id,
    prevHash: b.prev_hash,
    seed: b.round_random_seed,
    time: b.creation_date,
    contracts: (a) => (a === SA ? w.sc : contractAt(a)),
    hooks: [w.sc],
  });
  w.db.putAll(r.newNodes);
  return r.root;
}

/** The genesis block of a storage run: its state is the world's. */
export function storageGenesisBlock(chainId: string, w: StorageWorld): Block {
  return simGenesisBlock(chainId, w.root, "sim-storage-genesis", STORAGE_T0);
}

/** Block logic of one sim miner over the storage contract. */
export class StorageLedger implements BlockLogic {
  private readonly roots = new Map<string, string>();

  constructor(
    readonly minerId: string,
    readonly chainId: string,
    readonly genesis: Block,
    private readonly world: StorageWorld,
    private readonly rng: Rng,
  ) {
    this.roots.set(genesis.hash, world.root);
  }

  hasWork(): boolean {
    return false;
  }

  restore(finalized: readonly Block[]): void {
    let root = this.world.root;
    for (const b of finalized) {
      root = executeStorageBlock(this.world, root, b);
      this.roots.set(b.hash, root);
    }
  }

  build(parent: Block, round: number, seed: bigint, timeoutCount: number, nowMs: number): Block {
    const base = this.roots.get(parent.hash);
    if (base === undefined) throw codedError("state_node_missing", `no state for parent ${parent.hash}`);
    const creation_date = Math.max(parent.creation_date, STORAGE_T0 + Math.floor(nowMs / 1000));
    // a blobber's answer reaches this generator in time, or only for a later block (a slow network)
    const transactions = challengeAnswers(this.world, base, creation_date).filter(() => !this.rng.chance(0.2));
    const block = simBlock({
      chainId: this.chainId,
      genesisHash: this.genesis.hash,
      minerId: this.minerId,
      parent,
      round,
      seed,
      timeoutCount,
      creationDate: creation_date,
      transactions,
      stateHash: "",
    });
    block.state_hash = executeStorageBlock(this.world, base, block);
    block.hash = simBlockHash(block);
    this.roots.set(block.hash, block.state_hash);
    return block;
  }

  validate(block: Block, parent: Block): void {
    const base = this.roots.get(parent.hash);
    if (base === undefined) throw codedError("state_node_missing", `no state for parent ${parent.hash}`);
    checkSimBlock(block, parent, this.chainId, transactionHash);
    if (block.creation_date < parent.creation_date) throw codedError("invalid_block", "block time before its parent's");
    const root = executeStorageBlock(this.world, base, block);
    if (root !== block.state_hash) throw codedError("invalid_block", `block ${block.hash} state root`);
    this.roots.set(block.hash, root);
  }
}

/** What the finalized chain shows of the challenges (for the tests). */
export interface StorageOutcome {
  passed: number;
  failed: number;
  open: number;
  /** Per blobber (allocation order): challenges passed and failed, penalty and rewards of its stake pool. */
  blobbers: { lossy: boolean; passed: number; failed: number; penalty: bigint; rewards: bigint }[];
  supply: bigint;
}

/**
 * The finalized chain's storage state for the safety checker: each finalized block re-run on the previous one,
 * with the accounting checked. `extend` throws (with the reason) on any breach.
 */
export class StorageBooks {
  root: string;

  constructor(private readonly world: StorageWorld) {
    this.root = world.root;
  }

  extend(b: Block): void {
    const root = executeStorageBlock(this.world, this.root, b);
    if (root !== b.state_hash) throw new Error(`state root mismatch in finalized block ${b.hash.slice(0, 8)}`);
    const v = new StateView(Trie.at(root, this.world.db));
    let pools: bigint;
    try {
      pools = poolsTotal(v); // also: every pool entry non-negative and equal to its blobbers' shares
    } catch (err) {
      throw new Error(`after ${b.hash.slice(0, 8)}: ${(err as Error).message}`);
    }
    const contract = v.balance(SA);
    if (contract !== pools) throw new Error(`after ${b.hash.slice(0, 8)}: the contract holds ${contract}, its pools ${pools}`);
    const wallets = walletsTotal(v);
    if (wallets + pools !== this.world.supply)
      throw new Error(
        `after ${b.hash.slice(0, 8)}: wallets ${wallets} + pools ${pools} = ${wallets + pools} != supply ${this.world.supply}`,
      );
    this.root = root;
  }

  outcome(): StorageOutcome {
    const v = new StateView(Trie.at(this.root, this.world.db));
    const now = STORAGE_T0;
    const a = this.world.sc.rest(v, "allocation", { allocation: this.world.allocationId }, now) as {
      stats: { num_success_challenges: number; num_failed_challenges: number; num_open_challenges: number };
      blobber_details: { blobber_id: string; stats?: { num_success_challenges: number; num_failed_challenges: number } }[];
    };
    return {
      passed: a.stats.num_success_challenges,
      failed: a.stats.num_failed_challenges,
      open: a.stats.num_open_challenges,
      blobbers: this.world.blobbers.map((b) => {
        const d = a.blobber_details.find((x) => x.blobber_id === b.wallet.id);
        const sp = this.world.sc.rest(v, "getStakePoolStat", { blobber_id: b.wallet.id }, now) as {
          penalty: bigint | number;
          rewards: { charge: bigint | number; blobber: bigint | number };
        };
        return {
          lossy: b.lossy,
          passed: d?.stats?.num_success_challenges ?? 0,
          failed: d?.stats?.num_failed_challenges ?? 0,
          penalty: BigInt(sp.penalty),
          rewards: BigInt(sp.rewards.charge) + BigInt(sp.rewards.blobber),
        };
      }),
      supply: walletsTotal(v) + poolsTotal(v),
    };
  }
}
