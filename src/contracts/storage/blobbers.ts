/**
 * Blobber and validator registration (reference `storagesc/blobber.go`): `add_blobber` (the sender is the
 * blobber), `update_blobber_settings` (only the blobber's delegate wallet), `blobber_health_check` (the blobber
 * itself), `add_validator`. A blobber whose last health check is older than `blobber_health_time` is not offered
 * for new allocations.
 *
 * The delegate owns the settings: once registered, terms, capacity and stake pool settings change only by
 * `update_blobber_settings` from the delegate wallet. Sending `add_blobber` (or `add_validator`) again — as a node
 * does at every start — updates only the URL (the node's own address) and counts as a health check; the reference
 * replaced everything, so the node's key could take the delegate's wallet, charge and prices, and a restart
 * reverted a capacity the delegate had set.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { SECOND } from "../../core/duration.js";
import type { StorageNode, Terms, ValidationNode } from "../../storage/records.js";
import type { ContractContext } from "../context.js";
import type { StorageScErrorCode } from "../errors.js";
import type { StorageConfig } from "./config.js";
import { Input, refuse } from "./errors.js";
import { ensureStakePool, readSettings } from "./stakepool.js";
import {
  addToList,
  allBlobbers,
  getBlobber,
  getStakePool,
  getValidator,
  keys,
  putBlobber,
  putStakePool,
  putValidator,
} from "./state.js";

/** Parse and check a blobber's terms (reference `Terms.validate`). */
export function readTerms(code: StorageScErrorCode, i: Input, conf: StorageConfig): Terms {
  const t: Terms = {
    read_price: i.int("read_price"),
    write_price: i.int("write_price"),
    min_lock_demand: i.float("min_lock_demand", 0),
    max_offer_duration: i.int("max_offer_duration"),
    challenge_completion_time: i.int("challenge_completion_time"),
  };
  if (t.read_price < 0n) refuse(code, `negative read_price: ${t.read_price}`);
  if (t.write_price < 0n) refuse(code, `negative write_price: ${t.write_price}`);
  if (t.read_price > conf.max_read_price)
    refuse(code, `read_price is greater than max_read_price allowed: ${t.read_price} > ${conf.max_read_price}`);
  if (t.write_price > conf.max_write_price)
    refuse(code, `write_price is greater than max_write_price allowed: ${t.write_price} > ${conf.max_write_price}`);
  if (t.min_lock_demand < 0 || t.min_lock_demand > 1)
    refuse(code, `invalid min_lock_demand: ${t.min_lock_demand} is not in [0, 1]`);
  if (t.max_offer_duration < conf.min_offer_duration)
    refuse(code, `insufficient max_offer_duration: ${t.max_offer_duration} < min_offer_duration ${conf.min_offer_duration} (ns)`);
  if (t.challenge_completion_time <= 0n) refuse(code, "challenge_completion_time must be positive");
  if (t.challenge_completion_time > conf.max_challenge_completion_time)
    refuse(
      code,
      `challenge_completion_time is greater than max allowed: ${t.challenge_completion_time} > ${conf.max_challenge_completion_time} (ns)`,
    );
  return t;
}

/** Longest provider URL accepted. */
const MAX_URL_LENGTH = 256;
const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Why `url` is not a provider base URL (undefined when it is): `http` or `https`, a host name (DNS labels) or IP
 * literal, an optional port 1–65535, an optional path; no credentials, query or fragment, at most 256 characters.
 */
export function providerUrlRefusal(url: string): string | undefined {
  if (url.length > MAX_URL_LENGTH) return `url is ${url.length} characters, the limit is ${MAX_URL_LENGTH}`;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "not a URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return `scheme ${u.protocol} is not http or https`;
  if (u.username || u.password) return "a URL with credentials";
  if (u.search || u.hash || url.includes("?") || url.includes("#")) return "a URL with a query or fragment";
  const host = u.hostname;
  const ip6 = host.startsWith("[") && host.endsWith("]");
  if (!ip6 && (host.length === 0 || host.length > 253 || !host.split(".").every((l) => HOST_LABEL.test(l))))
    return `host "${host.slice(0, 64)}" is not a host name or IP address`;
  if (u.port === "0") return "port 0";
  return undefined;
}

function readUrl(code: StorageScErrorCode, i: Input): string {
  const url = i.has("url") ? i.str("url") : i.str("base_url", "");
  if (url === "") refuse(code, "missing url: the provider's base URL (http://host:port)");
  const why = providerUrlRefusal(url);
  if (why) refuse(code, `invalid url ${JSON.stringify(url.slice(0, 80))}: ${why}; expected http(s)://host:port`);
  return url;
}

/** Parse a `StorageNode` input for blobber `id`. */
function readBlobber(code: StorageScErrorCode, input: unknown, conf: StorageConfig, id: string, publicKey: string): StorageNode {
  const i = Input.of(input, code);
  const given = i.str("id", "");
  if (given !== "" && given !== id) refuse(code, `blobber id ${given} is not the sender ${id}: a blobber registers itself`);
  const capacity = i.int("capacity");
  if (capacity < conf.min_blobber_capacity)
    refuse(code, `insufficient blobber capacity: ${capacity} < min_blobber_capacity ${conf.min_blobber_capacity}`);
  const geo = i.obj("geolocation", true);
  return {
    id,
    url: readUrl(code, i),
    geolocation: { latitude: geo.float("latitude", 0), longitude: geo.float("longitude", 0) },
    terms: readTerms(code, i.obj("terms"), conf),
    capacity,
    used: 0n,
    last_health_check: 0,
    public_key: i.str("public_key", "") || publicKey,
    stake_pool_settings: readSettings(code, i.obj("stake_pool_settings"), conf, id),
  };
}

function urlTaken(ctx: ContractContext, url: string, self: string): string | undefined {
  return allBlobbers(ctx.state).find((b) => b.url === url && b.id !== self)?.id;
}

/**
 * `add_blobber` StorageNode JSON (storage-protocol §5.3): registers the sender as a blobber with its stake pool,
 * or, if it is registered, updates its URL, terms, capacity and settings. The registration counts as a
 * health check. Output: the blobber JSON.
 */
export function addBlobber(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "add_blobber_failed";
  const id = ctx.txn.client_id;
  const b = readBlobber(code, input, conf, id, ctx.txn.public_key ?? "");
  const other = urlTaken(ctx, b.url, id);
  if (other) refuse(code, `url ${b.url} is already used by blobber ${other}`);
  const old = getBlobber(ctx.state, id);
  if (old) {
    // registered: the node may move (its URL) and report alive; the rest is the delegate's
    const moved: StorageNode = { ...old, url: b.url, last_health_check: ctx.now, public_key: old.public_key || b.public_key };
    putBlobber(ctx.state, moved);
    return stringifyExactJson(moved);
  }
  b.last_health_check = ctx.now;
  putBlobber(ctx.state, b);
  addToList(ctx.state, keys.allBlobbers, id);
  ensureStakePool(ctx.state, id, "blobber", b.stake_pool_settings);
  return stringifyExactJson(b);
}

/**
 * `update_blobber_settings` StorageNode JSON (`id` names the blobber): only the blobber's delegate wallet may
 * change its terms, capacity and stake pool settings.
 */
export function updateBlobberSettings(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "update_blobber_settings_failed";
  const i = Input.of(input, code);
  const id = i.str("id", "");
  if (id === "") refuse(code, "missing id: the blobber to update");
  const old = getBlobber(ctx.state, id);
  if (!old) refuse(code, `no such blobber: ${id}`);
  const sp = getStakePool(ctx.state, id);
  const delegate = sp?.settings.delegate_wallet ?? old.stake_pool_settings.delegate_wallet;
  if (ctx.txn.client_id !== delegate)
    refuse(
      code,
      `access denied, allowed for delegate_wallet owner only (delegate wallet ${delegate}, caller ${ctx.txn.client_id})`,
    );
  const capacity = i.has("capacity") ? i.int("capacity") : old.capacity;
  if (capacity < conf.min_blobber_capacity)
    refuse(code, `insufficient blobber capacity: ${capacity} < min_blobber_capacity ${conf.min_blobber_capacity}`);
  if (capacity < old.used) refuse(code, `capacity ${capacity} is less than the space already allocated ${old.used}`);
  const terms = i.has("terms") ? readTerms(code, i.obj("terms"), conf) : old.terms;
  const settings = i.has("stake_pool_settings")
    ? readSettings(code, i.obj("stake_pool_settings"), conf, delegate)
    : old.stake_pool_settings;
  if (sp && Object.keys(sp.pools).length > settings.num_delegates)
    refuse(
      code,
      `num_delegates ${settings.num_delegates} is less than the ${Object.keys(sp.pools).length} delegates already staked`,
    );
  const b: StorageNode = { ...old, capacity, terms, stake_pool_settings: settings };
  putBlobber(ctx.state, b);
  if (sp) {
    sp.settings = settings;
    putStakePool(ctx.state, sp);
  }
  return stringifyExactJson(b);
}

/** `blobber_health_check` (empty input): the sending blobber is alive now. */
export function blobberHealthCheck(ctx: ContractContext): string {
  const code = "blobber_health_check_failed";
  const id = ctx.txn.client_id;
  const b = getBlobber(ctx.state, id);
  if (!b) {
    const v = getValidator(ctx.state, id);
    if (!v) refuse(code, `no such blobber or validator: ${id} (send add_blobber first)`);
    v.last_health_check = ctx.now;
    putValidator(ctx.state, v);
    return stringifyExactJson(v);
  }
  b.last_health_check = ctx.now;
  putBlobber(ctx.state, b);
  return stringifyExactJson(b);
}

/** `add_validator {id?, url, stake_pool_settings}`: registers the sender as a validator with its stake pool. */
export function addValidator(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "add_validator_failed";
  const i = Input.of(input, code);
  const id = ctx.txn.client_id;
  const given = i.str("id", "");
  if (given !== "" && given !== id) refuse(code, `validator id ${given} is not the sender ${id}: a validator registers itself`);
  const old = getValidator(ctx.state, id);
  if (old) {
    // registered: the node may move (its URL) and report alive; its stake pool settings are the delegate's
    const moved: ValidationNode = { ...old, url: readUrl(code, i), last_health_check: ctx.now };
    putValidator(ctx.state, moved);
    return stringifyExactJson(moved);
  }
  const v: ValidationNode = {
    id,
    url: readUrl(code, i),
    public_key: i.str("public_key", "") || ctx.txn.public_key || "",
    last_health_check: ctx.now,
    stake_pool_settings: readSettings(code, i.obj("stake_pool_settings"), conf, id),
  };
  putValidator(ctx.state, v);
  addToList(ctx.state, keys.allValidators, id);
  ensureStakePool(ctx.state, id, "validator", v.stake_pool_settings);
  return stringifyExactJson(v);
}

/** Whether a blobber's last health check is recent enough at `now` for new allocations. */
export function isHealthy(conf: StorageConfig, b: StorageNode, now: number): boolean {
  return now - b.last_health_check <= Number(conf.blobber_health_time / SECOND);
}
