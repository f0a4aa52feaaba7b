/**
 * Encrypted files, client side (`storage/encryption.ts` holds the scheme): a file to upload with `encrypt` is
 * sealed segment by segment into a temporary file of ciphertext, which is then erasure-coded and uploaded as any
 * file (so no plaintext leaves the client, and blobbers, challenges and repair see only the stored bytes); a
 * download of an encrypted file fetches the sealed stream and opens it — the owner with the key behind the file's
 * encrypted key, a recipient with the key a blobber re-encrypted for them under the owner's ticket.
 */

import { createHash } from "node:crypto";
import { type FileHandle, mkdir, mkdtemp, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CodedError } from "../../../core/errors.js";
import { sha3 } from "../../../core/hash.js";
import {
  derivedFileKey,
  type EncryptionKeys,
  encryptionKeys,
  type FileKey,
  openFileKey,
  openReEncryptedKey,
  openSegment,
  openSharedSegment,
  plainSize,
  type RefView,
  SEGMENT_PLAIN,
  SEGMENT_SEALED,
  sealSegment,
} from "../../../storage/index.js";
import { sdkError } from "../../errors.js";
import type { Session } from "./session.js";

/** Why a wallet has no encryption keys. */
export const NO_MNEMONIC =
  "the wallet has no mnemonic: encryption keys are derived from it (use a wallet created or recovered from a mnemonic)";

/** The encryption keys of a wallet (from its mnemonic). @throws CodedError `invalid_encryption` without one */
export function walletEncryptionKeys(wallet: { mnemonics?: string }): EncryptionKeys {
  if (typeof wallet.mnemonics !== "string" || wallet.mnemonics.trim() === "")
    throw sdkError("invalid_encryption", "encryption keys", NO_MNEMONIC);
  return encryptionKeys(wallet.mnemonics);
}

/**
 * {@link walletEncryptionKeys}, derived on first use: the derivation multiplies a curve point (about 0.1 s of CPU
 * with its precomputed tables), which a command that neither encrypts nor reads an encrypted file does not need.
 */
export function lazyWalletEncryptionKeys(wallet: { mnemonics?: string }): EncryptionKeys {
  let keys: EncryptionKeys | undefined;
  const get = (): EncryptionKeys => {
    keys ??= walletEncryptionKeys(wallet);
    return keys;
  };
  return {
    get secret() {
      return get().secret;
    },
    get publicKey() {
      return get().publicKey;
    },
  };
}

/** The session's encryption keys. @throws CodedError `invalid_encryption` when it was opened without them */
export function sessionKeys(s: Session, op: string): EncryptionKeys {
  const k = s.options.encryption;
  if (!k) throw sdkError("invalid_encryption", op, NO_MNEMONIC);
  return k;
}

export interface SealedFile {
  path: string;
  encryptedKey: string;
  /** Remove the temporary file. */
  cleanup: () => Promise<void>;
  /** Forget the sealing salt kept for a resume (the upload committed). */
  forget: () => Promise<void>;
}

/**
 * The salt that seals `localPath` for `remotePath`: the one kept by an earlier, interrupted upload of the same file
 * (same size and modification time) in `progressDir`, else a new one (kept there until the upload commits, so a
 * rerun seals the same stream and resumes after the chunks the blobbers already hold).
 */
async function sealSalt(
  s: Session,
  localPath: string,
  remotePath: string,
): Promise<{ salt: Uint8Array; forget: () => Promise<void> }> {
  const fresh = s.randomBytes(32);
  const dir = s.options.progressDir;
  if (!dir) return { salt: fresh, forget: async () => undefined };
  const st = await stat(localPath).catch(() => undefined);
  const id = { size: st?.size ?? -1, mtime: Math.floor(st?.mtimeMs ?? 0) };
  const path = join(dir, `${s.allocation.id.slice(0, 8)}_${sha3(`seal:${localPath}:${remotePath}`).slice(0, 16)}.seal.json`);
  const forget = () => rm(path, { force: true });
  try {
    const kept = JSON.parse(await readFile(path, "utf8")) as { size: number; mtime: number; salt: string };
    if (kept.size === id.size && kept.mtime === id.mtime && /^[0-9a-f]{64}$/.test(kept.salt))
      return { salt: Buffer.from(kept.salt, "hex"), forget };
  } catch {
    // none or unreadable: a new salt
  }
  await mkdir(dir, { recursive: true });
  await writeFile(`${path}.tmp`, JSON.stringify({ ...id, salt: Buffer.from(fresh).toString("hex") }));
  await rename(`${path}.tmp`, path);
  return { salt: fresh, forget };
}

/** Read `path` in segments, giving each (and its index) to `each`; returns the SHA-256 of the whole. */
/** Fill `buf` from `pos` of `src` as far as the file goes; the bytes read (fewer only at the end of the file). */
async function readFull(src: FileHandle, buf: Uint8Array, pos: number): Promise<number> {
  let got = 0;
  while (got < buf.length) {
    const { bytesRead } = await src.read(buf, got, buf.length - got, pos + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

async function eachSegment(path: string, op: string, each?: (k: number, plain: Uint8Array) => Promise<void>): Promise<Buffer> {
  const src = await open(path, "r").catch((err) => {
    throw sdkError("local_file_error", op, `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  });
  const h = createHash("sha256");
  try {
    const buf = new Uint8Array(SEGMENT_PLAIN);
    for (let k = 0, pos = 0; ; k++) {
      const got = await readFull(src, buf, pos);
      if (got === 0) break;
      h.update(buf.subarray(0, got));
      await each?.(k, buf.subarray(0, got));
      pos += got;
      if (got < buf.length) break;
    }
  } finally {
    await src.close();
  }
  return h.digest();
}

/**
 * Seal `localPath` into a temporary file, segment by segment, under a file key derived from a salt (kept for a
 * resume, see {@link sealSalt}) and the plaintext's hash (`derivedFileKey`): the same file seals to the same stream
 * on a rerun, and other bytes never get the same segment keys. The plaintext is hashed first and again while
 * sealed; a file that changed in between is refused (its sealed copy removed, nothing sent).
 */
export async function sealFile(s: Session, localPath: string, op: string, remotePath = localPath): Promise<SealedFile> {
  const keys = sessionKeys(s, op);
  const { salt, forget } = await sealSalt(s, localPath, remotePath);
  const plainHash = await eachSegment(localPath, op);
  const fk = derivedFileKey(keys, salt, plainHash);
  const dir = await mkdtemp(join(tmpdir(), "cairn-seal-"));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, "sealed");
  try {
    const out = await open(path, "w");
    let sealedHash: Buffer;
    try {
      sealedHash = await eachSegment(localPath, op, async (k, plain) => {
        await out.write(sealSegment(keys, fk, k, plain));
      });
    } finally {
      await out.close();
    }
    if (!plainHash.equals(sealedHash))
      throw sdkError("local_file_error", op, `${localPath} changed while it was being encrypted: upload it again`);
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { path, encryptedKey: fk.encryptedKey, cleanup, forget };
}

/** The file key of an encrypted file for this reader: the owner's own, or one re-encrypted for the ticket's holder. */
export function fileKeyFor(s: Session, m: RefView, op: string): { key: FileKey; owner: boolean; keys: EncryptionKeys } {
  const encryptedKey = m.encrypted_key as string;
  const keys = sessionKeys(s, op);
  if (s.options.signer.clientId === s.allocation.owner_id) return { key: openFileKey(keys, encryptedKey), owner: true, keys };
  if (!m.re_encrypted_key)
    throw sdkError(
      "invalid_encryption",
      op,
      `${m.path} is encrypted and the blobbers sent no key re-encrypted for this reader: the owner must share it with --clientid and --encryptionpublickey of this wallet`,
    );
  return { key: openReEncryptedKey(keys, encryptedKey, m.re_encrypted_key), owner: false, keys };
}

/**
 * Open the sealed stream at `sealedPath` into `outPath` (removed again when a segment does not open). The stream is
 * the file's from segment `firstSegment` on (a block range: segment keys are by index, so a range opens alone).
 */
export async function openSealedFile(
  s: Session,
  m: RefView,
  sealedPath: string,
  outPath: string,
  op: string,
  firstSegment = 0,
): Promise<number> {
  const { key, owner, keys } = fileKeyFor(s, m, op);
  const sealedLen = (await stat(sealedPath)).size;
  const src = await open(sealedPath, "r");
  const out = await open(outPath, "w");
  let total = 0;
  try {
    const buf = new Uint8Array(SEGMENT_SEALED);
    for (let k = firstSegment, pos = 0; ; k++) {
      const got = await readFull(src, buf, pos);
      if (got === 0) break;
      const sealed = buf.subarray(0, got);
      const plain = owner ? openSegment(keys, key, k, sealed) : openSharedSegment(key, k, sealed);
      await out.write(plain);
      total += plain.length;
      pos += got;
      if (got < buf.length) break;
    }
    const want = plainSize(firstSegment === 0 && sealedLen === m.size ? m.size : sealedLen);
    if (total !== want) throw sdkError("invalid_encryption", op, `${m.path} decrypted to ${total} bytes, not ${want}`);
  } catch (err) {
    await out.close();
    await rm(outPath, { force: true });
    if (err instanceof CodedError && err.code === "invalid_encryption")
      throw sdkError("invalid_encryption", op, `cannot decrypt ${m.path}: ${err.message}`, { cause: err });
    throw err;
  } finally {
    await src.close();
    await out.close().catch(() => undefined);
  }
  return total;
}
