/** zwallet: faucet, balances, transfers, staking, locks, vesting and multisig from the command line. */
import { Command } from "commander";
import * as sdk from "../sdk/index.js";
import { CliExit, type CliIo, action, addCommonFlags, runProgram } from "./common.js";

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
          wallet = sdk.recoverWallet(sdk.getScheme(ctx.schemeName()), mnemonic, new Date());
        } catch (err) {
          throw new CliExit(`Error recovering the wallet.${sdk.errorMessage(err)}`);
        }
        sdk.writeWalletFile(ctx.walletPath(), wallet);
        ctx.println("Wallet recovered!!");
      }),
    );

  return program;
}

/** Entry point used by the bin and by in-process tests. */
export function zwalletMain(argv: string[], io: CliIo): Promise<number> {
  return runProgram(buildZwallet(io), argv, io);
}
