/** SHA3-256 (FIPS-202, not Keccak) and SHA-1 from node:crypto. Output lower-case hex. */
import { createHash } from "node:crypto";

export type Bytes = Uint8Array | string;

export function sha3Bytes(data: Bytes): Uint8Array {
  return new Uint8Array(createHash("sha3-256").update(data).digest());
}

/** sha3-256 hex of a UTF-8 string or bytes. */
export function sha3(data: Bytes): string {
  return createHash("sha3-256").update(data).digest("hex");
}

/** sha3 of the empty string: the reference `EmptyHash`. */
export const EMPTY_HASH = sha3("");

export function sha1(data: Bytes): string {
  return createHash("sha1").update(data).digest("hex");
}
