/**
 * Printing as the reference zbox does (Go `fmt.Println` of several values joins them with one space):
 * amounts as gosdk `Balance.String()` (`1.000 ZCN`, `10.000 mZCN`), sizes as `Size.String()` (`1.0 GiB`),
 * times as Go `time.Time.String()` in UTC, durations as `Duration.String()`, floats as Go `%v`.
 */
import Table from "cli-table3";
import * as sdk from "../../sdk/index.js";
import { type CliContext, CliExit } from "../common.js";

/** `fmt.Println(a, b, ...)`: the values joined by one space. */
export function line(...parts: unknown[]): string {
  return parts.map((p) => (typeof p === "string" ? p : goValue(p))).join(" ");
}

/** Go `%v` of a float64 (exponent form below 1e-4 and from 1e21, two-digit exponent). */
export function goFloat(x: number): string {
  if (x === 0 || !Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a < 1e-4 || a >= 1e21) {
    const [m, e] = x.toExponential().split("e") as [string, string];
    const sign = e.startsWith("-") ? "-" : "+";
    const digits = e.replace(/^[+-]/, "").padStart(2, "0");
    return `${m}e${sign}${digits}`;
  }
  return String(x);
}

function goValue(v: unknown): string {
  if (typeof v === "number") return goFloat(v);
  if (typeof v === "bigint") return v.toString();
  return String(v);
}

/** gosdk `Balance.String()` of SAS. */
export function bal(v: unknown): string {
  return sdk.autoFormatBalance(sdk.storage.amount(v));
}

/** gosdk `Size.String()` (IEC, one decimal). */
export function size(v: unknown): string {
  const b = sdk.storage.amount(v);
  if (b < 1024n) return `${b} B`;
  let div = 1024n;
  let exp = 0;
  for (let n = b / 1024n; n >= 1024n; n /= 1024n) {
    div *= 1024n;
    exp++;
  }
  return `${(Number(b) / Number(div)).toFixed(1)} ${"KMGTPE"[exp]}iB`;
}

/** Go `time.Time.String()` of unix seconds, in UTC. */
export function goTime(sec: number): string {
  const t = new Date(sec * 1000);
  const p = (n: number, w = 2): string => String(n).padStart(w, "0");
  return `${p(t.getUTCFullYear(), 4)}-${p(t.getUTCMonth() + 1)}-${p(t.getUTCDate())} ${p(t.getUTCHours())}:${p(t.getUTCMinutes())}:${p(t.getUTCSeconds())} +0000 UTC`;
}

/** Go `Duration.String()` of nanoseconds. */
export function dur(v: unknown): string {
  return sdk.formatDuration(sdk.storage.amount(v));
}

/** Indented JSON (bigint kept exact), as the reference's `util.PrintJSON`. */
export function prettyJson(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `__int64__${x}` : x), 2).replace(/"__int64__(-?\d+)"/g, "$1");
}

/** A tokens flag in ZCN → SAS (`invalid '<flag>' flag: ...` otherwise). */
export function tokens(text: unknown, flag: string): bigint {
  try {
    return sdk.parseZcn(String(text), flag);
  } catch (err) {
    throw new CliExit(`invalid '${flag}' flag: ${sdk.errorMessage(err)}`);
  }
}

/** A duration flag (`744h`, `30m`) → ns. */
export function duration(text: unknown, flag: string): bigint {
  try {
    return sdk.parseDuration(String(text), flag);
  } catch (err) {
    throw new CliExit(`invalid '${flag}' flag: ${sdk.errorMessage(err)}`);
  }
}

/** An integer flag. */
export function integer(text: unknown, flag: string): bigint {
  const s = String(text).trim();
  if (!/^-?\d+$/.test(s)) throw new CliExit(`invalid '${flag}' flag: "${s}" is not an integer`);
  return BigInt(s);
}

/** A float flag. */
export function float(text: unknown, flag: string): number {
  const n = Number(String(text).trim());
  if (String(text).trim() === "" || !Number.isFinite(n))
    throw new CliExit(`invalid '${flag}' flag: "${String(text)}" is not a number`);
  return n;
}

/** The flag's string value, or `undefined` when it was not given. */
export function given(opts: Record<string, unknown>, name: string): string | undefined {
  const v = opts[name];
  return v === undefined || v === null || v === false ? undefined : String(v);
}

/** Run `body`; a failure becomes `CliExit("<prefix><cause>")` (the cause names the operation and node). */
export async function orFail<T>(prefix: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof CliExit) throw err;
    throw new CliExit(`${prefix}${sdk.errorMessage(err)}`);
  }
}

/** The wallet (created and registered on first use) and the chain client. */
export async function walletAndChain(ctx: CliContext): Promise<{ wallet: sdk.WalletFile; chain: sdk.ChainClient }> {
  const chain = await ctx.chain();
  const wallet = await ctx.ensureWallet();
  return { wallet, chain };
}

/** A plain-text table in the reference (tablewriter) style: upper-case headers, `|` separators. */
export function renderTable(header: string[], rows: string[][]): string {
  const table = new Table({
    head: header.map((h) => h.toUpperCase()),
    style: { head: [], border: [], compact: false },
    chars: {
      top: "-",
      "top-mid": "+",
      "top-left": "+",
      "top-right": "+",
      bottom: "-",
      "bottom-mid": "+",
      "bottom-left": "+",
      "bottom-right": "+",
      left: "|",
      "left-mid": "+",
      mid: "-",
      "mid-mid": "+",
      right: "|",
      "right-mid": "+",
      middle: "|",
    },
  });
  for (const r of rows) table.push(r);
  return table.toString();
}
