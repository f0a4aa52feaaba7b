// The write-marker rules a blobber applies at a commit (checkWriteMarker), as one pure function.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ed25519 } from "../../src/core/ed25519.js";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";
import { clientIdOf } from "../../src/core/schemes.js";
import {
  allocationRoot,
  checkWriteMarker,
  MARKER_WINDOW_S,
  type Signer,
  signWriteMarker,
  type WriteMarker,
  type WriteMarkerExpectation,
} from "../../src/storage/index.js";

const code = (c: string) => (e: unknown) => e instanceof CodedError && e.code === c;

const keys = ed25519.generateKeys();
const owner: Signer = {
  clientId: clientIdOf(keys.publicKey),
  publicKey: keys.publicKey,
  sign: (h) => ed25519.sign(keys.privateKey, h),
};
const other = ed25519.generateKeys();

const ALLOC = sha3("allocation");
const BLOBBER = sha3("blobber");
const NOW = 1_800_000_000;
const CONTENT = sha3("content after the changes");
const previous = signWriteMarker(owner, {
  allocation_root: allocationRoot(sha3("content before"), NOW - 100),
  prev_allocation_root: "",
  allocation_id: ALLOC,
  blobber_id: BLOBBER,
  size: 10,
  timestamp: NOW - 100,
});

function marker(over: Partial<Omit<WriteMarker, "signature" | "client_id">> = {}): WriteMarker {
  return signWriteMarker(owner, {
    allocation_root: allocationRoot(CONTENT, NOW),
    prev_allocation_root: previous.allocation_root,
    allocation_id: ALLOC,
    blobber_id: BLOBBER,
    size: 42,
    timestamp: NOW,
    ...over,
  });
}

function expect(
  over: Partial<WriteMarkerExpectation<{ contentRoot: string; sizeDelta: number }>> = {},
): WriteMarkerExpectation<{ contentRoot: string; sizeDelta: number }> {
  return {
    allocationId: ALLOC,
    blobberId: BLOBBER,
    ownerId: owner.clientId,
    ownerPublicKey: owner.publicKey,
    nowS: NOW,
    latest: previous,
    contentRoot: sha3("content before"),
    apply: () => ({ contentRoot: CONTENT, sizeDelta: 42 }),
    ...over,
  };
}

describe("checkWriteMarker", () => {
  it("accepts the marker of the connection's changes and answers what apply returned", () => {
    const result = { contentRoot: CONTENT, sizeDelta: 42, extra: 1 };
    assert.equal(checkWriteMarker(marker(), { ...expect(), apply: () => result }), result);
    const { latest: _, ...first } = expect();
    assert.deepEqual(checkWriteMarker(marker({ prev_allocation_root: "" }), first).sizeDelta, 42, "the first marker");
  });

  it("refuses a marker for another allocation, blobber or owner, or not signed by the owner", () => {
    assert.throws(() => checkWriteMarker(marker({ allocation_id: sha3("x") }), expect()), code("invalid_write_marker"));
    assert.throws(() => checkWriteMarker(marker({ blobber_id: sha3("x") }), expect()), code("invalid_write_marker"));
    assert.throws(() => checkWriteMarker(marker(), expect({ ownerId: sha3("x") })), code("invalid_write_marker"));
    assert.throws(
      () => checkWriteMarker(marker(), expect({ ownerId: clientIdOf(other.publicKey), ownerPublicKey: other.publicKey })),
      code("invalid_write_marker"),
    );
    assert.throws(() => checkWriteMarker({ ...marker(), size: 43 }, expect()), code("invalid_write_marker"), "tampered");
  });

  it("refuses a marker outside the time window or older than the previous one", () => {
    const late = NOW + MARKER_WINDOW_S + 1;
    assert.throws(() => checkWriteMarker(marker(), expect({ nowS: late })), code("invalid_write_marker"));
    assert.doesNotThrow(() => checkWriteMarker(marker(), expect({ nowS: NOW + MARKER_WINDOW_S })));
    const older = marker({ timestamp: NOW - 200, allocation_root: allocationRoot(CONTENT, NOW - 200) });
    assert.throws(() => checkWriteMarker(older, expect({ nowS: NOW - 200 })), code("invalid_write_marker"));
  });

  it("refuses a marker built on another root, with the blobber's latest state in the detail, before applying", () => {
    let applied = false;
    const e = expect({
      apply: () => {
        applied = true;
        return { contentRoot: CONTENT, sizeDelta: 42 };
      },
    });
    assert.throws(
      () => checkWriteMarker(marker({ prev_allocation_root: sha3("another") }), e),
      (err: unknown) =>
        code("prev_allocation_root_mismatch")(err) &&
        (err as CodedError & { detail: { latest_write_marker?: WriteMarker } }).detail.latest_write_marker?.signature ===
          previous.signature &&
        (err as CodedError).detail?.content_root === e.contentRoot,
    );
    assert.equal(applied, false, "the changes are not applied for a marker refused on its own");
  });

  it("refuses a marker whose root or size is not the changes'", () => {
    assert.throws(
      () => checkWriteMarker(marker(), expect({ apply: () => ({ contentRoot: sha3("other"), sizeDelta: 42 }) })),
      code("allocation_root_mismatch"),
    );
    assert.throws(
      () => checkWriteMarker(marker(), expect({ apply: () => ({ contentRoot: CONTENT, sizeDelta: 41 }) })),
      code("invalid_write_marker"),
    );
  });
});
