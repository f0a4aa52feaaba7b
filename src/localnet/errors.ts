/** Error codes of the local network runner. See `core/errors.ts`. */
import type { CoreErrorCode } from "../core/errors.js";

export const LOCALNET_ERROR_CODES = ["ports_unavailable"] as const;

export type LocalnetErrorCode = (typeof LOCALNET_ERROR_CODES)[number] | CoreErrorCode;

declare module "../core/errors.js" {
  interface ErrorCatalogue {
    localnet: LocalnetErrorCode;
  }
}
