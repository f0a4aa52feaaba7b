/** The in-memory twin of the shard store (see `store.ts`), for tests and the in-process network. */

import { CodedError } from "../../../core/errors.js";
import type { NodeErrorCode } from "../../errors.js";
import { encodeSlot, type PromoteItem, parts, type ShardStore } from "./store.js";

/** In-memory twin of {@link FsShardStore}. */
export class MemoryShardStore implements ShardStore {
  private readonly temps = new Map<string, Uint8Array>();
  private readonly metas = new Map<string, Map<number, { len: number; leaves: Uint8Array }>>();
  private readonly objects = new Map<string, Uint8Array>();

  async writeChunkMeta(key: string, index: number, len: number, leaves: Uint8Array): Promise<void> {
    parts(key, 3, "record chunk");
    encodeSlot(len, leaves);
    const m = this.metas.get(key) ?? new Map();
    m.set(index, { len, leaves: leaves.slice() });
    this.metas.set(key, m);
  }

  async readChunkMetas(key: string): Promise<{ index: number; len: number; leaves: Uint8Array }[]> {
    return [...(this.metas.get(key) ?? new Map()).entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([index, v]) => ({ index, len: v.len, leaves: v.leaves.slice() }));
  }

  async writeTemp(key: string, offset: number, bytes: Uint8Array): Promise<void> {
    parts(key, 3, "write shard chunk");
    const cur = this.temps.get(key) ?? new Uint8Array(0);
    const len = Math.max(cur.length, offset + bytes.length);
    const next = cur.length >= len ? cur : new Uint8Array(len);
    if (next !== cur) next.set(cur);
    next.set(bytes, offset);
    this.temps.set(key, next);
  }

  async writePack(key: string, bytes: Uint8Array): Promise<void> {
    parts(key, 3, "write shard batch");
    this.temps.set(key, bytes.slice());
  }

  async promoteMany(items: PromoteItem[]): Promise<void> {
    for (const it of items) {
      if ("key" in it) {
        await this.truncateTemp(it.key, it.length);
        await this.promote(it.key, it.objectKey);
        continue;
      }
      parts(it.objectKey, 2, "commit shard");
      const pack = this.temps.get(it.pack);
      if (!pack)
        throw new CodedError<NodeErrorCode>(
          { code: "resource_not_found", op: "commit shard" },
          `uploaded batch data ${it.pack} is missing`,
        );
      if (!this.objects.has(it.objectKey)) this.objects.set(it.objectKey, pack.slice(it.offset, it.offset + it.length));
    }
  }

  async readTemp(key: string, ranges: { offset: number; length: number }[]): Promise<Uint8Array[] | undefined> {
    parts(key, 3, "read shard temp data");
    const t = this.temps.get(key);
    return t && ranges.map((r) => t.slice(r.offset, r.offset + r.length));
  }

  async truncateTemp(key: string, length: number): Promise<void> {
    const cur = this.temps.get(key);
    if (cur && cur.length > length) this.temps.set(key, cur.slice(0, length));
  }

  async promote(key: string, objectKey: string): Promise<void> {
    parts(objectKey, 2, "commit shard");
    if (this.objects.has(objectKey)) {
      this.temps.delete(key);
      return;
    }
    const t = this.temps.get(key);
    if (!t)
      throw new CodedError<NodeErrorCode>(
        { code: "resource_not_found", op: "commit shard" },
        `uploaded data for ${objectKey} is missing`,
      );
    this.objects.set(objectKey, t);
    this.temps.delete(key);
  }

  async dropTemps(prefix: string): Promise<void> {
    for (const k of [...this.temps.keys()]) if (k.startsWith(`${prefix}/`)) this.temps.delete(k);
    for (const k of [...this.metas.keys()]) if (k.startsWith(`${prefix}/`)) this.metas.delete(k);
  }

  async listChunked(prefix: string): Promise<string[]> {
    return [...this.metas.keys()].filter((k) => k.startsWith(`${prefix}/`));
  }

  async listTempConnections(): Promise<string[]> {
    return [...new Set([...this.temps.keys(), ...this.metas.keys()].map((k) => k.split("/").slice(0, 2).join("/")))];
  }

  async read(objectKey: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    const o = this.objects.get(objectKey);
    if (!o)
      throw new CodedError<NodeErrorCode>(
        { code: "resource_not_found", op: "read shard" },
        `shard object ${objectKey} is missing`,
      );
    if (!into) return o.slice(offset, offset + length);
    const part = o.subarray(offset, offset + length);
    into.set(part);
    return into.subarray(0, part.length);
  }

  async hasObject(objectKey: string): Promise<boolean> {
    return this.objects.has(objectKey);
  }

  async deleteObject(objectKey: string): Promise<void> {
    this.objects.delete(objectKey);
  }

  async listObjects(): Promise<string[]> {
    return [...this.objects.keys()];
  }

  /** Tests: overwrite stored bytes of an object (simulates disk corruption). */
  corrupt(objectKey: string, offset: number): void {
    const o = this.objects.get(objectKey);
    if (o && offset < o.length) o[offset] = (o[offset] as number) ^ 0xff;
  }
}
