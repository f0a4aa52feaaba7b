/** Hex helpers. All hex in the protocol is lower-case without a 0x prefix. */
const HEX_RE = /^[0-9a-f]*$/;
const HASH_RE = /^[0-9a-f]{64}$/;

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Decode lower- or upper-case hex; throws TypeError on odd length or a non-hex character. */
export function fromHex(hex: string): Uint8Array {
  const h = hex.toLowerCase();
  if (h.length % 2 !== 0 || !HEX_RE.test(h)) throw new TypeError(`invalid hex string (length ${hex.length})`);
  return new Uint8Array(Buffer.from(h, "hex"));
}

export function isHex(s: string): boolean {
  return s.length % 2 === 0 && HEX_RE.test(s);
}

/** A 64-character lower-case hex string (a SHA3-256 hash or client id). */
export function isHash(s: string): boolean {
  return HASH_RE.test(s);
}
