/**
 * The magic blocks of a chain in order, and which one is in force at a round: the newest whose
 * `starting_round` is at or below it. Miners and sharders take the miner and sharder sets and the beacon's
 * threshold keys from here for every round, so a view change (a new magic block from the miner contract)
 * changes who produces and who notarizes from its starting round on.
 */

import { CodedError } from "../core/errors.js";
import type { Membership, MinerInfo } from "./consensus/types.js";
import type { ChainErrorCode } from "./errors.js";
import { checkMagicBlock, groupPublicKey, minersOf } from "./magicblock.js";
import type { MagicBlock } from "./types.js";

function refuse(mb: MagicBlock, why: string): never {
  throw new CodedError<ChainErrorCode>(
    { code: "invalid_magic_block", op: "add magic block" },
    `magic block ${mb.magic_block_number} (${mb.hash}): ${why}`,
  );
}

export class MagicBlockSchedule {
  private readonly list: MagicBlock[];
  private readonly derived = new Map<number, { miners: MinerInfo[]; gpk?: string }>();

  /** Starts with the genesis magic block; `later` (in order) follow it. */
  constructor(genesis: MagicBlock, later: MagicBlock[] = []) {
    this.list = [genesis];
    for (const mb of later) this.add(mb);
  }

  /**
   * Append the next magic block: number one higher, `previous_hash` linking to the latest, starting after
   * it, internally consistent. Returns false when it is already known (same hash).
   * @throws CodedError `invalid_magic_block` naming what is wrong.
   */
  add(mb: MagicBlock): boolean {
    const last = this.latest();
    if (this.byNumber(mb.magic_block_number)?.hash === mb.hash) return false;
    if (mb.magic_block_number !== last.magic_block_number + 1)
      refuse(mb, `expected magic block number ${last.magic_block_number + 1}`);
    if (mb.previous_hash !== last.hash) refuse(mb, `previous_hash must be ${last.hash}`);
    if (mb.starting_round <= last.starting_round) refuse(mb, `starting round must be after ${last.starting_round}`);
    checkMagicBlock(mb, `magic block ${mb.magic_block_number}`);
    this.list.push(mb);
    return true;
  }

  /** The magic block in force at `round`. */
  at(round: number): MagicBlock {
    for (let i = this.list.length - 1; i > 0; i--) {
      const mb = this.list[i] as MagicBlock;
      if (mb.starting_round <= round) return mb;
    }
    return this.list[0] as MagicBlock;
  }

  latest(): MagicBlock {
    return this.list[this.list.length - 1] as MagicBlock;
  }

  byNumber(n: number): MagicBlock | undefined {
    return this.list.find((m) => m.magic_block_number === n);
  }

  /** All known magic blocks, oldest first. */
  all(): readonly MagicBlock[] {
    return this.list;
  }

  /** Magic blocks from the one in force at `round` on (those whose nodes matter from then on). */
  from(round: number): MagicBlock[] {
    const first = this.at(round);
    return this.list.filter((m) => m.magic_block_number >= first.magic_block_number);
  }

  private derive(mb: MagicBlock): { miners: MinerInfo[]; gpk?: string } {
    let d = this.derived.get(mb.magic_block_number);
    if (!d) {
      d = { miners: minersOf(mb) };
      this.derived.set(mb.magic_block_number, d);
    }
    return d;
  }

  /** The consensus membership at `round`: the miners of the magic block in force and its threshold. */
  membership(round: number): Membership {
    const mb = this.at(round);
    return { key: mb.magic_block_number, miners: this.derive(mb).miners, T: mb.t };
  }

  /** A miner of the magic block in force at `round` (with its beacon share public key), if it is one. */
  minerAt(round: number, id: string): MinerInfo | undefined {
    return this.derive(this.at(round)).miners.find((m) => m.id === id);
  }

  /** The beacon's group public key at `round`. */
  groupKeyAt(round: number): string {
    const mb = this.at(round);
    const d = this.derive(mb);
    d.gpk ??= groupPublicKey(mb);
    return d.gpk;
  }

  /** Whether `id` is a miner of any known magic block. */
  isMinerAnywhere(id: string): boolean {
    return this.list.some((m) => m.miners.nodes[id] !== undefined);
  }
}
