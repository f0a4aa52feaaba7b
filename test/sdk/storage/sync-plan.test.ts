// The sync plan (sdk/storage/files/sync.ts): what each combination of remote, local and last-sync state plans, and
// the cache file written atomically and read back.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as sdk from "../../../src/sdk/index.js";

const F = sdk.storageFiles;
type Map_ = sdk.storageFiles.SyncFileMap;

function info(type: "f" | "d", hash = ""): sdk.storageFiles.SyncFileInfo {
  return {
    size: 0,
    mimetype: "",
    actual_size: 0,
    hash,
    type,
    encrypted_key: "",
    lookup_hash: "",
    created_at: 0,
    updated_at: 0,
  };
}

function files(entries: Record<string, string>): Map_ {
  // "d" marks a directory, anything else is a file's content hash
  return new Map(Object.entries(entries).map(([p, h]) => [p, h === "d" ? info("d") : info("f", h)]));
}

const ops = (plan: sdk.storageFiles.FileDiff[]) => plan.map((f) => `${f.operation} ${f.path}`);

describe("sync plan", () => {
  const tmp = mkdtempSync(join(tmpdir(), "cairn-sync-plan-"));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("without a cache: uploads local-only files, downloads remote-only ones, updates the ones that differ", () => {
    const remote = files({ "/a": "1", "/r": "2", "/same": "3" });
    const local = files({ "/a": "9", "/l": "4", "/same": "3" });
    assert.deepEqual(ops(F.planSync(remote, local, new Map())), ["Update /a", "Upload /l", "Download /r"]);
  });

  it("with the last sync's cache: tells a local delete from a remote add, a remote delete from a local add", () => {
    const prev = files({ "/gone-local": "1", "/gone-remote": "2", "/d": "d", "/d/x": "3" });
    const remote = files({ "/gone-local": "1", "/new-remote": "5", "/d": "d", "/d/x": "3" });
    const local = files({ "/gone-remote": "2", "/new-local": "6" });
    assert.deepEqual(ops(F.planSync(remote, local, prev)), [
      // the directory deleted locally goes as one delete (its file is not listed on its own)
      "Delete /d",
      "Delete /gone-local",
      "LocalDelete /gone-remote",
      "Upload /new-local",
      "Download /new-remote",
    ]);
  });

  it("edits since the last sync: remote edit downloads, local edit updates, both edited is a conflict", () => {
    const prev = files({ "/r": "1", "/l": "1", "/both": "1", "/del-edited": "1" });
    const remote = files({ "/r": "2", "/l": "1", "/both": "2", "/del-edited": "2" });
    const local = files({ "/r": "1", "/l": "3", "/both": "3" });
    assert.deepEqual(ops(F.planSync(remote, local, prev)), [
      "Conflict /both",
      // deleted locally but edited remotely since: the remote edit is kept (downloaded), not deleted
      "Download /del-edited",
      "Update /l",
      "Download /r",
    ]);
  });

  it("a directory with a new remote file is not deleted as a whole", () => {
    const prev = files({ "/d": "d", "/d/old": "1" });
    const remote = files({ "/d": "d", "/d/old": "1", "/d/new": "2" });
    assert.deepEqual(ops(F.planSync(remote, new Map(), prev)), ["Download /d/new", "Delete /d/old"]);
  });

  it("--uploadonly keeps uploads and updates; the cache keeps the last sync's state of the steps left out", () => {
    const plan = F.planSync(files({ "/r": "1", "/a": "1" }), files({ "/l": "2", "/a": "3" }), new Map());
    const { plan: up, skipped } = F.uploadsOnly(plan);
    assert.deepEqual(ops(up), ["Update /a", "Upload /l"]);
    assert.deepEqual(skipped, ["/r"]);
    const prev = files({ "/r": "0" });
    const next = F.nextSyncCache(files({ "/r": "1", "/a": "3", "/l": "2" }), prev, skipped);
    assert.equal(next.get("/r")?.hash, "0");
    assert.equal(next.get("/a")?.hash, "3");
  });

  it("local and remote maps: filters, exclusions, paths relative to the synced directory", async () => {
    const dir = join(tmp, "local");
    mkdirSync(join(dir, "sub"), { recursive: true });
    mkdirSync(join(dir, ".git"), { recursive: true });
    mkdirSync(join(dir, "skip"), { recursive: true });
    writeFileSync(join(dir, "sub", "a.txt"), "alpha");
    writeFileSync(join(dir, ".git", "HEAD"), "x");
    writeFileSync(join(dir, ".DS_Store"), "x");
    writeFileSync(join(dir, "skip", "b.txt"), "beta");
    const local = await F.localFileMap(dir, ["/skip/"]);
    assert.deepEqual([...local.keys()], ["/sub", "/sub/a.txt"]);
    // SHA-256 of "alpha", as the blobbers' actual_hash of the same content
    assert.equal(local.get("/sub/a.txt")?.hash, "8ed3f6ad685b959ead7022518e1af76cd816f8e8ec7ccdda1ed4018e8f2223f8");
    const ref = (path: string, type: "f" | "d"): sdk.storageFiles.FileRef => ({
      type,
      name: path.split("/").pop() ?? "",
      path,
      lookup_hash: "lh",
      hash: "h",
      size: 5,
      shard_size: 3,
      num_blocks: 1,
      ...(type === "f" ? { actual_hash: "ah" } : {}),
    });
    const remote = F.remoteFileMap(
      [ref("/", "d"), ref("/top.txt", "f"), ref("/docs", "d"), ref("/docs/x.txt", "f"), ref("/docs/skip/y.txt", "f")],
      "/docs/",
      ["/skip"],
    );
    assert.deepEqual([...remote.keys()], ["/x.txt"]);
    assert.equal(remote.get("/x.txt")?.hash, "ah");
  });

  it("writes the cache atomically (no temporary file left) and reads it back; refuses a file that is not a cache", async () => {
    const path = join(tmp, "cache.json");
    assert.equal((await F.readSyncCache(path)).size, 0);
    const map = files({ "/b": "2", "/a": "1", "/d": "d" });
    await F.writeSyncCache(path, map);
    assert.deepEqual(
      readdirSync(tmp).filter((n) => n.includes(".tmp")),
      [],
    );
    const back = await F.readSyncCache(path);
    assert.deepEqual([...back.keys()], ["/a", "/b", "/d"]);
    assert.deepEqual(back.get("/a"), map.get("/a"));
    writeFileSync(path, "[1,2]");
    await assert.rejects(F.readSyncCache(path), (e: unknown) => {
      assert.ok(e instanceof sdk.CodedError);
      assert.equal(e.code, "local_file_error");
      assert.match(e.message, /invalid cache content/);
      return true;
    });
  });
});
