/** Reading and writing wallet.json: validated on read, written atomically with mode 0600. */

import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { CodedError } from "../core/errors.js";
import { parseWallet, serializeWallet, type WalletFile } from "../core/wallet.js";
import type { SdkErrorCode } from "./errors.js";
import { writeFileAtomic } from "./fsutil.js";

/** Absolute wallet path: `--wallet` may be absolute or relative to the config directory. */
export function walletPath(configDir: string, walletFlag: string | undefined): string {
  const name = walletFlag && walletFlag.length > 0 ? walletFlag : "wallet.json";
  return isAbsolute(name) ? name : join(configDir, name);
}

export function walletExists(path: string): boolean {
  return existsSync(path);
}

/** Read and validate a wallet file. Errors name the file and the field at fault. */
export function readWalletFile(path: string): WalletFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code === "ENOENT" ? "wallet_missing" : "wallet_unreadable";
    throw new CodedError<SdkErrorCode>(
      { code, op: "read wallet" },
      `cannot read wallet file ${path}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return parseWallet(text, path);
}

/** Write a wallet file atomically (temp file + fsync + rename) with mode 0600. */
export function writeWalletFile(path: string, wallet: WalletFile): void {
  writeFileAtomic(path, serializeWallet(wallet), 0o600);
}
