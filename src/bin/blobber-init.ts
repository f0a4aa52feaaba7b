#!/usr/bin/env node
// `blobber-init --n N --host H --block_worker URL --dir D [--base_port P]`: one blobber folder for docker.local
// (blobber.init.setup.sh): keys of the blobber and its validator (the 4-line keys files with host and port
// 505N/506N, or P+100+N/P+110+N), their yaml, and the delegate wallet that stakes on it and receives its rewards.
import { join } from "node:path";
import { blobberYaml, generateProviders, validatorYaml } from "../localnet/providers.js";
import * as sdk from "../sdk/index.js";

const arg = (name: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : undefined;
  if (v === undefined) {
    console.error(`blobber-init: flag --${name}: expected a value, found nothing`);
    process.exit(2);
  }
  return v;
};
const n = Number(arg("n"));
if (!Number.isInteger(n) || n < 1 || n > 9) {
  console.error(`blobber-init: flag --n: expected a blobber number from 1 to 9, found "${arg("n")}"`);
  process.exit(2);
}
const host = arg("host");
const base = process.argv.includes("--base_port") ? Number(arg("base_port")) : undefined;
if (base !== undefined && !(Number.isInteger(base) && base > 0 && base < 65_000)) {
  console.error(`blobber-init: flag --base_port: expected a port number, found "${arg("base_port")}"`);
  process.exit(2);
}
const blobberPort = base === undefined ? 5050 + n : base + 100 + n;
const validatorPort = base === undefined ? 5060 + n : base + 110 + n;
const dir = arg("dir");
const [p] = (
  await generateProviders(
    n,
    (k) => (k === n ? blobberPort : 5050 + k),
    (k) => (k === n ? validatorPort : 5060 + k),
  )
).slice(n - 1);
if (!p) throw new Error("no provider generated");
sdk.writeFileAtomic(
  join(dir, "config", "keys.txt"),
  `${p.keys.public_key}\n${p.keys.private_key}\n${host}\n${blobberPort}\n`,
  0o600,
);
sdk.writeFileAtomic(
  join(dir, "config", "validator_keys.txt"),
  `${p.validatorKeys.public_key}\n${p.validatorKeys.private_key}\n${host}\n${validatorPort}\n`,
  0o600,
);
sdk.writeFileAtomic(join(dir, "config", "0chain_blobber.yaml"), blobberYaml(p, arg("block_worker"), sdk.DEFAULT_CHAIN_ID));
sdk.writeFileAtomic(join(dir, "config", "0chain_validator.yaml"), validatorYaml(p, arg("block_worker"), sdk.DEFAULT_CHAIN_ID));
sdk.writeWalletFile(join(dir, "delegate_wallet.json"), p.delegate);
console.log(`blobber${n}: id ${p.id}, validator ${p.validatorId}, delegate wallet ${join(dir, "delegate_wallet.json")}`);
