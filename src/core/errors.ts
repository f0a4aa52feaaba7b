/**
 * Coded errors. Every failure that leaves a layer carries a stable `code`, the `op` (operation) that
 * failed, optionally the `node` (URL or id) it concerned, and a human message naming the root cause.
 * Callers branch on `code`, never on message text.
 */
export interface CodedErrorFields {
  /** Stable machine-readable code, e.g. `invalid_signature`, `config_invalid`. */
  code: string;
  /** Operation that failed, e.g. `submit transaction`, `load config`. */
  op?: string;
  /** Node (URL or id) the operation talked to, when there was one. */
  node?: string;
  /** Extra structured detail (never secrets). */
  detail?: Record<string, unknown>;
}

export class CodedError extends Error {
  override readonly name: string = "CodedError";
  readonly code: string;
  readonly op: string | undefined;
  readonly node: string | undefined;
  readonly detail: Record<string, unknown> | undefined;

  constructor(fields: CodedErrorFields, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = fields.code;
    this.op = fields.op;
    this.node = fields.node;
    this.detail = fields.detail;
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
export function codedError(code: string, message: string, extra: Omit<CodedErrorFields, "code"> = {}): CodedError {
  return new CodedError({ code, ...extra }, message);
}

/** Message of any thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof CodedError) return err.describe();
  if (err instanceof Error) return err.message;
  return String(err);
}
