/**
 * The multisig contract (reference `smartcontract/multisigsc`): a group wallet whose BLS key was split into
 * n threshold shares registers `{client_id, public_key, signer_threshold_ids, signer_public_keys,
 * num_required}`; each signer (a wallet whose key is one share) votes for a proposal `{proposal_id, transfer
 * {from: group, to, amount}, signature}` with its share's signature of `sha3(JSON(transfer))`. At
 * `num_required` valid votes the contract recovers the group signature from the shares (Lagrange) and the
 * chain executes the transfer out of the group wallet as a signed transfer, verified under the group's
 * public key. Proposals expire (a week by default, or the wallet's `exp_time` seconds); every vote prunes
 * the oldest expired proposal.
 */

import { transferHash } from "../../chain/execute.js";
import { blsParse } from "../../core/bls.js";
import { CodedError } from "../../core/errors.js";
import { isHash } from "../../core/hex.js";
import { clientIdOf, getScheme } from "../../core/schemes.js";
import { partyIdOf, recoverSignature } from "../../core/threshold.js";
import type { ContractContext, SmartContract } from "../context.js";
import type { MultisigErrorCode } from "../errors.js";
import { inputObject, intField, refuse, strField } from "../input.js";
import {
  DEFAULT_EXPIRY_SEC,
  isNoRef,
  MAX_FIELD_SIZE,
  MAX_SIGNERS,
  MIN_SIGNERS,
  MULTISIG_ADDRESS,
  type MultisigWallet,
  NO_REF,
  type ProposalRef,
  proposalKey,
  proposalRefOf,
  readProposal,
  readQueue,
  readWallet,
  sameRef,
  type Transfer,
  walletKey,
  writeProposal,
  writeQueue,
} from "./state.js";

export {
  DEFAULT_EXPIRY_SEC as MULTISIG_DEFAULT_EXPIRY_SEC,
  MAX_SIGNERS as MULTISIG_MAX_SIGNERS,
  MIN_SIGNERS as MULTISIG_MIN_SIGNERS,
  MULTISIG_ADDRESS,
  type MultisigWallet,
  type Proposal as MultisigProposal,
  readProposal as readMultisigProposal,
  readWallet as readMultisigWallet,
} from "./state.js";

const idOf = (pk: string): string => {
  try {
    return clientIdOf(pk);
  } catch {
    return "";
  }
};

function validWallet(w: MultisigWallet, sender: string): void {
  if (w.client_id !== sender)
    refuse("client_id_doesnot_match", "Multisig Wallet client ID is different than the requesting client ID");
  if (idOf(w.public_key) !== w.client_id)
    refuse("client_id_public_key_no_match", "the client id and the public key in the wallet do not match");
  if (!Number.isSafeInteger(w.exp_time) || w.exp_time < 1)
    refuse("exp_time_lt_min", `given expiry time ${w.exp_time} is less than 1`);
  const n = w.signer_threshold_ids.length;
  if (n !== w.signer_public_keys.length)
    refuse(
      "signers_id_and_signer_public_key_no_match",
      `number of signer client ids (${n}) and the signer public keys (${w.signer_public_keys.length}) do not match`,
    );
  if (n > MAX_SIGNERS)
    refuse("num_ids_too-many", `number of signer client ids (${n}) is more than the maximum number of signers (${MAX_SIGNERS})`);
  if (w.num_required < MIN_SIGNERS)
    refuse("signers_required_too_less", `number of signers required (${w.num_required}) is less than ${MIN_SIGNERS}`);
  if (w.num_required > n)
    refuse(
      "too_many_signers_required",
      `number of signers required (${w.num_required}) is more than the number of signers (${n})`,
    );
  if (new Set(w.signer_threshold_ids).size !== n) refuse("duplicate_signer_ids", "duplicate threshold ids present");
  if (new Set(w.signer_public_keys).size !== n) refuse("duplicate_signers", "duplicate signers are present");
  if (w.signature_scheme !== "bls0chain")
    refuse(
      "signature_scheme_not_supported",
      `signature scheme of the wallet ("${w.signature_scheme.slice(0, 40)}") does not support multisig (bls0chain does)`,
    );
  if (w.client_id.length > MAX_FIELD_SIZE || w.signature_scheme.length > MAX_FIELD_SIZE || w.public_key.length > MAX_FIELD_SIZE)
    refuse("too_many_signers", "Wallet has more than 256 ClientIDs or signature schemes or public keys");
  for (const id of w.signer_threshold_ids) {
    if (id.length > MAX_FIELD_SIZE) refuse("too_many_threshold_ids", "wallet has more than 256 threshold id fields");
    try {
      partyIdOf(id);
    } catch {
      refuse("invalid_threshold_id", `signer threshold id "${id.slice(0, 40)}" is not hex of at least 31 characters`);
    }
  }
  if (new Set(w.signer_threshold_ids.map(partyIdOf)).size !== n)
    refuse("duplicate_signer_ids", "duplicate threshold ids present (ids must differ in their first 31 hex characters)");
  for (const key of w.signer_public_keys) {
    if (key.length > MAX_FIELD_SIZE) refuse("too_many_signer_keys", "wallet has more than 256 signer key fields");
    if (!blsParse.publicKey(key))
      refuse("invalid_public_key", `signer public key "${key.slice(0, 16)}…" is not a bls0chain public key`);
  }
  if (!blsParse.publicKey(w.public_key)) refuse("invalid_public_key", "the group public key is not a bls0chain public key");
}

function signerIndex(w: MultisigWallet, signer: string): number {
  return w.signer_public_keys.findIndex((k) => idOf(k) === signer);
}

export function createMultisigContract(): SmartContract {
  const register = (ctx: ContractContext, input: unknown): string => {
    const o = inputObject(input);
    if (!o) refuse("err_register_formatting", "incorrect request format");
    const list = (k: string): string[] => {
      const v = o[k] ?? [];
      if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
        refuse("err_register_formatting", `incorrect request format ("${k}" must be a list of strings)`);
      return v as string[];
    };
    const num = intField(o, "num_required");
    const exp = intField(o, "exp_time");
    if (num === null || exp === null)
      refuse("err_register_formatting", "incorrect request format (num_required, exp_time: integers)");
    const w: MultisigWallet = {
      client_id: strField(o, "client_id") ?? "",
      signature_scheme: strField(o, "signature_scheme") ?? "",
      public_key: strField(o, "public_key") ?? "",
      signer_threshold_ids: list("signer_threshold_ids"),
      signer_public_keys: list("signer_public_keys"),
      num_required: Number(num ?? 0n),
      exp_time: exp === undefined ? DEFAULT_EXPIRY_SEC : Number(exp),
    };
    validWallet(w, ctx.txn.client_id);
    if (readWallet(ctx.state, w.client_id)) refuse("err_register_exists", "multi-sig wallet already exists");
    ctx.state.putNode(walletKey(w.client_id), w);
    return "success: multi-signature wallet registered";
  };

  /** Remove a proposal from the expiration queue and the state. */
  const prune = (ctx: ContractContext, r: ProposalRef): void => {
    const p = readProposal(ctx.state, r);
    if (!p) return;
    const q = readQueue(ctx.state);
    if (sameRef(q.head, r)) q.head = p.next;
    if (sameRef(q.tail, r)) q.tail = p.prev;
    writeQueue(ctx.state, q);
    if (!isNoRef(p.next)) {
      const next = readProposal(ctx.state, p.next);
      if (next) writeProposal(ctx.state, { ...next, prev: p.prev });
    }
    if (!isNoRef(p.prev)) {
      const prev = readProposal(ctx.state, p.prev);
      if (prev) writeProposal(ctx.state, { ...prev, next: p.next });
    }
    ctx.state.deleteNode(proposalKey(r));
  };

  const vote = (ctx: ContractContext, input: unknown): string => {
    const now = ctx.block.time || ctx.now;
    // garbage collection: the oldest proposal goes when it has expired
    const head = readQueue(ctx.state).head;
    if (!isNoRef(head)) {
      const oldest = readProposal(ctx.state, head);
      if (oldest && now >= oldest.expiration_date) prune(ctx, head);
    }
    const o = inputObject(input);
    if (!o)
      refuse(
        "err_vote_formatting",
        'incorrect request format (expected {"proposal_id","transfer":{"from","to","amount"},"signature"})',
      );
    const t = (typeof o.transfer === "object" && o.transfer !== null ? o.transfer : {}) as Record<string, unknown>;
    const proposalId = strField(o, "proposal_id");
    const signature = strField(o, "signature");
    const from = strField(t, "from");
    const to = strField(t, "to");
    const amount = intField(t, "amount");
    if (proposalId === null || signature === null || from === null || to === null || amount === null)
      refuse(
        "err_vote_formatting",
        "incorrect request format (proposal_id, signature, transfer.from, transfer.to: strings; transfer.amount: integer)",
      );
    const v = {
      proposal_id: proposalId ?? "",
      signature: signature ?? "",
      transfer: { from: from ?? "", to: to ?? "", amount: amount ?? 0n },
    };
    if (
      v.proposal_id.length > MAX_FIELD_SIZE ||
      v.transfer.from.length > MAX_FIELD_SIZE ||
      v.transfer.to.length > MAX_FIELD_SIZE ||
      v.signature.length > MAX_FIELD_SIZE
    )
      refuse("err_vote_too_big", "an input field exceeded allowable length");
    if (v.transfer.amount <= 0n) refuse("err_vote_invalid_tokens", "invalid number of tokens to send");
    if (v.signature === "") refuse("err_vote_no_signature", "must sign vote");
    if (!isHash(v.transfer.to))
      refuse("err_vote_invalid_recipient", `transfer.to "${v.transfer.to.slice(0, 80)}" is not a 64-hex client id`);

    // find or create the proposal
    const r: ProposalRef = { client_id: v.transfer.from, proposal_id: v.proposal_id };
    let p = readProposal(ctx.state, r);
    if (p && now >= p.expiration_date) {
      prune(ctx, r);
      refuse("proposal_expired", "proposal is expired");
    }
    const w = readWallet(ctx.state, v.transfer.from);
    if (!p) {
      const q = readQueue(ctx.state);
      p = {
        proposal_id: v.proposal_id,
        expiration_date: now + (w?.exp_time ?? DEFAULT_EXPIRY_SEC),
        next: NO_REF,
        prev: q.tail,
        transfer: v.transfer,
        signer_threshold_ids: [],
        signer_signatures: [],
        client_signature: "",
        executed_in_txn_hash: "",
      };
      writeProposal(ctx.state, p);
      if (!isNoRef(q.tail)) {
        const prev = readProposal(ctx.state, q.tail);
        if (prev) writeProposal(ctx.state, { ...prev, next: r });
      }
      if (isNoRef(q.head)) q.head = r;
      q.tail = r;
      writeQueue(ctx.state, q);
    }
    const same = (a: Transfer, b: Transfer): boolean => a.from === b.from && a.to === b.to && a.amount === b.amount;
    if (!same(v.transfer, p.transfer)) refuse("err_vote_not_compatible", "previous votes for same proposal differed");
    if (p.executed_in_txn_hash !== "")
      return `success 0: proposal previously executed in transaction hash ${p.executed_in_txn_hash}`;
    if (!w)
      refuse("err_vote_wallet_not_registered", `wallet not registered (no multisig wallet ${v.transfer.from.slice(0, 80)})`);
    const signer = ctx.txn.client_id;
    const i = signerIndex(w, signer);
    if (i < 0) refuse("err_vote_auth", `authorization failure (${signer} is not a signer of multisig wallet ${w.client_id})`);
    const signerKey = w.signer_public_keys[i] as string;
    const thresholdId = w.signer_threshold_ids[i] as string;
    if (!getScheme(w.signature_scheme).verify(signerKey, transferHash(v.transfer), v.signature))
      refuse("err_vote_auth", "authorization failure (the vote's signature does not verify under the signer's key share)");
    let remaining = w.num_required - p.signer_signatures.length;
    if (p.signer_threshold_ids.includes(thresholdId))
      return `success ${remaining}: already voted, still need ${remaining} other votes`;
    p.signer_threshold_ids.push(thresholdId);
    p.signer_signatures.push(v.signature);
    writeProposal(ctx.state, p);
    remaining--;
    if (remaining > 0) return `success ${remaining}: need ${remaining} more votes`;
    let groupSig: string;
    try {
      groupSig = recoverSignature(
        p.signer_threshold_ids.map((id, k) => ({ id, sig: p.signer_signatures[k] as string })),
        w.num_required,
      );
    } catch (err) {
      return refuse("err_vote_recover", `in signature recovery: ${err instanceof Error ? err.message : String(err)}`);
    }
    p.client_signature = groupSig;
    ctx.state.signedTransfer({ ...p.transfer, scheme: w.signature_scheme, publicKey: w.public_key, signature: groupSig });
    p.executed_in_txn_hash = ctx.txn.hash;
    writeProposal(ctx.state, p);
    return `success 0: transfer executed with signature ${groupSig}`;
  };

  return {
    address: MULTISIG_ADDRESS,
    name: "multisig",
    restPoints: ["getWallet", "getProposal"],
    execute(ctx, fn, input) {
      switch (fn) {
        case "register":
          return register(ctx, input);
        case "vote":
          return vote(ctx, input);
        default:
          return refuse(
            "err_execute_function_not_found",
            `no multi sig smart contract function with that name: ${fn.slice(0, 40)} (register, vote)`,
          );
      }
    },
    rest(state, endpoint, params) {
      const path = endpoint.replace(/^\/+/, "");
      const notFound = (m: string): never => {
        throw new CodedError<MultisigErrorCode>({ code: "resource_not_found", op: "multisig rest" }, m);
      };
      switch (path) {
        case "getWallet":
          return readWallet(state, params.client_id ?? "") ?? notFound(`no multisig wallet ${params.client_id ?? ""}`);
        case "getProposal": {
          const p =
            readProposal(state, { client_id: params.client_id ?? "", proposal_id: params.proposal_id ?? "" }) ??
            notFound("no such proposal");
          return { ...p, ref: proposalRefOf(p) };
        }
        default:
          return notFound(`the multisig contract has no endpoint "${path.slice(0, 40)}" (getWallet, getProposal)`);
      }
    },
  };
}

/** The multisig contract. */
export const multisigContract: SmartContract = createMultisigContract();
