/**
 * Multisig state (reference `smartcontract/multisigsc/models.go`):
 *
 * - wallet under `<address><group client id>`: `{"client_id", "signature_scheme", "public_key",
 *   "signer_threshold_ids", "signer_public_keys", "num_required", "exp_time"}`;
 * - proposal under `<address><group client id><sha3(proposal id)>`: `{"proposal_id", "expiration_date",
 *   "next", "prev", "transfer": {"from","to","amount"}, "signer_threshold_ids", "signer_signatures",
 *   "client_signature", "executed_in_txn_hash"}` (`next`/`prev` are `{"client_id","proposal_id"}` refs);
 * - the expiration queue (all proposals, oldest first) under `<address><sha3("queue")>`: `{"head","tail"}`.
 */
import type { StateView } from "../../chain/state.js";
import { ScAddress } from "../../chain/types.js";
import { sha3 } from "../../core/hash.js";
import type { ContractState } from "../context.js";
import { storedBig, storedInt } from "../input.js";

export const MULTISIG_ADDRESS = ScAddress.multisig;
export const MAX_SIGNERS = 20;
export const MIN_SIGNERS = 2;
export const MAX_FIELD_SIZE = 256;
/** Proposals expire after a week unless the wallet sets `exp_time` (seconds). */
export const DEFAULT_EXPIRY_SEC = 7 * 24 * 3600;

export interface MultisigWallet {
  client_id: string;
  signature_scheme: string;
  public_key: string;
  signer_threshold_ids: string[];
  signer_public_keys: string[];
  num_required: number;
  exp_time: number;
}

export interface ProposalRef {
  client_id: string;
  proposal_id: string;
}

export interface Transfer {
  from: string;
  to: string;
  amount: bigint;
}

export interface Proposal {
  proposal_id: string;
  expiration_date: number;
  next: ProposalRef;
  prev: ProposalRef;
  transfer: Transfer;
  signer_threshold_ids: string[];
  signer_signatures: string[];
  client_signature: string;
  executed_in_txn_hash: string;
}

type Reader = Pick<StateView, "getNode"> | Pick<ContractState, "getNode">;

export const NO_REF: ProposalRef = { client_id: "", proposal_id: "" };
export const isNoRef = (r: ProposalRef): boolean => r.client_id === "" && r.proposal_id === "";
export const sameRef = (a: ProposalRef, b: ProposalRef): boolean =>
  a.client_id === b.client_id && a.proposal_id === b.proposal_id;

export const walletKey = (clientId: string): string => MULTISIG_ADDRESS + clientId;
export const proposalKey = (r: ProposalRef): string => MULTISIG_ADDRESS + r.client_id + sha3(r.proposal_id);
export const QUEUE_KEY = MULTISIG_ADDRESS + sha3("queue");

const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const ref = (v: unknown): ProposalRef => {
  const o = (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
  return { client_id: str(o.client_id), proposal_id: str(o.proposal_id) };
};

export function readWallet(s: Reader, clientId: string): MultisigWallet | undefined {
  const w = s.getNode<Record<string, unknown>>(walletKey(clientId));
  if (!w) return undefined;
  return {
    client_id: str(w.client_id),
    signature_scheme: str(w.signature_scheme),
    public_key: str(w.public_key),
    signer_threshold_ids: strs(w.signer_threshold_ids),
    signer_public_keys: strs(w.signer_public_keys),
    num_required: storedInt(w.num_required, "multisig wallet num_required"),
    exp_time: w.exp_time === undefined ? DEFAULT_EXPIRY_SEC : storedInt(w.exp_time, "multisig wallet exp_time"),
  };
}

export function readProposal(s: Reader, r: ProposalRef): Proposal | undefined {
  const p = s.getNode<Record<string, unknown>>(proposalKey(r));
  if (!p) return undefined;
  const t = (typeof p.transfer === "object" && p.transfer !== null ? p.transfer : {}) as Record<string, unknown>;
  return {
    proposal_id: str(p.proposal_id),
    expiration_date: storedInt(p.expiration_date, "multisig proposal"),
    next: ref(p.next),
    prev: ref(p.prev),
    transfer: { from: str(t.from), to: str(t.to), amount: storedBig(t.amount, "multisig proposal amount") },
    signer_threshold_ids: strs(p.signer_threshold_ids),
    signer_signatures: strs(p.signer_signatures),
    client_signature: str(p.client_signature),
    executed_in_txn_hash: str(p.executed_in_txn_hash),
  };
}

export const proposalRefOf = (p: Proposal): ProposalRef => ({ client_id: p.transfer.from, proposal_id: p.proposal_id });

export function writeProposal(s: ContractState, p: Proposal): void {
  s.putNode(proposalKey(proposalRefOf(p)), {
    proposal_id: p.proposal_id,
    expiration_date: p.expiration_date,
    next: p.next,
    prev: p.prev,
    transfer: { from: p.transfer.from, to: p.transfer.to, amount: p.transfer.amount },
    signer_threshold_ids: p.signer_threshold_ids,
    signer_signatures: p.signer_signatures,
    client_signature: p.client_signature,
    executed_in_txn_hash: p.executed_in_txn_hash,
  });
}

export function readQueue(s: Reader): { head: ProposalRef; tail: ProposalRef } {
  const q = s.getNode<Record<string, unknown>>(QUEUE_KEY);
  return { head: ref(q?.head), tail: ref(q?.tail) };
}

export function writeQueue(s: ContractState, q: { head: ProposalRef; tail: ProposalRef }): void {
  s.putNode(QUEUE_KEY, { head: q.head, tail: q.tail });
}
