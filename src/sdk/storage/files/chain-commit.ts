/**
 * `commit` / `--commit`: a file's metadata (or a directory change) written to the chain as a data transaction, in
 * the reference's form (gosdk `CommitMetaData` / `CommitFolderData`, Go field names), confirmed before it returns.
 * Anyone can then check it with `zwallet verify --hash <TxnID>` and read the metadata back from the transaction.
 */

import { TxnType } from "../../../chain/types.js";
import type { WalletFile } from "../../../core/wallet.js";
import { BLOCK_SIZE, type RefView } from "../../../storage/index.js";
import type { ChainClient } from "../../chain.js";

/** A file's metadata as the reference commits it (gosdk `ConsolidatedFileMeta`). */
export interface ConsolidatedFileMeta {
  Name: string;
  Type: string;
  Path: string;
  LookupHash: string;
  /** The content hash (SHA-256 of the file). */
  Hash: string;
  MimeType: string;
  /** Bytes of one blobber's shard. */
  Size: number;
  NumBlocks: number;
  ActualFileSize: number;
  ActualNumBlocks: number;
  EncryptedKey: string;
  CommitMetaTxns: unknown[];
  Collaborators: unknown[];
  Attributes: Record<string, unknown>;
}

/** What `commit` prints after `Commit Metadata successful, Response :` for a file. */
export interface CommitMetaResponse {
  TxnID: string;
  MetaData: ConsolidatedFileMeta;
}

/** A directory change as the reference commits it (gosdk `CommitFolderData`). */
export interface CommitFolderData {
  OpType: string;
  PreValue: string;
  CurrValue: string;
}

/** What `commit` prints for a directory. */
export interface CommitFolderResponse {
  TxnID: string;
  Data: CommitFolderData;
}

/** The reference's metadata of a file from its reference view. */
export function consolidatedFileMeta(r: RefView): ConsolidatedFileMeta {
  return {
    Name: r.name,
    Type: r.type,
    Path: r.path,
    LookupHash: r.lookup_hash,
    Hash: r.actual_hash ?? "",
    MimeType: r.mimetype ?? "",
    Size: r.shard_size,
    NumBlocks: r.num_blocks,
    ActualFileSize: r.size,
    ActualNumBlocks: Math.ceil(r.size / BLOCK_SIZE),
    EncryptedKey: "",
    CommitMetaTxns: [],
    Collaborators: [],
    Attributes: {},
  };
}

/**
 * Write `{"CrudType": crudType, "MetaData": meta}` to the chain as a data transaction of `wallet`, confirmed.
 * @throws CodedError of the submit and confirmation (`submit_failed`, `verify_failed`, `txn_failed`, …)
 */
export async function commitFileMeta(
  chain: ChainClient,
  wallet: WalletFile,
  crudType: string,
  meta: ConsolidatedFileMeta,
): Promise<CommitMetaResponse> {
  const r = await executeData(chain, wallet, JSON.stringify({ CrudType: crudType, MetaData: meta }));
  return { TxnID: r.hash, MetaData: meta };
}

/**
 * Write a directory change `{"OpType","PreValue","CurrValue"}` to the chain as a data transaction, confirmed.
 * @throws CodedError of the submit and confirmation
 */
export async function commitFolderChange(
  chain: ChainClient,
  wallet: WalletFile,
  data: CommitFolderData,
): Promise<CommitFolderResponse> {
  const r = await executeData(chain, wallet, JSON.stringify(data));
  return { TxnID: r.hash, Data: data };
}

/** A data transaction, confirmed (the same data twice in one second still gets a transaction of its own: `buildTransaction`). */
function executeData(chain: ChainClient, wallet: WalletFile, data: string) {
  return chain.execute(wallet, { type: TxnType.data, toClientId: "", data });
}
