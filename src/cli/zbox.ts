/** zbox: storage allocations, files, pools and blobbers from the command line. */
import { Command } from "commander";
import * as sdk from "../sdk/index.js";
import { action, addCommonFlags, type CliContext, CliExit, type CliIo, runProgram } from "./common.js";
import { registerCollabCommands } from "./zbox/collab.js";
import { registerCommitCommands } from "./zbox/commit.js";
import { registerFileCommands } from "./zbox/files.js";
import { renderTable } from "./zbox/format.js";
import { registerStorageCommands } from "./zbox/index.js";
import { registerRepairCommands } from "./zbox/repair.js";
import { registerShareCommands } from "./zbox/share.js";
import { registerSyncCommands } from "./zbox/sync.js";

/** The identity zbox acts as: the wallet file, or --wallet_client_id/--wallet_client_key when both are given. */
function identity(ctx: CliContext): { clientId: string; clientKey: string; wallet?: sdk.WalletFile } {
  const given = ctx.flagIdentity();
  if (given) {
    // with the wallet file of that client its keys sign too (sign-data)
    let file: sdk.WalletFile | undefined;
    try {
      file = sdk.walletExists(ctx.walletPath()) ? ctx.readWallet() : undefined;
    } catch {
      file = undefined; // an unreadable wallet file is not needed for the identity alone
    }
    return file?.client_id === given.clientId ? { ...given, wallet: file } : given;
  }
  const wallet = ctx.readWallet();
  return { clientId: wallet.client_id, clientKey: wallet.client_key, wallet };
}

export function buildZbox(cliIo: CliIo): Command {
  // the sdk's log lines are shown unless --silent, as the reference's zbox does
  const io: CliIo = { ...cliIo, sdkLogByDefault: true };
  const program = new Command("zbox")
    .description("zbox is a decentralized storage application for the Cairn network (0chain compatible)")
    .helpCommand(true);
  addCommonFlags(program)
    .option("--wallet_client_id <id>", "wallet client_id")
    .option("--wallet_client_key <key>", "wallet client_key");

  program
    .command("version")
    .description("Prints version information")
    .action(
      action(io, (ctx) => {
        ctx.println("Version info:");
        ctx.println(`\tzboxcli..:  ${sdk.VERSION}`);
        ctx.println(`\tsdk......:  ${sdk.VERSION}`);
      }),
    );

  program
    .command("getwallet")
    .description("Get wallet information")
    .option("--json", "print the response as JSON", false)
    .action(
      action(io, async (ctx, opts) => {
        await sdk.initCrypto();
        const who = identity(ctx);
        // the encryption public key comes from the wallet's mnemonic (empty without one, as with client flags)
        const mnemonic = who.wallet?.mnemonics ?? "";
        const enc = mnemonic.trim() ? sdk.storageFiles.encryptionKeys(mnemonic).publicKey : "";
        if (opts.json) {
          ctx.println(JSON.stringify({ client_id: who.clientId, client_public_key: who.clientKey, encryption_public_key: enc }));
          return;
        }
        ctx.println(renderTable(["Public Key", "ClientID", "Encryption Public Key"], [[who.clientKey, who.clientId, enc]]));
      }),
    );

  program
    .command("sign-data")
    .description("Sign given data (sha3-256 of --data; the client id when --data is empty)")
    .option("--data <text>", "data to sign; default is the client id", "")
    .action(
      action(io, async (ctx, opts) => {
        await sdk.initCrypto();
        const who = identity(ctx);
        if (!who.wallet)
          throw new CliExit(
            "Error generating the signature. no private key: sign-data needs a wallet file, not --wallet_client_id/--wallet_client_key",
          );
        const data = typeof opts.data === "string" ? opts.data : "";
        const hash = data === "" ? who.clientId : sdk.sha3(data);
        const scheme = sdk.getScheme(ctx.schemeName());
        const key = who.wallet.keys[0];
        if (!key) throw new CliExit(`Error generating the signature. wallet ${ctx.walletPath()} has no keys`);
        ctx.println(`Signature : ${scheme.sign(key.private_key, hash)}`);
      }),
    );

  registerStorageCommands(program, io);
  registerFileCommands(program, io);
  registerShareCommands(program, io);
  registerCollabCommands(program, io);
  registerRepairCommands(program, io);
  registerSyncCommands(program, io);
  // after every file command: --commit hooks onto upload, update, delete, rename, copy, move
  registerCommitCommands(program, io);
  return program;
}

export function zboxMain(argv: string[], io: CliIo): Promise<number> {
  return runProgram(buildZbox(io), argv, io);
}
