/**
 * How a file operation reads a blobber's failure: a refusal on the request's merits (another blobber will refuse
 * too: the operation stops), or a blobber out of reach (the operation goes on without it while enough remain);
 * and the errors an operation throws when too few blobbers remain.
 */

import { CodedError } from "../../../core/errors.js";
import type { StorageErrorCode } from "../../../storage/index.js";
import { type SdkErrorCode, sdkError } from "../../errors.js";

/** Error codes that mean the blobber refused the request on its merits (retrying elsewhere will not help). */
const REFUSALS: readonly string[] = [
  "invalid_operation",
  "duplicate_file",
  "max_allocation_size",
  "expired_allocation",
  "finalized_allocation",
  "invalid_path",
  "resource_not_found",
  "not_a_directory",
  "is_a_directory",
  "invalid_file_meta",
];

/** Transport codes: the blobber could not be reached or did not answer in time. */
const UNREACHABLE: readonly string[] = [
  "request_failed",
  "timeout",
  "connection_refused",
  "connection_reset",
  "dns_failed",
  "aborted",
  "transport_closed",
];

/** True when a blobber refused the request on its merits (see {@link REFUSALS}). */
export function isRefusal(err: unknown): err is CodedError<StorageErrorCode> {
  return err instanceof CodedError && REFUSALS.includes(err.code);
}

/** True when the blobber could not be reached, or failed inside (a 5xx without a code, `internal_error`). */
export function isUnreachable(err: CodedError): boolean {
  const code = err.code;
  return (
    UNREACHABLE.includes(code) ||
    (err.remote !== undefined && err.remote.code === undefined && err.remote.status >= 500) ||
    code === "internal_error"
  );
}

/** `blobber i: reason; …` of the failed blobbers. */
export function describe(failed: Map<number, string>): string {
  return [...failed.entries()].map(([i, e]) => `blobber ${i}: ${e}`).join("; ") || "no blobber answered";
}

/** `consensus_failed`: fewer than `need` blobbers remain for `op` (each failed one named with its reason). */
export function firstError(failed: Map<number, string>, op: string, need: number): CodedError {
  return sdkError("consensus_failed", op, `${op} failed: fewer than ${need} blobbers available (${describe(failed)})`);
}

/** A blobber's refusal passed on as the failure of `op`: its code, node and remote body kept, the refusal as cause. */
export function refused(r: CodedError<StorageErrorCode>, op: string): CodedError<SdkErrorCode> {
  return new CodedError<SdkErrorCode>(
    { code: r.code, op, ...(r.node ? { node: r.node } : {}), ...(r.remote ? { remote: r.remote } : {}) },
    r.message,
    { cause: r },
  );
}
