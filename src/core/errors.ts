/**
 * Coded errors. Every failure that leaves a layer carries a stable `code`, the `op` (operation) that
 * failed, optionally the `node` (URL or id) it concerned, and a human message naming the root cause.
 * Callers branch on `code`, never on message text.
 *
 * Codes are typed. Each domain keeps its catalogue of codes as a string-literal union in its own
 * `errors.ts` (core here; `chain/errors.ts`, `storage/errors.ts`, `contracts/errors.ts`, `nodes/errors.ts`,
 * `sdk/errors.ts`, `localnet/errors.ts`) and adds it to {@link ErrorCatalogue} by module augmentation, so a
 * `CodedError` whose code is in no catalogue does not compile; a domain's own helper (e.g. `chainError`) or
 * `new CodedError<ChainErrorCode>(…)` narrows that to the domain's catalogue. Naming: lower snake_case, except
 * codes a client sees in the reference's spelling (listed in each catalogue's `*_REFERENCE_SPELLINGS`).
 *
 * A failure a remote node answered keeps the node's own `{"code","error"}` body in {@link RemoteError}.
 */

/** Codes shared by every layer: the wire codes of the reference `common.Respond`, crypto, amounts, wallets, config. */
export const CORE_ERROR_CODES = [
  // the reference's generic wire codes (nodes answer them, clients read them)
  "invalid_request",
  "resource_not_found",
  "internal_error",
  "rate_limited",
  "request_too_large",
  "node_busy",
  "not_implemented",
  // values
  "invalid_amount",
  "balance_overflow",
  "invalid_duration",
  "invalid_hash",
  "invalid_argument",
  // crypto and keys
  "crypto_init_failed",
  "crypto_not_initialized",
  "invalid_private_key",
  "invalid_public_key",
  "invalid_signature",
  "invalid_key_string",
  "invalid_party_id",
  "share_missing",
  "invalid_mpk",
  "invalid_share",
  "invalid_threshold",
  "threshold_not_met",
  "unknown_signature_scheme",
  "invalid_mnemonic",
  "invalid_wallet",
  // configuration files
  "config_invalid",
  "config_missing",
  "config_unreadable",
] as const;

export type CoreErrorCode = (typeof CORE_ERROR_CODES)[number];

/**
 * Every domain's catalogue of codes, by domain name. Each domain adds its union here:
 * `declare module "../core/errors.js" { interface ErrorCatalogue { chain: ChainErrorCode } }`.
 */
export interface ErrorCatalogue {
  core: CoreErrorCode;
}

/** Any code of any catalogue. */
export type ErrorCode = ErrorCatalogue[keyof ErrorCatalogue];

/** What a remote node answered: its reference error body `{"code","error"}` (`code` absent when it sent none). */
export interface RemoteError {
  /** The node's base URL. */
  node: string;
  /** HTTP status (0 when the node could not be reached). */
  status: number;
  /** The node's code, as sent (it may belong to a catalogue this client does not know). */
  code?: string;
  /** The node's message, as sent (`"<code>: <message>"` for coded errors). */
  error: string;
}

export interface CodedErrorFields<C extends ErrorCode = ErrorCode> {
  /** Stable machine-readable code from a catalogue, e.g. `invalid_signature`, `config_invalid`. */
  code: C;
  /** Operation that failed, e.g. `submit transaction`, `load config`. */
  op?: string;
  /** Node (URL or id) the operation talked to, when there was one. */
  node?: string;
  /** Extra structured detail (never secrets). */
  detail?: Record<string, unknown>;
  /** The remote node's own answer, when the failure is one a node reported. */
  remote?: RemoteError;
}

export class CodedError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name: string = "CodedError";
  readonly code: C;
  readonly op: string | undefined;
  readonly node: string | undefined;
  readonly detail: Record<string, unknown> | undefined;
  readonly remote: RemoteError | undefined;

  constructor(fields: CodedErrorFields<C>, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = fields.code;
    this.op = fields.op;
    this.node = fields.node;
    this.detail = fields.detail;
    this.remote = fields.remote;
  }

  /** One line for a user: `<op> failed[ on <node>]: <message>`. */
  describe(): string {
    const where = this.node ? ` on ${this.node}` : "";
    return this.op ? `${this.op} failed${where}: ${this.message}` : this.message;
  }

  /** Wire form, matching the reference `{"code","error"}` body. */
  toJSON(): { code: string; error: string } {
    return { code: this.code, error: `${this.code}: ${this.message}` };
  }
}

/** Shorthand constructor. */
export function codedError<C extends ErrorCode>(
  code: C,
  message: string,
  extra: Omit<CodedErrorFields<C>, "code"> = {},
): CodedError<C> {
  return new CodedError<C>({ code, ...extra }, message);
}

/** A CodedError of the core catalogue. */
export function coreError(
  code: CoreErrorCode,
  op: string,
  message: string,
  options?: { cause?: unknown },
): CodedError<CoreErrorCode> {
  return new CodedError<CoreErrorCode>({ code, op }, message, options);
}

/** The code a remote node answered, when the failure carries one (`undefined` otherwise). */
export function remoteCode(err: unknown): string | undefined {
  return err instanceof CodedError ? err.remote?.code : undefined;
}

/** Message of any thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof CodedError) return err.describe();
  if (err instanceof Error) return err.message;
  return String(err);
}
