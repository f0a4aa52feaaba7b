// A scripted chain for blobber and validator tests: records every transaction, fails the first N registrations,
// and answers the storage SC REST views from maps the test fills.
import { CodedError } from "../../../src/core/errors.js";
import type { WalletFile } from "../../../src/core/wallet.js";
import type { ProviderChain } from "../../../src/nodes/provider/chain.js";
import type * as sdk from "../../../src/sdk/index.js";

export interface SentTxn {
  from: string;
  name: string;
  input: Record<string, unknown>;
  value: bigint;
}

export class FakeChain implements ProviderChain {
  sent: SentTxn[] = [];
  registered: string[] = [];
  /** add_blobber / add_validator calls that fail before one succeeds. */
  failRegistrations = 0;
  /** Health checks that fail. */
  failHealth = 0;
  blobbers = new Map<string, Record<string, unknown>>();
  allocations = new Map<string, Record<string, unknown>>();
  offers: string[] = [];
  stake = 0n;
  private seq = 0;

  async network(): Promise<sdk.NetworkNodes> {
    return { miners: ["http://127.0.0.1:1"], sharders: ["http://127.0.0.1:2"] };
  }

  async registerClient(w: Pick<WalletFile, "client_id" | "client_key">): Promise<void> {
    this.registered.push(w.client_id);
  }

  async execute(w: WalletFile, req: sdk.TxnRequest): Promise<sdk.TxnResult> {
    const call = JSON.parse(req.data ?? "{}") as { name: string; input: Record<string, unknown> };
    this.sent.push({ from: w.client_id, name: call.name, input: call.input, value: req.value ?? 0n });
    const hash = (++this.seq).toString(16).padStart(64, "0");
    const fail = (why: string): never => {
      throw new CodedError({ code: "txn_failed", op: "execute transaction" }, `transaction ${hash} failed: ${why}`);
    };
    if ((call.name === "add_blobber" || call.name === "add_validator") && this.failRegistrations > 0) {
      this.failRegistrations--;
      fail(`${call.name}_failed: the chain is not ready`);
    }
    if (call.name === "blobber_health_check" && this.failHealth > 0) {
      this.failHealth--;
      fail("blobber_health_check_failed: unknown blobber");
    }
    if (call.name === "add_blobber") this.blobbers.set(String(call.input.id), { ...call.input, last_health_check: 0 });
    return { hash, status: 1, output: `${call.name} ok`, confirmation: {} as sdk.Confirmation };
  }

  async scRest<T = unknown>(_address: string, endpoint: string, params: Record<string, string> = {}): Promise<T> {
    const notFound = (what: string): never => {
      const remote = {
        node: "fake",
        status: 404,
        code: "resource_not_found",
        error: `resource_not_found: ${what}: value not present`,
      };
      throw new CodedError({ code: "query_failed", op: `query ${endpoint}`, remote }, `${what}: value not present`);
    };
    if (endpoint === "getBlobber") return (this.blobbers.get(params.blobber_id ?? "") ?? notFound("blobber")) as T;
    if (endpoint === "getStakePoolStat")
      return { balance: this.stake, offers: this.offers.map((id) => ({ allocation_id: id, lock: 1 })) } as T;
    if (endpoint === "allocation") return (this.allocations.get(params.allocation ?? "") ?? notFound("allocation")) as T;
    return notFound(endpoint);
  }

  names(): string[] {
    return this.sent.map((t) => t.name);
  }
}

/** A reference-shaped allocation record on `blobberIds`, `sizeEach` bytes per blobber. */
export function allocationRecord(id: string, owner: string, blobberIds: string[], sizeEach: number, expiresSec: number) {
  return {
    id,
    tx: id,
    owner_id: owner,
    owner_public_key: "ab".repeat(64),
    data_shards: 2,
    parity_shards: blobberIds.length - 2,
    size: sizeEach * 2,
    expiration_date: expiresSec,
    blobbers: blobberIds.map((b) => ({ id: b, url: `http://127.0.0.1/${b.slice(0, 4)}` })),
    blobber_details: blobberIds.map((b) => ({ blobber_id: b, allocation_id: id, size: sizeEach })),
    finalized: false,
    canceled: false,
  };
}
