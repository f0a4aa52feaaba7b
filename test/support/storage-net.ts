// A tiny storage network for tests: N blobbers (fastify on port 0, file routes, memory or lmdb KV, memory or fs
// shard store), an in-memory allocation source, and a client for the allocation.
import { randomBytes } from "node:crypto";
import { clientIdOf, getScheme, initCrypto } from "../../src/core/schemes.js";
import {
  type AllocationView,
  assembleFileApi,
  type FileService,
  MemoryShardStore,
  type ShardStore,
} from "../../src/nodes/blobber/files/index.js";
import { createServer, type Listening, listen } from "../../src/nodes/http.js";
import { SystemClock } from "../../src/nodes/io/clock.js";
import type { KV } from "../../src/nodes/io/kv.js";
import { MemoryKV } from "../../src/nodes/io/kv-memory.js";
import { silentLogger } from "../../src/nodes/logger.js";
import { HttpTransport } from "../../src/sdk/http-transport.js";
import { AllocationFiles, type AllocationFilesOptions, type FilesEvent } from "../../src/sdk/storage/files/index.js";
import type { Signer } from "../../src/storage/index.js";

export interface TestBlobber {
  id: string;
  kv: KV;
  store: ShardStore;
  service: FileService;
  listening: Listening;
  url: string;
  /** Delay every request by this many ms (slow blobber). */
  delayMs: number;
  /** Answer downloads with flipped bytes. */
  corruptDownloads: boolean;
  /** A lying blobber: answer a request itself (a reply body, status 200 unless given) instead of the real blobber. */
  intercept?: (method: string, url: string, body: Uint8Array | undefined) => { status?: number; body: object } | undefined;
  /** A lying blobber: rewrite a JSON reply (parsed) before it is sent. */
  rewrite?: (url: string, reply: Record<string, unknown>) => void;
}

export interface TestNet {
  allocation: AllocationView & { blobbers: { id: string; url: string }[] };
  owner: Signer;
  blobbers: TestBlobber[];
  transport: HttpTransport;
  events: FilesEvent[];
  files(opts?: Partial<AllocationFilesOptions>): AllocationFiles;
  stop(i: number): Promise<void>;
  start(i: number): Promise<void>;
  close(): Promise<void>;
}

export function signerOf(scheme: "ed25519" | "bls0chain" = "ed25519"): Signer {
  const s = getScheme(scheme);
  const k = s.generateKeys();
  return { clientId: clientIdOf(k.publicKey), publicKey: k.publicKey, sign: (h) => s.sign(k.privateKey, h) };
}

/** The chain's view of an allocation held whole by one blobber (1 data shard, no parity), as blobber tests use it. */
export function oneBlobberAllocation(
  owner: Signer,
  blobberId: string,
  opts: { expiresAtSec: number; size?: number },
): {
  id: string;
  owner_id: string;
  owner_public_key: string;
  data_shards: number;
  parity_shards: number;
  size: number;
  expiration_date: number;
  blobbers: string[];
  finalized: boolean;
  canceled: boolean;
} {
  return {
    id: randomBytes(32).toString("hex"),
    owner_id: owner.clientId,
    owner_public_key: owner.publicKey,
    data_shards: 1,
    parity_shards: 0,
    size: opts.size ?? 1024 * 1024 * 1024,
    expiration_date: opts.expiresAtSec,
    blobbers: [blobberId],
    finalized: false,
    canceled: false,
  };
}

export async function startNet(opts: { data?: number; parity?: number; size?: number; owner?: Signer } = {}): Promise<TestNet> {
  await initCrypto();
  const data = opts.data ?? 2;
  const parity = opts.parity ?? 2;
  const owner = opts.owner ?? signerOf();
  const ids = Array.from({ length: data + parity }, () => randomBytes(32).toString("hex"));
  const allocation = {
    id: randomBytes(32).toString("hex"),
    owner_id: owner.clientId,
    owner_public_key: owner.publicKey,
    data_shards: data,
    parity_shards: parity,
    size: opts.size ?? 1024 * 1024 * 1024,
    expiration_date: Math.floor(Date.now() / 1000) + 86400,
    blobbers: ids.map((id) => ({ id, url: "" })),
    finalized: false,
    canceled: false,
  };
  const source = { get: async (id: string) => (id === allocation.id ? allocation : undefined) };
  const blobbers: TestBlobber[] = [];
  const boot = async (id: string, kv: KV, store: ShardStore): Promise<TestBlobber> => {
    const app = createServer({ node: `blobber-${id.slice(0, 6)}`, logger: silentLogger() });
    const b = { id, kv, store, delayMs: 0, corruptDownloads: false } as TestBlobber;
    app.addHook("onRequest", async () => {
      if (b.delayMs > 0) await new Promise((r) => setTimeout(r, b.delayMs));
    });
    app.addHook("preHandler", async (req, reply) => {
      const fake = b.intercept?.(req.method, req.url, req.body as Uint8Array | undefined);
      if (fake)
        return reply
          .code(fake.status ?? 200)
          .type("application/json")
          .send(JSON.stringify(fake.body));
    });
    app.addHook("onSend", async (req, _reply, payload) => {
      if (b.corruptDownloads && req.url.startsWith("/v1/file/download") && Buffer.isBuffer(payload) && payload.length > 200) {
        const copy = Buffer.from(payload);
        const at = copy.length - 10;
        copy[at] = (copy[at] as number) ^ 0xff;
        return copy;
      }
      if (b.rewrite && typeof payload === "string" && payload.startsWith("{")) {
        const v = JSON.parse(payload) as Record<string, unknown>;
        b.rewrite(req.url, v);
        return JSON.stringify(v);
      }
      return payload;
    });
    const deps = { kv, shards: store, clock: new SystemClock(), blobberId: id, allocations: source, log: silentLogger() };
    b.service = (await assembleFileApi(deps, { app })).service;
    b.listening = await listen(app, "127.0.0.1", 0);
    b.url = b.listening.url;
    return b;
  };
  for (const id of ids) {
    const b = await boot(id, new MemoryKV(), new MemoryShardStore());
    blobbers.push(b);
  }
  allocation.blobbers.forEach((x, i) => {
    x.url = (blobbers[i] as TestBlobber).url;
  });
  const transport = new HttpTransport();
  const events: FilesEvent[] = [];
  return {
    allocation,
    owner,
    blobbers,
    transport,
    events,
    files: (o = {}) =>
      new AllocationFiles({
        allocation: { ...allocation, size: Number(allocation.size) },
        transport,
        signer: owner,
        timeoutMs: 20_000,
        onEvent: (e) => events.push(e),
        ...o,
      }),
    async stop(i) {
      await (blobbers[i] as TestBlobber).listening.close(0);
    },
    async start(i) {
      const old = blobbers[i] as TestBlobber;
      // same data, a new process on a new port: the allocation's URL follows it
      const b = await boot(old.id, old.kv, old.store);
      b.delayMs = old.delayMs;
      if (old.intercept) b.intercept = old.intercept;
      if (old.rewrite) b.rewrite = old.rewrite;
      blobbers[i] = b;
      (allocation.blobbers[i] as { url: string }).url = b.url;
    },
    async close() {
      await Promise.all(blobbers.map((b) => b.listening.close(0)));
      await transport.close?.();
    },
  };
}
