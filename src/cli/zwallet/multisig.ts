/**
 * zwallet createmswallet (reference `cmd/mswallet.go`): creates a group wallet and N signer wallets (shares
 * of the group key), registers them, registers the group with the multisig contract, pours test tokens into
 * each, and has T signers (all N with --testn) vote to move 0.1 ZCN from the group to a fresh recipient,
 * printing the reference transcript.
 */
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo } from "../common.js";
import { intFlag } from "./tokens-common.js";

const MAX_SIGNERS = 20;
const MIN_SIGNERS = 2;
const TEST_AMOUNT = 1_000_000_000n; // 0.1 ZCN

export function registerMultisigCommands(program: Command, io: CliIo): void {
  program
    .command("createmswallet")
    .description("create multisig wallet <numsigners> <threshold> <testN>")
    .option("--numsigners <n>", "Number of signers")
    .option("--threshold <t>", "Threshold number of signers required to sign the proposal")
    .option("--testn", "test Multiwallet with all signers. Default is false", false)
    .action(
      action(io, async (ctx, opts) => {
        if (opts.numsigners === undefined) throw new CliExit("Error: numsigners flag is missing");
        const n = intFlag(opts.numsigners);
        if (n === undefined) throw new CliExit("Error: numsubkeys is not an integer");
        if (n > MAX_SIGNERS) throw new CliExit(`Error: too many signers. Maximum numsigners allowed is ${MAX_SIGNERS}`);
        if (n < MIN_SIGNERS) throw new CliExit(`Error: too few signers. Minimum numsigners required is ${MIN_SIGNERS}`);
        if (opts.threshold === undefined) throw new CliExit("Error: threshold flag is missing");
        const t = intFlag(opts.threshold);
        if (t === undefined) throw new CliExit("Error: threshold is not an integer");
        if (t > n)
          throw new CliExit(
            `Error: given threshold (${t}) is too high. Threshold has to be less than or equal to numsigners (${n})`,
          );
        if (t < 1)
          throw new CliExit(
            `Error: given threshold (${t}) is too low. Threshold has to be at least 1 and at most numsigners (${n})`,
          );
        const testN = opts.testn === true;
        await ctx.ensureWallet();
        const chain = await ctx.chain();
        if (ctx.requireConfig().config.signature_scheme !== "bls0chain")
          throw new CliExit("encryption scheme for this blockchain is not bls0chain");
        const out = (s: string): void => io.out(s);
        const g = sdk.createMultisigGroup(t, n);

        // register every wallet with the miners
        const wallets = [g.group, ...g.signers];
        out(`\n registering ${wallets.length} wallets \n`);
        for (const [i, w] of wallets.entries()) {
          const name = i === 0 ? "group wallet" : `signer wallet number ${i} \n`;
          try {
            await chain.registerClient(w);
          } catch (err) {
            out(`\nFailed ot register wallet number ${name}\nAborting...`);
            throw new CliExit(`Error while registering ms sub wallets. The error is:\n ${sdk.errorMessage(err)}\n`);
          }
          out(`\nSuccessfully registered ${name}\n`);
        }

        // register the group with the multisig contract
        try {
          await sdk.registerMultisig(chain, g);
        } catch (err) {
          throw new CliExit(`Error while registering ms group wallet. The error is:\n ${sdk.errorMessage(err)}\n`);
        }
        out("\nMultisig wallet SC registration requested. verifying status");
        out("\nMultisigSC  wallet SC registration request success\n");

        const balance = async (w: sdk.WalletFile): Promise<bigint> => {
          const b = await chain.getBalance(w.client_id);
          const v = b?.balance ?? 0n;
          out(`\nBalance: ${sdk.sasToZcnNumber(v)}\n`);
          return v;
        };
        const pour = async (w: sdk.WalletFile): Promise<void> => {
          try {
            await chain.execute(w, {
              type: sdk.TxnType.smartContract,
              toClientId: sdk.ScAddress.faucet,
              data: JSON.stringify({ name: "pour", input: "{fillwallet}" }),
            });
          } catch (err) {
            out(`error in faucet transaction:\n${sdk.errorMessage(err)}\n`);
            throw new CliExit("Failed to test voting\n");
          }
          out("submitted transaction\n");
          out("Pour request success\n");
          if ((await balance(w)) <= 0n) throw new CliExit("Failed to test voting\n");
        };

        // the vote test
        out("\n\ntesting vote");
        const recipient = sdk.createWallet(sdk.getScheme("bls0chain"));
        try {
          await chain.registerClient(recipient);
        } catch (err) {
          throw new CliExit(`Failed to create the recipient wallet: ${sdk.errorMessage(err)}\nFailed to test voting\n`);
        }
        out(`Recipient test wallet:\n${JSON.stringify(recipient)}\n`);
        out("\nActivating group wallet by pouring test tokens\n");
        await pour(g.group);
        for (const [i, w] of g.signers.entries()) {
          out(`\nActivating signer wallet ${i + 1} by pouring test tokens\n`);
          await pour(w);
        }
        out(`Checking balance on group wallet with clientID ${g.group.client_id} before the vote`);
        await balance(g.group);

        const proposal = "testing MSVoting";
        const order = testN ? g.signers.map((_, i) => i) : shuffle(Array.from({ length: t }, (_, i) => i));
        for (const [cnt, idx] of order.entries()) {
          const signer = g.signers[idx] as sdk.WalletFile;
          const vote = sdk.createMultisigVote(signer, proposal, g.group.client_id, recipient.client_id, TEST_AMOUNT);
          out(testN ? `\nCreated Vote#${cnt + 1}:\n` : `\nCreated Vote#${cnt + 1} from signer #${idx}:\n`);
          out(`${sdk.multisigVoteJson(vote)}\n`);
          try {
            await sdk.sendMultisigVote(chain, signer, vote);
          } catch (err) {
            out(`\nFailed to register multisig vote. ${sdk.errorMessage(err)}\n\n`);
            throw new CliExit(`Failed to create a vote. Error is:${sdk.errorMessage(err)}\nFailed to test voting\n`);
          }
          out("\nMultisig Vote registration requested. verifying status");
          out("\nMultisig Voting success\n");
        }

        out(`\n\nChecking balance on group wallet ${g.group.client_id} after the vote`);
        await balance(g.group);
        out("\nChecking balance on recipient wallet after the vote");
        const got = await balance(recipient);
        if (got !== TEST_AMOUNT)
          throw new CliExit(
            `Failed to test voting: the recipient holds ${sdk.sasToZcnString(got)} ZCN after the vote, 0.1 expected\n`,
          );
        out("\nCreating and testing a multisig wallet is successful!\n\n");
      }),
    );
}

function shuffle(xs: number[]): number[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(sdk.systemRandom() * (i + 1));
    [a[i], a[j]] = [a[j] as number, a[i] as number];
  }
  return a;
}
