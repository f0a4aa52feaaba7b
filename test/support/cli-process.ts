/**
 * Running the compiled zbox / zwallet programs as a user would (a child process), for the tests that drive a real
 * local network: `--configDir` and `--wallet` are appended, output is captured, colour is off.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

// the bundled programs package.json "bin" names (scripts/bundle-cli.mjs): what `zbox` / `zwallet` run for a user
const BIN = resolve(import.meta.dirname, "../../cli");

/** Run `bin args… --configDir cfg --wallet wallet`; `env` is added to the environment. */
export function runCli(
  bin: "zbox" | "zwallet",
  args: string[],
  cfg: string,
  wallet = "wallet.json",
  env: Record<string, string> = {},
): Promise<CliRun> {
  return new Promise((res) => {
    const c = spawn(process.execPath, [resolve(BIN, `${bin}.mjs`), ...args, "--configDir", cfg, "--wallet", wallet], {
      env: { ...process.env, FORCE_COLOR: "0", ...env },
    });
    let out = "";
    let err = "";
    c.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    c.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    c.on("exit", (code) => res({ code: code ?? -1, out, err }));
  });
}
