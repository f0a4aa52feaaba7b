/**
 * What a miner starts from: its signing and verifying functions for the consensus engine (node key, threshold
 * key shares by magic block), and the state its store remembers from before a restart.
 */

import { blockFromJson } from "../../chain/block.js";
import { parseExactJson } from "../../chain/codec.js";
import { vrfHash } from "../../chain/consensus/rules.js";
import type { ConsensusCrypto, RestoredState } from "../../chain/consensus/types.js";
import type { MagicBlockSchedule } from "../../chain/magicblocks.js";
import type { Block } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import type { SignatureScheme } from "../../core/scheme.js";
import { recoverSignature, signShare, verifyGroup, verifyShare } from "../../core/threshold.js";
import { rememberVerified } from "../common/sigcache.js";
import type { NodeErrorCode } from "../errors.js";
import type { ChainStore } from "../store/chainstore.js";

/** The engine's crypto for a miner: `shares` are its threshold key shares by magic block number. */
export function minerCrypto(
  opts: { chainId: string; selfId: string; scheme: SignatureScheme; privateKey: string },
  mbs: MagicBlockSchedule,
  shares: Map<number, string>,
  minerKey: (id: string) => string | undefined,
): ConsensusCrypto {
  let ownKeyChecked: string | undefined;
  return {
    signVrfShare: (round) => {
      const n = mbs.at(round).magic_block_number;
      const secret = shares.get(n);
      if (secret === undefined)
        throw new CodedError<NodeErrorCode>(
          { code: "share_missing", op: "sign VRF share" },
          `no threshold key share of magic block ${n} (in force at round ${round})`,
        );
      return signShare(secret, vrfHash(opts.chainId, round));
    },
    verifyVrfShare: (minerId, round, share) => {
      const m = mbs.minerAt(round, minerId);
      return !!m && verifyShare(m.share_public_key, share, vrfHash(opts.chainId, round));
    },
    recoverGroupSig: (round, shares) =>
      recoverSignature(
        shares.map((s) => ({ id: s.minerId, sig: s.share })),
        mbs.at(round).t,
      ),
    verifyGroupSig: (round, sig) => verifyGroup(mbs.groupKeyAt(round), sig, vrfHash(opts.chainId, round)),
    // what this miner signs (its proposals, its tickets) it also checks when the engine takes them: the first
    // signature is checked for real (a node key that does not match the magic block's shows), later ones are
    // remembered as verified by the caching verifier, so checking its own signatures costs no pairing
    signBlock: (hash) => {
      const sig = opts.scheme.sign(opts.privateKey, hash);
      const key = minerKey(opts.selfId);
      if (key !== undefined && (ownKeyChecked === key || opts.scheme.verify(key, hash, sig))) {
        ownKeyChecked = key;
        rememberVerified(opts.scheme, key, hash, sig);
      }
      return sig;
    },
    verifyBlockSig: (minerId, hash, sig) => {
      const key = minerKey(minerId);
      return key !== undefined && opts.scheme.verify(key, hash, sig);
    },
  };
}

/** What the store remembers from before a restart. */
export function restoredState(store: ChainStore, genesis: Block): RestoredState {
  const vote = parseExactJson(store.getMeta("vote") ?? '{"lastVotedRound":0,"lockedHeight":0,"lockedChain":[]}') as {
    lastVotedRound: number;
    lockedHeight: number;
    lockedChain?: unknown[];
  };
  const notarized = (vote.lockedChain ?? []).map((b) => blockFromJson(b));
  const all = store.finalizedHashes();
  if (all.length === 0) {
    store.finalize([genesis]);
    return { lastVotedRound: vote.lastVotedRound, lockedHeight: vote.lockedHeight, finalized: [], notarized };
  }
  const keep = all.slice(-64);
  const finalized = keep.map((h) => store.getBlock(h)).filter((b): b is Block => b !== undefined);
  const lfbRound = finalized[finalized.length - 1]?.round ?? 0;
  return {
    lastVotedRound: vote.lastVotedRound,
    lockedHeight: vote.lockedHeight,
    finalized,
    firstHeight: store.prunedCount() + all.length - keep.length,
    notarized: notarized.filter((b) => b.round > lfbRound),
  };
}
