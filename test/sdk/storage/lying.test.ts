// Issue 24, the client against lying blobbers (real blobber routes on loopback, one blobber answering through a
// fault-injecting hook): versions decided only by owner-signed write markers, a liar's claimed times ignored.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { BlobberClient } from "../../../src/sdk/storage/files/index.js";
import { startNet, type TestBlobber } from "../../support/storage-net.js";

const tmp = mkdtempSync(join(tmpdir(), "cairn-lying-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function localFile(bytes: Uint8Array): string {
  const p = join(tmp, `f${n++}`);
  writeFileSync(p, bytes);
  return p;
}

/** Make blobber `b` claim its write markers are `shiftS` seconds newer than they are, and its files updated later. */
function claimNewer(b: TestBlobber, shiftS: number): void {
  b.rewrite = (_url, reply) => {
    const wm = reply.latest_write_marker as { timestamp: number } | undefined;
    if (wm) wm.timestamp += shiftS;
    if (typeof reply.updated_at === "number") reply.updated_at += shiftS;
    const md = reply.meta_data as { updated_at?: number } | undefined;
    if (md && typeof md.updated_at === "number") md.updated_at += shiftS;
  };
}

describe("a lying blobber cannot roll back a committed write (24.1)", () => {
  it("on 2+2, one blobber down during an update and another claiming its older copy newer: the new version is served and kept", async () => {
    const net = await startNet({ data: 2, parity: 2 });
    try {
      const v1 = new Uint8Array(randomBytes(100_000));
      const v2 = new Uint8Array(randomBytes(120_000));
      await net.files().upload([{ localPath: localFile(v1), remotePath: "/f.bin" }]);
      // blobber 3 is down during the update; blobber 2 acknowledges its commit without applying it (keeps v1)
      await net.stop(3);
      const liar = net.blobbers[2] as TestBlobber;
      liar.intercept = (method, url) =>
        method === "POST" && url.startsWith("/v1/connection/commit") ? { body: { success: true } } : undefined;
      await net.files().upload([{ localPath: localFile(v2), remotePath: "/f.bin", update: true }]);
      await net.start(3);
      // now the liar claims its (old) state is newer than the committed one
      delete liar.intercept;
      claimNewer(liar, 100_000);
      net.events.length = 0;
      const files = net.files();
      const dst = join(tmp, `out${n++}`);
      await files.download({ remotePath: "/f.bin", localPath: dst });
      assert.deepEqual(new Uint8Array(readFileSync(dst)), v2, "the committed version is served");
      assert.ok(
        net.events.some((e) => e.kind === "blobber_failed" && e.index === 2 && /faulty/.test(e.reason)),
        "the liar is named as faulty",
      );
      // the next upload repairs the blobber that was down, and does not roll the others back
      await files.upload([{ localPath: localFile(new Uint8Array(randomBytes(5000))), remotePath: "/g.bin" }]);
      for (const down of [
        [2, 3],
        [2, 0],
      ]) {
        for (const i of down) await net.stop(i);
        const again = join(tmp, `out${n++}`);
        await net.files().download({ remotePath: "/f.bin", localPath: again });
        assert.deepEqual(new Uint8Array(readFileSync(again)), v2, `v2 still served with ${down} down`);
        for (const i of down) await net.start(i);
      }
    } finally {
      await net.close();
    }
  });
});

describe("one liar cannot block writes (24.2)", () => {
  it("a blobber claiming a marker time far in the future does not make uploads fail", async () => {
    const net = await startNet({ data: 2, parity: 2 });
    try {
      const files = net.files();
      await files.upload([{ localPath: localFile(new Uint8Array(randomBytes(3000))), remotePath: "/a.bin" }]);
      claimNewer(net.blobbers[1] as TestBlobber, 10_000_000);
      const bytes = new Uint8Array(randomBytes(70_000));
      await net.files().upload([{ localPath: localFile(bytes), remotePath: "/b.bin" }]);
      await net.files().upload([{ localPath: localFile(bytes), remotePath: "/c.bin" }]);
      const dst = join(tmp, `out${n++}`);
      await net.files().download({ remotePath: "/c.bin", localPath: dst });
      assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
      assert.ok(net.events.some((e) => e.kind === "blobber_failed" && e.index === 1 && /faulty/.test(e.reason)));
    } finally {
      await net.close();
    }
  });
});

describe("the client never signs a counter a blobber dictates (24.6)", () => {
  it("a fake `stale_read_marker … latest 100000` is refused, the blobber named, and the file read from the others", async () => {
    const net = await startNet({ data: 2, parity: 2 });
    try {
      const bytes = new Uint8Array(randomBytes(3 * 2 * 65536));
      await net.files().upload([{ localPath: localFile(bytes), remotePath: "/r.bin" }]);
      const liar = net.blobbers[0] as TestBlobber;
      const signed: number[] = [];
      liar.intercept = (method, url, body) => {
        if (method !== "POST" || !url.startsWith("/v1/file/download")) return undefined;
        const req = JSON.parse(Buffer.from(body ?? []).toString("utf8")) as { read_marker: { counter: number } };
        signed.push(Number(req.read_marker.counter));
        return {
          status: 400,
          body: {
            code: "stale_read_marker",
            error: "stale_read_marker: read counter 3 must be at least 100001 (latest 100000 + 1 blocks)",
          },
        };
      };
      net.events.length = 0;
      const files = net.files();
      for (let k = 0; k < 2; k++) {
        const dst = join(tmp, `out${n++}`);
        await files.download({ remotePath: "/r.bin", localPath: dst });
        assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
      }
      assert.ok(signed.length > 0, "the liar was asked");
      assert.ok(Math.max(...signed) <= 6, `counters signed for the liar: ${signed.join(", ")}`);
      assert.ok(net.events.some((e) => e.kind === "blobber_failed" && e.index === 0 && /faulty/.test(e.reason)));
    } finally {
      await net.close();
    }
  });

  it("continues from a higher counter a blobber proves with the reader's own marker (another session read before)", async () => {
    const net = await startNet({ data: 2, parity: 2 });
    try {
      const bytes = new Uint8Array(randomBytes(2 * 2 * 65536));
      await net.files().upload([{ localPath: localFile(bytes), remotePath: "/p.bin" }]);
      for (let k = 0; k < 3; k++) {
        const dst = join(tmp, `out${n++}`);
        await net.files().download({ remotePath: "/p.bin", localPath: dst });
        assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
      }
      assert.equal(net.events.filter((e) => e.kind === "blobber_failed").length, 0);
    } finally {
      await net.close();
    }
  });
});

describe("the chain's record of redeemed write markers decides versions too (24.1)", () => {
  it("a blobber showing an owner-signed state older than the marker the chain redeemed for it is named faulty", async () => {
    const net = await startNet({ data: 2, parity: 2 });
    try {
      const v1 = new Uint8Array(randomBytes(90_000));
      await net.files().upload([{ localPath: localFile(v1), remotePath: "/a.bin" }]);
      const liar = net.blobbers[1] as TestBlobber;
      const ref = net.allocation.blobbers[1] as { id: string; url: string };
      const stateOf = async () => {
        const c = new BlobberClient(ref, net.allocation.id, { transport: net.transport, signer: net.owner });
        const rp = await c.referencePath(["/"]);
        assert.ok(rp.latest_write_marker);
        return { wm: rp.latest_write_marker, root: rp.content_root };
      };
      const old = await stateOf();
      await net.files().upload([{ localPath: localFile(new Uint8Array(randomBytes(5000))), remotePath: "/b.bin" }]);
      const now = await stateOf();
      assert.ok(now.wm.timestamp >= old.wm.timestamp && now.wm.allocation_root !== old.wm.allocation_root);
      // the blobber was paid for its second marker, then lost it: it shows its first state (owner-signed, consistent)
      liar.rewrite = (_url, reply) => {
        if (reply.latest_write_marker) {
          reply.latest_write_marker = old.wm;
          reply.content_root = old.root;
        }
      };
      // the next write: every blobber's state is checked before the commit
      const write = async (redeemed?: Record<string, { allocation_root: string; timestamp: number }>) => {
        net.events.length = 0;
        const files = net.files({
          allocation: { ...net.allocation, size: Number(net.allocation.size), ...(redeemed ? { redeemed } : {}) },
        });
        await files.upload([{ localPath: localFile(new Uint8Array(randomBytes(3000))), remotePath: `/c${n++}.bin` }]);
        return net.events
          .filter((e) => e.kind === "blobber_failed" && e.index === 1)
          .map((e) => (e.kind === "blobber_failed" ? e.reason : ""));
      };
      // without the chain's record it only looks behind (a blobber that missed a write), not faulty
      const plain = await write();
      assert.ok(
        plain.every((r) => !/faulty/.test(r)),
        plain.join("\n"),
      );
      // with it, it is faulty and named
      const reasons = await write({ [ref.id]: { allocation_root: now.wm.allocation_root, timestamp: now.wm.timestamp } });
      assert.ok(
        reasons.some((r) => /faulty: .*older than the marker the chain redeemed for it/.test(r) && r.includes(ref.url)),
        reasons.join("\n"),
      );
      // an honest blobber at (or past) the redeemed state is not
      delete liar.rewrite;
      const honest = net.allocation.blobbers[0] as { id: string; url: string };
      const hs = (
        await new BlobberClient(honest, net.allocation.id, { transport: net.transport, signer: net.owner }).referencePath(["/"])
      ).latest_write_marker;
      assert.ok(hs);
      net.events.length = 0;
      await net
        .files({
          allocation: {
            ...net.allocation,
            size: Number(net.allocation.size),
            redeemed: { [honest.id]: { allocation_root: hs.allocation_root, timestamp: hs.timestamp } },
          },
        })
        .upload([{ localPath: localFile(new Uint8Array(randomBytes(3000))), remotePath: "/d.bin" }]);
      assert.ok(!net.events.some((e) => e.kind === "blobber_failed" && e.index === 0), JSON.stringify(net.events));
    } finally {
      await net.close();
    }
  });
});
