// Marker signatures verified (or signed) by one command, kept in the config directory for the next (issue 18.9): a
// kept entry spares only the signature check of that very marker; every other check runs, and a marker whose fields
// or signature differ is verified as before. A file others may read, or a corrupt one, counts as empty.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CodedError } from "../../../src/core/errors.js";
import { initCrypto } from "../../../src/core/schemes.js";
import { KeptVerified, VERIFIED_CACHE_FILE } from "../../../src/sdk/storage/files/verified-cache.js";
import { markerTrust, provenCounter, verifiedStamp, writeMarkerSeen } from "../../../src/sdk/storage/files/versions.js";
import { allocationRoot, signReadMarker, signWriteMarker } from "../../../src/storage/index.js";
import { signerOf } from "../../support/storage-net.js";

const faulty = (re: RegExp) => (e: unknown) => e instanceof CodedError && e.code === "faulty_blobber" && re.test(e.message);
const tick = () => new Promise((ok) => setImmediate(ok));
await initCrypto();

describe("verified marker signatures kept for the next command", () => {
  let dir: string;
  let path: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "cairn-verified-cache-"));
    path = join(dir, VERIFIED_CACHE_FILE);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const owner = signerOf("bls0chain");
  const b = { id: "b".repeat(64), url: "http://b:1" };
  const alloc = { id: "a", owner_id: owner.clientId, owner_public_key: owner.publicKey };
  const stateAt = (content: string, ts: number) => ({
    content_root: content,
    latest_write_marker: signWriteMarker(owner, {
      allocation_root: allocationRoot(content, ts),
      prev_allocation_root: "",
      allocation_id: "a",
      size: 1,
      blobber_id: b.id,
      timestamp: ts,
    }),
  });

  it("a marker verified by one command is not verified again by the next; other markers are", async () => {
    const st = stateAt("c".repeat(64), 100);
    const kept = new KeptVerified(path);
    const first = markerTrust(alloc, owner, kept);
    assert.equal(verifiedStamp(first, b, st), 100);
    kept.write(); // as at the command's end
    if (process.platform !== "win32") assert.equal(statSync(path).mode & 0o777, 0o600);
    // the next command: the same marker with a broken signature passes only because its entry is kept — shown
    // here by keeping the entry of the broken one, as a command that signed it would
    const broken = { ...st, latest_write_marker: { ...st.latest_write_marker, signature: "00".repeat(32) } };
    const fresh = markerTrust(alloc, owner, new KeptVerified(join(dir, "none.json")));
    assert.throws(() => verifiedStamp(fresh, b, broken), faulty(/not signed by the allocation owner/));
    const next = markerTrust(alloc, owner, new KeptVerified(path));
    assert.ok(next.verified.has(writeMarkerSeen(owner.publicKey, st.latest_write_marker)));
    assert.equal(verifiedStamp(next, b, st), 100);
    next.verified.add(writeMarkerSeen(owner.publicKey, broken.latest_write_marker));
    assert.equal(verifiedStamp(next, b, broken), 100);
    // a kept entry covers its fields only: the same signature on other fields is checked, and fails
    const moved = { ...st, latest_write_marker: { ...st.latest_write_marker, size: 2 } };
    assert.throws(() => verifiedStamp(next, b, moved), faulty(/not signed by the allocation owner/));
    // every other check still runs for a kept marker: its root must be the content root's, and not older than the
    // chain's redeemed marker
    assert.throws(() => verifiedStamp(next, b, { ...st, content_root: "d".repeat(64) }), faulty(/is not the one its latest/));
    const later = stateAt("e".repeat(64), 200).latest_write_marker;
    const redeemed = markerTrust(
      { ...alloc, redeemed: { [b.id]: { allocation_root: later.allocation_root, timestamp: 200 } } },
      owner,
      new KeptVerified(path),
    );
    assert.throws(() => verifiedStamp(redeemed, b, st), faulty(/older than the marker the chain redeemed/));
  });

  it("a read marker the reader signed proves its counter; a kept entry never stands for another marker", async () => {
    const kept = new KeptVerified(path);
    const trust = markerTrust(alloc, owner, kept);
    const rm = signReadMarker(owner, {
      blobber_id: b.id,
      allocation_id: "a",
      owner_id: owner.clientId,
      timestamp: 1,
      counter: 7,
    });
    assert.equal(provenCounter(trust, b, rm), 7);
    kept.write();
    const next = markerTrust(alloc, owner, new KeptVerified(path));
    assert.equal(provenCounter(next, b, rm), 7);
    assert.equal(provenCounter(next, b, { ...rm, counter: 70 }), 0, "another counter under the same signature");
  });

  it("additions are written every 64, not at each one, and at the process's exit", async () => {
    const p = join(dir, "later.json");
    const kept = new KeptVerified(p);
    for (let i = 0; i < 63; i++) kept.add(`x${i}`);
    await tick();
    assert.equal(new KeptVerified(p).size, 0, "not written at each addition");
    kept.add("x63");
    assert.equal(new KeptVerified(p).size, 64);
    // a command that ends at once: written at its exit
    const q = join(dir, "exit.json");
    const mod = new URL("../../../src/sdk/storage/files/verified-cache.js", import.meta.url).href;
    const r = spawnSync(process.execPath, [
      "--input-type=module",
      "-e",
      `const { KeptVerified } = await import(${JSON.stringify(mod)}); new KeptVerified(${JSON.stringify(q)}).add("y");`,
    ]);
    assert.equal(r.status, 0, String(r.stderr));
    assert.ok(new KeptVerified(q).has("y"));
  });

  it("a file others may read and a corrupt file count as empty", async () => {
    const st = stateAt("f".repeat(64), 300);
    const kept = new KeptVerified(path);
    verifiedStamp(markerTrust(alloc, owner, kept), b, st);
    kept.write();
    const seen = writeMarkerSeen(owner.publicKey, st.latest_write_marker);
    assert.ok(new KeptVerified(path).has(seen));
    if (process.platform !== "win32") {
      chmodSync(path, 0o644);
      assert.equal(new KeptVerified(path).has(seen), false);
    }
    writeFileSync(path, "{", { mode: 0o600 });
    assert.equal(new KeptVerified(path).size, 0);
  });
});
