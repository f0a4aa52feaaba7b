/** Flag parsing shared by the token commands (interest, vesting, multisig). */
import * as sdk from "../../sdk/index.js";
import { CliExit } from "../common.js";

/** A token amount flag in ZCN → SAS, or `<prefix><reason>` when it is not one. */
export function zcnFlag(text: unknown, flag: string, prefix = `Error: invalid '${flag}' flag: `): bigint {
  try {
    return sdk.parseZcn(String(text), `--${flag}`);
  } catch (err) {
    throw new CliExit(`${prefix}${sdk.errorMessage(err)}`);
  }
}

/** An integer flag, or `undefined` when it is not an integer. */
export function intFlag(text: unknown): number | undefined {
  if (typeof text !== "string" || !/^[+-]?\d+$/.test(text.trim())) return undefined;
  const n = Number(text.trim());
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A unix time as Go's `time.Time.String()` in UTC (`2021-06-18 10:20:30 +0000 UTC`). */
export function goTime(sec: number): string {
  const d = new Date(sec * 1000);
  const p = (n: number, w = 2): string => String(n).padStart(w, "0");
  return `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000 UTC`;
}

/** Tokens as the reference prints `common.Balance` (`0.5`, `2`, `0`). */
export const tok = (sas: bigint): string => sdk.sasToZcnString(sas);

/** Collect a repeatable flag into a list (commander option parser). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(",").filter((s) => s !== "")];
}
