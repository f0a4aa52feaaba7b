/**
 * The HTTP API of the chain nodes — miners, sharders and the block worker — declared once: method, path,
 * query parameters, what the reply is, and which roles serve it. The servers (`nodes/<role>/server.ts`)
 * register exactly these routes through {@link ChainRoute.path}, and every client (the sdk, nodes talking to
 * each other, the block worker) builds its URLs with {@link routeUrl}; no path string is written twice.
 * `test/nodes/chain-routes.test.ts` checks each role serves every route declared for it and nothing else.
 *
 * Errors: every route answers failures as the reference `{"code","error"}` body (`nodes/http.ts`).
 * The blobber's file API has the same kind of table in `storage/api.ts`.
 */
import type { BlockSummary, Confirmation, MagicBlock } from "./types.js";

/** The HTTP methods of every route, chain and storage (`storage/api.ts`), and of the sdk's transport. */
export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** The methods chain nodes serve. */
export type ChainHttpMethod = Extract<HttpMethod, "GET" | "POST">;

/** The chain node roles. */
export type ChainRole = "miner" | "sharder" | "blockworker";

/** What a route answers on success. */
export type ReplyKind = "json" | "text" | "html";

/** One route. `Reply` is the type of a JSON reply (phantom: it types clients, nothing at run time). */
export interface ChainRoute<Reply = unknown> {
  method: ChainHttpMethod;
  /** fastify path pattern; `:name` segments are path parameters. */
  path: string;
  /** Query parameters the route reads. */
  query: readonly string[];
  reply: ReplyKind;
  /** Roles that serve it. */
  roles: readonly ChainRole[];
  /** Served only when the node runs view changes (the DKG). */
  viewChangeOnly?: true;
  /** Never set: carries the reply type. */
  readonly replyType?: Reply;
}

function route<Reply>(
  method: ChainHttpMethod,
  path: string,
  roles: readonly ChainRole[],
  query: readonly string[] = [],
  reply: ReplyKind = "json",
): ChainRoute<Reply> {
  return { method, path, query, reply, roles };
}

// ---- reply types ---------------------------------------------------------------------------------------

/** `POST /v1/client/put`, `GET /v1/client/get`. */
export interface ClientEntity {
  id: string;
  version: string;
  creation_date?: number;
  public_key: string;
}

/** `POST /v1/transaction/put`: the admitted transaction (its JSON form). */
export interface TxnPutReply {
  async: true;
  entity: Record<string, unknown>;
}

/** Most transactions in one `POST /v1/transactions/put`. */
export const MAX_TXN_BATCH = 256;

/** `POST /v1/transactions/put`: one outcome per submitted transaction, in order. */
export interface TxnBatchReply {
  results: TxnBatchItem[];
}

/** A batch item's outcome: admitted (its hash) or refused (the reference error form). */
export type TxnBatchItem = { ok: true; hash: string } | { ok: false; hash?: string; code: string; error: string };

/** `GET /v1/block/get`: the block and its summary. */
export interface BlockReply {
  block: Record<string, unknown>;
  header: BlockSummary;
}

/** `GET /v1/block/get/range`: finalized blocks `from..to` (at most a page) and how far the node is. */
export interface BlockRangeReply {
  blocks: Record<string, unknown>[];
  latest_finalized_round: number;
}

/** Most hashes in one `POST /v1/transactions/confirmations`. */
export const MAX_CONFIRM_BATCH = 256;

/**
 * `POST /v1/transactions/confirmations` with `{"hashes": [...]}` (Cairn's, not the reference's): each hash in order,
 * with its confirmation when it is in a finalized block. One request for a client waiting on many transactions,
 * instead of one poll each.
 */
export interface ConfirmationsReply {
  results: { hash: string; confirmation?: Confirmation }[];
  latest_finalized_block: BlockSummary;
}

/** `GET /v1/transaction/get/confirmation?content=lfb` (`content=confirmation`: the bare Confirmation). */
export interface ConfirmationReply {
  confirmation?: Confirmation;
  error?: string;
  latest_finalized_block: BlockSummary;
}

export interface BalanceReply {
  txn: string;
  round: number;
  balance: bigint | number;
}

/** `GET /v1/block/get/latest_finalized_magic_block` (sharders add the latest finalized block's summary). */
export interface MagicBlockReply extends Partial<BlockSummary> {
  magic_block: MagicBlock;
}

/** `GET /v1/block/magic/get`: the genesis block for number 1, else the magic block. */
export type MagicBlockByNumberReply = { block: Record<string, unknown> } | { magic_block: MagicBlock };

/** `GET <block worker>/network`. */
export interface NetworkReply {
  miners: string[];
  sharders: string[];
}

/** `GET /v1/chain/get/stats` (sharders add the finalization-time figures). */
export interface ChainStatsReply {
  current_round: number;
  latest_finalized_round: number;
  count: number;
  total_txns: number;
  [figure: string]: number;
}

/** `GET /_nh/status` of a miner. */
export interface NodeStatusReply {
  id: string;
  round: number;
  lfb: number;
}

/** `GET /_health_check` of a sharder (HTTP 503 when unhealthy). */
export interface HealthReply {
  ok: boolean;
  lfb: number;
  behind_rounds: number;
  reason?: string;
}

// ---- the routes ----------------------------------------------------------------------------------------

const MINER = ["miner"] as const;
const SHARDER = ["sharder"] as const;
const CHAIN = ["miner", "sharder"] as const;
const BW = ["blockworker"] as const;

/** Every route of the chain nodes. */
export const ChainRoutes = {
  // clients → miners
  /** Body `{"id","public_key"}`. */
  clientPut: route<ClientEntity>("POST", "/v1/client/put", MINER),
  clientGet: route<ClientEntity>("GET", "/v1/client/get", MINER, ["id"]),
  /** Body: the transaction JSON. */
  transactionPut: route<TxnPutReply>("POST", "/v1/transaction/put", MINER),
  /** Body `{"transactions": [...]}` (at most 256): each verified and admitted on its own, an outcome per item. */
  transactionsPut: route<TxnBatchReply>("POST", "/v1/transactions/put", MINER),
  /** A transaction still in the pool. */
  transactionGet: route<Record<string, unknown>>("GET", "/v1/transaction/get", MINER, ["hash"]),
  minerStats: route<Record<string, unknown>>("GET", "/v1/miner/get/stats", MINER),
  nodeStatus: route<NodeStatusReply>("GET", "/_nh/status", MINER),

  // miners ↔ miners, miners → sharders
  /** Body: a consensus message (`chain/consensus/codec.ts`), signed by a miner of a known magic block. */
  consensus: route<{ ok: true }>("POST", "/v1/_n2n/consensus", MINER),
  /** Body: `{cycle, dealer, share}`; reply: the signed receipt. */
  dkgShare: { ...route<Record<string, unknown>>("POST", "/v1/_m2m/dkg/share", MINER), viewChangeOnly: true },
  /** Body: a finalized block, pushed by its generator. */
  blockPush: route<Record<string, unknown>>("POST", "/v1/_m2s/block", SHARDER),

  // blocks (miners: by hash only; sharders: by hash or finalized round)
  blockGet: route<BlockReply>("GET", "/v1/block/get", CHAIN, ["block", "round", "content"]),
  latestFinalized: route<BlockSummary>("GET", "/v1/block/get/latest_finalized", CHAIN),
  blockRange: route<BlockRangeReply>("GET", "/v1/block/get/range", CHAIN, ["from", "to"]),
  latestMagicBlock: route<MagicBlockReply>("GET", "/v1/block/get/latest_finalized_magic_block", CHAIN),
  magicBlockGet: route<MagicBlockByNumberReply>("GET", "/v1/block/magic/get", SHARDER, ["magic_block_number"]),

  // clients → sharders
  confirmation: route<ConfirmationReply>("GET", "/v1/transaction/get/confirmation", SHARDER, ["hash", "content"]),
  confirmations: route<ConfirmationsReply>("POST", "/v1/transactions/confirmations", SHARDER),
  balance: route<BalanceReply>("GET", "/v1/client/get/balance", SHARDER, ["client_id"]),
  /** A smart contract's REST view at the latest finalized state; the query goes to the contract. */
  scRest: route<unknown>("GET", "/v1/screst/:address/:endpoint", SHARDER),
  sharderStats: route<Record<string, unknown>>("GET", "/v1/sharder/get/stats", SHARDER),
  health: route<HealthReply>("GET", "/_health_check", SHARDER),

  // every chain node
  chainStats: route<ChainStatsReply>("GET", "/v1/chain/get/stats", CHAIN),
  /** Text `type,host,port,id,public_key` (`zwallet getid` reads field 3). */
  whoami: route<string>("GET", "/_nh/whoami", CHAIN, [], "text"),
  diagnosticsJson: route<Record<string, unknown>>("GET", "/_diagnostics/json", CHAIN),
  diagnostics: route<string>("GET", "/_diagnostics", CHAIN, [], "html"),
  /** Prometheus text exposition (the block worker's also under `/dns`). */
  metrics: route<string>("GET", "/metrics", [...CHAIN, ...BW], [], "text"),

  // block worker (also under `/dns`: see BLOCK_WORKER_PREFIXES)
  network: route<NetworkReply>("GET", "/network", BW),
  bwMagicBlock: route<MagicBlock>("GET", "/magic_block", BW),
  bwRegistered: route<{ miners: unknown[]; sharders: unknown[] }>("GET", "/registered", BW),
  /** The status page, at `/`, `/dns` and `/dns/`. */
  bwStatus: route<string>("GET", "/", BW, [], "html"),
} as const satisfies Record<string, ChainRoute>;

export type ChainRouteName = keyof typeof ChainRoutes;

/** The block worker serves its routes at the root and under these prefixes (config `block_worker` ends in `/dns`). */
export const BLOCK_WORKER_PREFIXES = ["", "/dns"] as const;

/** The block worker's status page is also served at these paths. */
export const BLOCK_WORKER_STATUS_ALIASES = ["/dns", "/dns/"] as const;

/** The reply type of a route. */
export type ReplyOf<R> = R extends ChainRoute<infer T> ? T : never;

/** The routes a role serves. */
export function routesOf(role: ChainRole): ChainRoute[] {
  return Object.values(ChainRoutes).filter((r: ChainRoute) => r.roles.includes(role));
}

/**
 * The path (and query string) of a route, chain or storage (`storage/api.ts`): `:name` segments filled from `params`
 * (URI-encoded), then the query parameters in the order given (values URI-encoded; `undefined` values left out).
 */
export function routePath(
  r: { path: string },
  params: Record<string, string> = {},
  query: Record<string, string | number | undefined> = {},
): string {
  const path = r.path.replace(/:([a-z_]+)/g, (_m, name: string) => {
    const v = params[name];
    if (v === undefined) throw new TypeError(`route ${r.path}: missing path parameter ${name}`);
    return encodeURIComponent(v);
  });
  const qs = Object.entries(query)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join("&");
  return qs ? `${path}?${qs}` : path;
}

/** A node's base URL joined with a route's path (see {@link routePath}). */
export function routeUrl(
  base: string,
  r: ChainRoute,
  params?: Record<string, string>,
  query?: Record<string, string | number | undefined>,
): string {
  return base.replace(/\/+$/, "") + routePath(r, params, query);
}
