/**
 * `cairn-free-marker --dir <localnet dir> --recipient <client id> [--tokens N] [--out marker.json]`: a free storage
 * marker signed by the local network's assigner (made and added by `npm start`, see `freestorage.ts`) for one
 * recipient, written as the JSON `zbox newallocation --free_storage` and `updateallocation --free_storage` read.
 * The contract checks it when redeemed (recipient, limits, used once); this command only signs.
 */
import { resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { initCrypto } from "../core/schemes.js";
import * as sdk from "../sdk/index.js";
import { freeStorageFiles, hasFreeStorage, LOCALNET_ASSIGNER, localFreeStorageMarker } from "./freestorage.js";

/** What the command reads of its surroundings (tests pass a manual clock and collect the lines). */
export interface FreeMarkerIo {
  nowMs: () => number;
  println: (line: string) => void;
  fail: (line: string) => void;
}

const SYSTEM_IO: FreeMarkerIo = {
  nowMs: sdk.systemNow,
  println: (l) => console.log(l),
  fail: (l) => console.error(l),
};

function positive(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`expected a positive number of tokens, found "${v}"`);
  return n;
}

/** Run the command; returns the exit code. */
export async function freeMarkerMain(argv: string[], io: FreeMarkerIo = SYSTEM_IO): Promise<number> {
  const program = new Command("cairn-free-marker")
    .description(
      "Sign a free storage marker with the local network's assigner, for zbox newallocation/updateallocation --free_storage",
    )
    .option("--dir <path>", "the local network's data directory", ".localnet")
    .requiredOption("--recipient <client_id>", "the wallet that may redeem the marker (zwallet getwallet shows its client id)")
    .option(
      "--tokens <n>",
      `tokens the marker gives (the assigner allows up to ${LOCALNET_ASSIGNER.individual_limit})`,
      positive,
      1,
    )
    .option("--out <file>", "where to write the marker", "marker.json")
    .exitOverride()
    .configureOutput({ writeErr: (s) => io.fail(s.trimEnd()), writeOut: (s) => io.println(s.trimEnd()) });
  try {
    program.parse(argv, { from: "user" });
  } catch (err) {
    return (err as { exitCode?: number }).exitCode ?? 2;
  }
  const o = program.opts<{ dir: string; recipient: string; tokens: number; out: string }>();
  const dir = resolve(o.dir);
  if (!hasFreeStorage(dir)) {
    io.fail(
      `cairn-free-marker: no free storage wallets in ${dir} (${freeStorageFiles(dir).assigner}); networks made before free storage lack them: start a new one with \`npm start -- --fresh\``,
    );
    return 1;
  }
  if (!/^[0-9a-f]{64}$/.test(o.recipient)) {
    io.fail(`cairn-free-marker: --recipient must be a client id (64 hex characters), found "${o.recipient}"`);
    return 2;
  }
  await initCrypto();
  const marker = localFreeStorageMarker(dir, o.recipient, o.tokens, Math.floor(io.nowMs() / 1000));
  sdk.writeFileAtomic(resolve(o.out), `${JSON.stringify(marker, null, 2)}\n`);
  io.println(
    `Free storage marker for ${o.recipient}: ${o.tokens} tokens from assigner ${LOCALNET_ASSIGNER.name}, written to ${o.out}`,
  );
  io.println(
    `Redeem it once: zbox newallocation --free_storage ${o.out} (or updateallocation --allocation <id> --free_storage ${o.out})`,
  );
  return 0;
}
