/** Error codes of the orchestrated deployment (`cairn-deploy`). See `core/errors.ts`. */
import type { CoreErrorCode } from "../core/errors.js";

export const ORCHESTRATE_ERROR_CODES = ["deploy_input_invalid", "deploy_apply_failed"] as const;

export type OrchestrateErrorCode = (typeof ORCHESTRATE_ERROR_CODES)[number] | CoreErrorCode;

declare module "../core/errors.js" {
  interface ErrorCatalogue {
    orchestrate: OrchestrateErrorCode;
  }
}
