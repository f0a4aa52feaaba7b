/**
 * Multisig wallets (reference gosdk `zcncore/mswallet.go`): a group BLS key split into n threshold shares;
 * each signer wallet's key is one share (its client id = sha3 of the share public key); votes are share
 * signatures of `sha3(JSON{"from","to","amount"})`.
 */
import { stringifyExactJson } from "../../chain/codec.js";
import { transferHash } from "../../chain/execute.js";
import { ScAddress, TxnType } from "../../chain/types.js";
import { bls0chain } from "../../core/bls.js";
import { sha3 } from "../../core/hash.js";
import { clientIdOf } from "../../core/schemes.js";
import { dealSharesOfSecret } from "../../core/threshold.js";
import { createWallet, goTimeString, WALLET_VERSION, type WalletFile } from "../../core/wallet.js";
import { systemNow } from "../ambient.js";
import type { ChainClient, TxnResult } from "../chain.js";

export interface MultisigGroup {
  /** The group wallet (its key is the whole group key). */
  group: WalletFile;
  /** One wallet per signer; its key is a share of the group key. */
  signers: WalletFile[];
  threshold: number;
  /** The `register` input. */
  register: {
    client_id: string;
    signature_scheme: "bls0chain";
    public_key: string;
    signer_threshold_ids: string[];
    signer_public_keys: string[];
    num_required: number;
  };
}

export interface MultisigVote {
  proposal_id: string;
  transfer: { from: string; to: string; amount: bigint };
  signature: string;
}

/** A fresh group key split into `n` shares with threshold `t` (bls0chain). `invalid_threshold` unless 1 ≤ t ≤ n. */
export function createMultisigGroup(t: number, n: number, now: Date = new Date(systemNow())): MultisigGroup {
  const group = createWallet(bls0chain, undefined, now);
  const gk = group.keys[0] as { private_key: string };
  const ids = Array.from({ length: n }, (_, i) => sha3(`${group.client_id}:signer:${i + 1}`));
  const dealt = dealSharesOfSecret(gk.private_key, t, ids);
  const signers = dealt.shares.map(
    (s): WalletFile => ({
      client_id: clientIdOf(s.publicKey),
      client_key: s.publicKey,
      keys: [{ public_key: s.publicKey, private_key: s.secretKey }],
      mnemonics: "",
      version: WALLET_VERSION,
      date_created: goTimeString(now),
    }),
  );
  return {
    group,
    signers,
    threshold: t,
    register: {
      client_id: group.client_id,
      signature_scheme: "bls0chain",
      public_key: group.client_key,
      signer_threshold_ids: ids,
      signer_public_keys: dealt.shares.map((s) => s.publicKey),
      num_required: t,
    },
  };
}

/** Register the group with the multisig contract (sent by the group wallet). */
export function registerMultisig(chain: ChainClient, g: MultisigGroup): Promise<TxnResult> {
  return chain.execute(g.group, {
    type: TxnType.smartContract,
    toClientId: ScAddress.multisig,
    data: JSON.stringify({ name: "register", input: g.register }),
  });
}

/** A signer's vote for moving `amount` SAS from the group to `to` under `proposalId`. */
export function createMultisigVote(
  signer: WalletFile,
  proposalId: string,
  groupId: string,
  to: string,
  amount: bigint,
): MultisigVote {
  const transfer = { from: groupId, to, amount };
  const key = signer.keys[0] as { private_key: string };
  return { proposal_id: proposalId, transfer, signature: bls0chain.sign(key.private_key, transferHash(transfer)) };
}

/** The vote as the reference prints and sends it. */
export function multisigVoteJson(v: MultisigVote): string {
  return stringifyExactJson({
    proposal_id: v.proposal_id,
    transfer: { from: v.transfer.from, to: v.transfer.to, amount: v.transfer.amount },
    signature: v.signature,
  });
}

/** Send a vote (by the signer wallet). */
export function sendMultisigVote(chain: ChainClient, signer: WalletFile, v: MultisigVote): Promise<TxnResult> {
  return chain.execute(signer, {
    type: TxnType.smartContract,
    toClientId: ScAddress.multisig,
    data: `{"name":"vote","input":${multisigVoteJson(v)}}`,
  });
}
