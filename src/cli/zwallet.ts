/** zwallet: faucet, balances, transfers, staking, locks, vesting and multisig from the command line. */
import { Command } from "commander";
import * as sdk from "../sdk/index.js";
import { action, addCommonFlags, CliExit, type CliIo, positiveTokens, runProgram } from "./common.js";
import { registerGetBlobbersCommand } from "./getblobbers.js";
import { PRICE_UNKNOWN, tokenPriceUsd, usdOf } from "./price.js";
import { registerInterestCommands } from "./zwallet/interest.js";
import { registerMinerCommands } from "./zwallet/miner.js";
import { registerMultisigCommands } from "./zwallet/multisig.js";
import { registerVestingCommands } from "./zwallet/vesting.js";

export function buildZwallet(io: CliIo): Command {
  const program = new Command("zwallet")
    .description("zwallet is a decentralized wallet application for the Cairn network (0chain compatible)")
    .helpCommand(true);
  addCommonFlags(program).option("--verbose", "print the sdk log to stderr", false);

  program
    .command("version")
    .description("Prints version information")
    .action(
      action(io, (ctx) => {
        ctx.println("Version info:");
        ctx.println(`\tzwallet...:  ${sdk.VERSION}`);
        ctx.println(`\tsdk.......:  ${sdk.VERSION}`);
      }),
    );

  program
    .command("recoverwallet")
    .description("Recover wallet from its mnemonic; writes the wallet file given by --wallet")
    .option("--mnemonic <words>", "mnemonic (24 words)")
    .action(
      action(io, async (ctx, opts) => {
        const mnemonic = typeof opts.mnemonic === "string" ? opts.mnemonic.trim().split(/\s+/).join(" ") : "";
        if (mnemonic === "") throw new CliExit("Error: Mnemonic not provided");
        if (!sdk.isValidMnemonic(mnemonic)) throw new CliExit("Error: Invalid mnemonic");
        await sdk.initCrypto();
        let wallet: sdk.WalletFile;
        try {
          wallet = sdk.recoverWallet(sdk.getScheme(ctx.schemeName()), mnemonic, new Date((ctx.io.nowMs ?? sdk.systemNow)()));
        } catch (err) {
          throw new CliExit(`Error recovering the wallet.${sdk.errorMessage(err)}`);
        }
        sdk.writeWalletFile(ctx.walletPath(), wallet);
        ctx.println("Wallet recovered!!");
      }),
    );

  program
    .command("register")
    .description("Registers the wallet with the blockchain")
    .action(
      action(io, async (ctx) => {
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        try {
          await chain.registerClient(wallet);
        } catch (err) {
          throw new CliExit(`Wallet registration failed. ${sdk.errorMessage(err)}`);
        }
        ctx.println("Wallet registered");
      }),
    );

  program
    .command("faucet")
    .description("Faucet smart contract: pour tokens into the wallet (--methodName pour) or refill the faucet")
    .option("--methodName <name>", "faucet smart contract method (pour, refill)")
    .option("--input <text>", "input to the method")
    .option("--tokens <amount>", "tokens to send with the call (for pour: the amount requested)", "0")
    .action(
      action(io, async (ctx, opts) => {
        if (typeof opts.methodName !== "string" || opts.methodName === "") throw new CliExit("Error: Methodname flag is missing");
        if (typeof opts.input !== "string") throw new CliExit("Error: Input flag is missing");
        const value = tokensFlag(String(opts.tokens), "tokens");
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        try {
          const res = await chain.execute(wallet, {
            type: sdk.TxnType.smartContract,
            toClientId: sdk.ScAddress.faucet,
            value,
            data: JSON.stringify({ name: opts.methodName, input: opts.input }),
          });
          ctx.println(`Execute faucet smart contract success with txn :  ${res.hash}`);
        } catch (err) {
          throw new CliExit(`\nExecute faucet smart contract failed. ${sdk.errorMessage(err)}\n`);
        }
      }),
    );

  program
    .command("getbalance")
    .description("Get balance from sharders")
    .action(
      action(io, async (ctx) => {
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        let bal: sdk.Balance | undefined;
        try {
          bal = await chain.getBalance(wallet.client_id);
        } catch (err) {
          throw new CliExit(`\nGet balance failed. ${sdk.errorMessage(err)}\n`);
        }
        if (bal === undefined) {
          throw new CliExit(
            `\nGet balance failed. value not present: client ${wallet.client_id} has no tokens on chain yet (try: zwallet faucet --methodName pour --input "{}")\n`,
          );
        }
        // the fiat value at config.yaml's zcn_price_usd; without one, say so rather than print a made-up 0.00
        const price = tokenPriceUsd(ctx);
        const fiat = price === undefined ? PRICE_UNKNOWN : usdOf(bal.balance, price);
        ctx.println(`\nBalance: ${sdk.autoFormatBalance(bal.balance)} (${fiat})`);
      }),
    );

  program
    .command("send")
    .description("Send tokens to another wallet")
    .option("--to_client_id <id>", "client id of the receiver")
    .option("--tokens <amount>", "tokens to send")
    .option("--desc <text>", "description of the transfer")
    .option("--fee <amount>", "transaction fee in tokens", "0")
    .action(
      action(io, async (ctx, opts) => {
        if (typeof opts.to_client_id !== "string" || opts.to_client_id === "")
          throw new CliExit("Error: to_client_id flag is missing");
        if (typeof opts.tokens !== "string") throw new CliExit("Error: tokens flag is missing");
        if (typeof opts.desc !== "string") throw new CliExit("Error: Description flag is missing");
        if (!sdk.isHash(opts.to_client_id))
          throw new CliExit(
            `Send tokens failed. invalid 'to_client_id' flag: expected a 64-character hex client id, found "${opts.to_client_id}"`,
          );
        const value = positiveTokens(opts.tokens, "tokens", {
          op: "Send tokens failed. ",
          syntax: "Error: invalid 'tokens' flag: ",
        });
        const fee = tokensFlag(String(opts.fee), "fee");
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        try {
          await chain.execute(wallet, { type: sdk.TxnType.send, toClientId: opts.to_client_id, value, fee, data: opts.desc });
        } catch (err) {
          throw new CliExit(`Send tokens failed. ${sdk.errorMessage(err)}`);
        }
        ctx.println("Send tokens success");
      }),
    );

  program
    .command("verify")
    .description("Verify a transaction: is it in a finalized block, and did it succeed")
    .option("--hash <hash>", "hash of the transaction")
    .action(
      action(io, async (ctx, opts) => {
        if (typeof opts.hash !== "string" || opts.hash === "") throw new CliExit("Error: hash flag is missing");
        if (!sdk.isHash(opts.hash))
          throw new CliExit(
            `\nVerification failed. invalid 'hash' flag: expected a 64-character hex transaction hash, found "${opts.hash}"\n`,
          );
        const chain = await ctx.chain();
        const cfg = ctx.requireConfig().config;
        let found: sdk.Confirmation | undefined;
        let last = "";
        for (let i = 0; i < cfg.max_txn_query && !found; i++) {
          try {
            const q = await chain.queryConfirmation(opts.hash);
            found = q.confirmation;
            last = sdk.describeFailures(q.results);
          } catch (err) {
            throw new CliExit(`\nVerification failed.${sdk.errorMessage(err)}\n`);
          }
          if (!found && i + 1 < cfg.max_txn_query) await chain.sleep(1000);
        }
        if (!found)
          throw new CliExit(
            `\nVerification failed. transaction ${opts.hash} is not in any finalized block${last ? `: ${last}` : ""}\n`,
          );
        if (found.transaction_status !== sdk.TxnStatus.success) {
          throw new CliExit(
            `\nVerification failed. transaction ${opts.hash} is in block ${found.block_hash} (round ${found.round}) with status ${found.transaction_status} (failed): ${found.txn.transaction_output ?? ""}\n`,
          );
        }
        ctx.println("\nTransaction verification success");
      }),
    );

  program
    .command("getid")
    .description("Get the id of a miner or sharder from its URL")
    .option("--url <url>", "URL of the miner or sharder")
    .action(
      action(io, async (ctx, opts) => {
        if (typeof opts.url !== "string" || opts.url === "") throw new CliExit("Error: url flag is missing");
        const chain = await ctx.chain();
        let id: string;
        try {
          id = await chain.whoami(opts.url);
        } catch (err) {
          throw new CliExit(`Error: ID not found: ${sdk.errorMessage(err)}`);
        }
        ctx.println(`\nURL: ${opts.url} \nID: ${id}`);
      }),
    );

  registerMinerCommands(program, io);
  registerInterestCommands(program, io);
  registerVestingCommands(program, io);
  registerMultisigCommands(program, io);
  registerGetBlobbersCommand(program, io);
  return program;
}

/** A token amount flag in ZCN → SAS, or the reference's `Error: invalid '<flag>' flag` line. */
function tokensFlag(text: string, flag: string): bigint {
  try {
    return sdk.parseZcn(text, `--${flag}`);
  } catch (err) {
    throw new CliExit(`Error: invalid '${flag}' flag: ${sdk.errorMessage(err)}`);
  }
}

/** Entry point used by the bin and by in-process tests. */
export function zwalletMain(argv: string[], io: CliIo): Promise<number> {
  return runProgram(buildZwallet(io), argv, io);
}
