/**
 * Shared CLI plumbing: global flags, the per-invocation context (config dir, config, wallet), output and
 * error handling. Expected failures print one line to stderr and exit 1; output never carries colour codes.
 */
import { join } from "node:path";
import { type Command, CommanderError } from "commander";
import * as sdk from "../sdk/index.js";

/** Where a CLI writes. Tests pass buffers; the bins pass process streams. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Network transport (tests inject an in-process network; default real HTTP). */
  transport?: sdk.Transport;
  /** Clock (tests). */
  nowMs?: () => number;
  /** Waiting between polls (tests on a manual clock). */
  sleep?: (ms: number) => Promise<void>;
  /** The sdk's log lines on stderr unless --silent (zbox, as the reference); otherwise only with --verbose (zwallet). */
  sdkLogByDefault?: boolean;
}

export const processIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
};

/** Thrown by commands to stop with a message on stderr and a non-zero exit. */
export class CliExit extends Error {
  override readonly name = "CliExit";
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface GlobalFlags {
  config?: string;
  configDir?: string;
  network?: string;
  wallet?: string;
  silent?: boolean;
  verbose?: boolean;
  wallet_client_id?: string;
  wallet_client_key?: string;
}

/** Lazily resolved state of one invocation. */
export class CliContext {
  readonly configDir: string;
  constructor(
    readonly flags: GlobalFlags,
    readonly io: CliIo,
  ) {
    this.configDir = sdk.resolveConfigDir(flags.configDir);
  }

  println(line = ""): void {
    this.io.out(`${line}\n`);
  }

  /** Whether the sdk's log lines go to stderr: zbox unless --silent, zwallet with --verbose. */
  showsSdkLog(): boolean {
    return this.flags.silent !== true && (this.flags.verbose === true || this.io.sdkLogByDefault === true);
  }

  /**
   * The identity given by --wallet_client_id/--wallet_client_key (zbox), checked; undefined when neither is.
   * The client id must be the sha3 of the key, as the chain computes it.
   */
  flagIdentity(): { clientId: string; clientKey: string } | undefined {
    const id = this.flags.wallet_client_id;
    const key = this.flags.wallet_client_key;
    if (!id && !key) return undefined;
    if (!id || !key) throw new CliExit("Error: --wallet_client_id and --wallet_client_key must be given together");
    if (!sdk.isHash(id)) throw new CliExit(`Error: --wallet_client_id must be a 64-character hex client id, found "${id}"`);
    if (sdk.clientIdOf(key) !== id)
      throw new CliExit("Error: --wallet_client_key does not match --wallet_client_id (client id = sha3 of the public key)");
    return { clientId: id, clientKey: key };
  }

  /** The client a read-only command asks about: the --wallet_client_id identity, else the wallet's. */
  async clientId(): Promise<string> {
    return this.flagIdentity()?.clientId ?? (await this.ensureWallet()).client_id;
  }

  walletPath(): string {
    return sdk.walletPath(this.configDir, this.flags.wallet);
  }

  /** The signature scheme from config.yaml when there is one, else the default (bls0chain). */
  schemeName(): string {
    const cfg = this.tryConfig();
    return cfg?.config.signature_scheme ?? "bls0chain";
  }

  tryConfig(): ReturnType<typeof sdk.loadClientConfig> | undefined {
    try {
      return this.loadConfig();
    } catch (err) {
      if (err instanceof sdk.CodedError && err.code === "config_missing") return undefined;
      throw err;
    }
  }

  loadConfig(): ReturnType<typeof sdk.loadClientConfig> {
    const opts: Parameters<typeof sdk.loadClientConfig>[0] = { configDir: this.configDir };
    if (this.flags.config) opts.config = this.flags.config;
    if (this.flags.network) opts.network = this.flags.network;
    return sdk.loadClientConfig(opts);
  }

  /** The config, or the reference's `Can't read config:` failure. */
  requireConfig(): ReturnType<typeof sdk.loadClientConfig> {
    try {
      return this.loadConfig();
    } catch (err) {
      const msg = err instanceof sdk.CodedError ? err.message : sdk.errorMessage(err);
      throw new CliExit(msg.startsWith("Can't read config") ? msg : `Can't read config: ${msg}`);
    }
  }

  private chainClient: sdk.ChainClient | undefined;

  /** The chain client for this invocation (config.yaml + network.yaml, wallet scheme, transport). */
  async chain(): Promise<sdk.ChainClient> {
    const { chain, crypto } = this.startChain();
    await crypto;
    return chain;
  }

  /**
   * The chain client at once, for reads that need no signature, with the loading of the signature schemes it
   * started (`crypto`, awaited by `chain()`): a command can ask the sharders while the BLS module compiles. Nothing
   * may sign before `crypto` resolves.
   */
  startChain(): { chain: sdk.ChainClient; crypto: Promise<void> } {
    const crypto = sdk.initCrypto();
    // awaited by the caller; a failure here must not be an unhandled rejection before it is
    crypto.catch(() => undefined);
    return { chain: this.chainClientOnly(), crypto };
  }

  private chainClientOnly(): sdk.ChainClient {
    if (this.chainClient) return this.chainClient;
    const loaded = this.requireConfig();
    const transport = this.io.transport ?? new sdk.HttpTransport({ leanHttp: true });
    const extra: Parameters<typeof sdk.chainClientFor>[3] = {};
    if (this.showsSdkLog()) extra.log = (line) => this.io.err(`${line}\n`);
    if (this.io.nowMs) extra.nowMs = this.io.nowMs;
    if (this.io.sleep) extra.sleep = this.io.sleep;
    // the block worker's answer, kept for a short time: most commands then start without asking it
    extra.networkCache = { path: join(this.configDir, sdk.NETWORK_CACHE_FILE) };
    this.chainClient = sdk.chainClientFor(loaded, sdk.getScheme(loaded.config.signature_scheme), transport, extra);
    return this.chainClient;
  }

  /**
   * The wallet, creating and registering one on first use as the reference does
   * (`No wallet in path  <path> found. Creating wallet...`, `ZCN wallet created!!`).
   */
  async ensureWallet(): Promise<sdk.WalletFile> {
    const path = this.walletPath();
    const who = this.flagIdentity();
    if (who) {
      // a command that signs needs the private key of that client: the wallet file must be its
      if (!sdk.walletExists(path))
        throw new CliExit(
          `Error: no wallet file at ${path} for --wallet_client_id ${who.clientId}: this command signs, which needs the client's private key (give its wallet with --wallet)`,
        );
      const w = this.readWallet();
      if (w.client_id !== who.clientId || w.client_key !== who.clientKey)
        throw new CliExit(
          `Error: --wallet_client_id ${who.clientId} is not the client of the wallet file ${path} (${w.client_id}): its keys cannot sign for it`,
        );
      return w;
    }
    if (sdk.walletExists(path)) {
      try {
        return this.readWallet();
      } catch (err) {
        throw new CliExit(`Invalid wallet at path:${path}: ${sdk.errorMessage(err)}`);
      }
    }
    const chain = await this.chain();
    this.println(`No wallet in path  ${path} found. Creating wallet...`);
    const wallet = sdk.createWallet(sdk.getScheme(this.requireConfig().config.signature_scheme));
    try {
      await chain.registerClient(wallet);
    } catch (err) {
      throw new CliExit(`Error creating the wallet.${sdk.errorMessage(err)}`);
    }
    sdk.writeWalletFile(path, wallet);
    this.println("ZCN wallet created!!");
    await this.ensureReadPool(chain, wallet);
    return wallet;
  }

  /**
   * The wallet's storage read pool, created when it has none, as the reference does for every new wallet
   * (`Creating related read pool for storage smart-contract...`, `Read pool created successfully`).
   */
  async ensureReadPool(chain: sdk.ChainClient, wallet: sdk.WalletFile): Promise<void> {
    try {
      await sdk.storage.getReadPoolStat(chain, wallet.client_id);
      return;
    } catch (err) {
      if (!sdk.isNotFound(err)) throw new CliExit(`Failed to create read pool: ${sdk.errorMessage(err)}`);
    }
    this.println("Creating related read pool for storage smart-contract...");
    try {
      await sdk.storage.createReadPool(chain, wallet);
    } catch (err) {
      throw new CliExit(`Failed to create read pool: ${sdk.errorMessage(err)}`);
    }
    this.println("Read pool created successfully");
  }

  /** The wallet from --wallet (or the --wallet_client_id/--wallet_client_key identity where allowed). */
  readWallet(): sdk.WalletFile {
    return sdk.readWalletFile(this.walletPath());
  }
}

/** Add the global flags shared by both CLIs. */
export function addCommonFlags(program: Command): Command {
  return program
    .option("--config <file>", "config file (default is config.yaml)")
    .option("--configDir <dir>", "configuration directory (default is $HOME/.zcn)")
    .option("--network <file>", "network file to overwrite the network details (default is network.yaml)")
    .option("--wallet <file>", "wallet file (default is wallet.json)")
    .option("--silent", "do not show interactive sdk logs (shown by default)", false);
}

/** Wrap a command body: builds the context from the global flags and turns failures into CliExit. */
export function action<A extends unknown[]>(
  io: CliIo,
  body: (ctx: CliContext, opts: Record<string, unknown>, ...args: A) => Promise<void> | void,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const opts = cmd.opts();
    const flags = cmd.optsWithGlobals() as GlobalFlags;
    const ctx = new CliContext(flags, io);
    await body(ctx, opts, ...(args.slice(0, -2) as A));
  };
}

/** Run a commander program: returns the exit code instead of exiting, so tests can drive it in-process. */
export async function runProgram(program: Command, argv: string[], io: CliIo): Promise<number> {
  program.exitOverride();
  program.configureOutput({
    writeOut: (s) => io.out(s),
    writeErr: (s) => io.err(s),
    outputError: (s, write) => write(s),
  });
  for (const sub of program.commands) {
    sub.exitOverride();
    sub.configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s), outputError: (s, write) => write(s) });
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version displays exit 0; parse errors were already printed by commander
      return err.exitCode;
    }
    if (err instanceof CliExit) {
      io.err(`${err.message}\n`);
      return err.exitCode;
    }
    io.err(`${sdk.errorMessage(err)}\n`);
    return 1;
  }
}

/** Where the failures of a token amount flag go: the operation's reference prefix, and the flag-syntax prefix. */
export interface AmountPrefixes {
  /** A zero amount (and a negative one unless `negative` is given): `<op><reason><end>`. */
  op: string;
  /** Text after the reason (the reference's trailing newline of some lines). */
  end?: string;
  /** A negative amount: this line as it stands (the zbox pool commands' `invalid token amount: negative`). */
  negative?: string;
  /** Not a number: `<syntax><reason>`. */
  syntax: string;
}

/**
 * A token amount flag that must be above zero, in ZCN → SAS. Zero and negative amounts are failures of the
 * operation (its reference prefix, then the reason); text that is not a number is a flag error.
 */
export function positiveTokens(text: unknown, flag: string, p: AmountPrefixes): bigint {
  const s = String(text).trim();
  const end = p.end ?? "";
  if (s.startsWith("-")) {
    if (p.negative !== undefined) throw new CliExit(p.negative);
    throw new CliExit(`${p.op}invalid token amount: negative (--${flag} ${s})${end}`);
  }
  let v: bigint;
  try {
    v = sdk.parseZcn(s, `--${flag}`);
  } catch (err) {
    throw new CliExit(`${p.syntax}${sdk.errorMessage(err)}`);
  }
  if (v === 0n) throw new CliExit(`${p.op}invalid token amount: 0 (--${flag} must be greater than 0)${end}`);
  return v;
}

/** An id flag that was given but empty fails under the operation's prefix (a missing one has its own line). */
export function nonEmptyId(value: string, flag: string, op: string, end = ""): string {
  if (value.trim() === "") throw new CliExit(`${op}empty '${flag}' flag: give the id${end}`);
  return value;
}
