/**
 * The token's price in US dollars, for `--usd` amounts and getbalance's fiat value. The price comes from
 * `zcn_price_usd` in config.yaml (the reference asked CoinGecko; a local network has no market): without it the
 * CLIs say the price is unknown and refuse a `--usd` amount, rather than print or lock a made-up value.
 */
import * as sdk from "../sdk/index.js";
import { type CliContext, CliExit } from "./common.js";

/** What getbalance prints in place of a fiat value when config.yaml sets no price. */
export const PRICE_UNKNOWN = "price unknown: set zcn_price_usd in config.yaml";

/** The configured price of one token in USD, or undefined. */
export function tokenPriceUsd(ctx: CliContext): number | undefined {
  return ctx.requireConfig().config.zcn_price_usd;
}

/** `sas` at `price` USD per token, with cents (`12.34 USD`). */
export function usdOf(sas: bigint, price: number): string {
  // cents = sas × price × 100 / 10^10, computed on the price's micro-dollars so large balances stay exact
  const micro = BigInt(Math.round(price * 1e6));
  const cents = (sas * micro * 100n + sdk.SAS_PER_ZCN * 500_000n) / (sdk.SAS_PER_ZCN * 1_000_000n);
  return `${cents / 100n}.${String(cents % 100n).padStart(2, "0")} USD`;
}

/**
 * An amount given in USD (`--usd`) as SAS at the configured price. `prefix` is the command's error prefix;
 * without a price, a negative or malformed amount the command fails naming why.
 */
export function usdToSas(ctx: CliContext, text: unknown, flag: string, prefix: string): bigint {
  const price = tokenPriceUsd(ctx);
  if (price === undefined)
    throw new CliExit(
      `${prefix}failed to convert --${flag} from USD: the token price is unknown (set zcn_price_usd in ${ctx.requireConfig().configPath})`,
    );
  const s = String(text).trim();
  let micro: bigint;
  try {
    // USD to micro-dollars exactly: parseZcn reads a decimal into units of 10^-10, then 10^4 of those make one µ$
    micro = sdk.parseZcn(s, `--${flag}`) / 10_000n;
  } catch (err) {
    throw new CliExit(`${prefix}invalid --${flag} amount in USD: ${sdk.errorMessage(err)}`);
  }
  const priceMicro = BigInt(Math.round(price * 1e6));
  return (micro * sdk.SAS_PER_ZCN) / priceMicro;
}
