/**
 * Encrypted files, client side (`storage/encryption.ts` holds the scheme): a file to upload with `encrypt` is
 * sealed segment by segment into a temporary file of ciphertext, which is then erasure-coded and uploaded as any
 * file (so no plaintext leaves the client, and blobbers, challenges and repair see only the stored bytes); a
 * download of an encrypted file fetches the sealed stream and opens it — the owner with the key behind the file's
 * encrypted key, a recipient with the key a blobber re-encrypted for them under the owner's ticket.
 */

import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CodedError } from "../../../core/errors.js";
import {
  type EncryptionKeys,
  encryptionKeys,
  type FileKey,
  newFileKey,
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
}

/** Seal `localPath` into a temporary file (a fresh file key), segment by segment. */
export async function sealFile(s: Session, localPath: string, op: string): Promise<SealedFile> {
  const keys = sessionKeys(s, op);
  const fk = newFileKey(keys, s.randomBytes(64));
  const dir = await mkdtemp(join(tmpdir(), "cairn-seal-"));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  const path = join(dir, "sealed");
  try {
    const src = await open(localPath, "r").catch((err) => {
      throw sdkError("local_file_error", op, `cannot read ${localPath}: ${(err as Error).message}`, { cause: err });
    });
    const out = await open(path, "w");
    try {
      const buf = new Uint8Array(SEGMENT_PLAIN);
      for (let k = 0, pos = 0; ; k++) {
        let got = 0;
        while (got < buf.length) {
          const { bytesRead } = await src.read(buf, got, buf.length - got, pos + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        if (got === 0) break;
        await out.write(sealSegment(keys, fk, k, buf.subarray(0, got)));
        pos += got;
        if (got < buf.length) break;
      }
    } finally {
      await src.close();
      await out.close();
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { path, encryptedKey: fk.encryptedKey, cleanup };
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

/** Open the sealed stream at `sealedPath` into `outPath` (removed again when a segment does not open). */
export async function openSealedFile(s: Session, m: RefView, sealedPath: string, outPath: string, op: string): Promise<number> {
  const { key, owner, keys } = fileKeyFor(s, m, op);
  const src = await open(sealedPath, "r");
  const out = await open(outPath, "w");
  let total = 0;
  try {
    const buf = new Uint8Array(SEGMENT_SEALED);
    for (let k = 0, pos = 0; ; k++) {
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await src.read(buf, got, buf.length - got, pos + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      if (got === 0) break;
      const sealed = buf.subarray(0, got);
      const plain = owner ? openSegment(keys, key, k, sealed) : openSharedSegment(key, k, sealed);
      await out.write(plain);
      total += plain.length;
      pos += got;
      if (got < buf.length) break;
    }
    if (total !== plainSize(m.size))
      throw sdkError("invalid_encryption", op, `${m.path} decrypted to ${total} bytes, not ${plainSize(m.size)}`);
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
