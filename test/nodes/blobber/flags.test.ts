// The storage programs' flags and files: every bad value is refused naming the flag (or the file and field),
// what was expected and what was found; the spawned binaries print that and exit non-zero.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { parseBlobberFlags, parseValidatorFlags } from "../../../src/nodes/provider/flags.js";

const good = ["--port", "5051", "--hostname", "127.0.0.1", "--files_dir", "f", "--db_dir", "d", "--keys_file", "k.txt"];

function err(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  return "no error";
}

describe("blobber and validator flags", () => {
  it("parses the reference flags, resolving paths against the working directory", () => {
    const f = parseBlobberFlags([...good, "--deployment_mode=0", "--log_dir", "/var/log/b", "--grpc_port", "31501"], "/w");
    assert.deepEqual(f, {
      port: 5051,
      hostname: "127.0.0.1",
      deploymentMode: 0,
      keysFile: "/w/k.txt",
      configDir: "/w/config",
      logDir: "/var/log/b",
      filesDir: "/w/f",
      dbDir: "/w/d",
      bind: "0.0.0.0",
    });
    const v = parseValidatorFlags(
      ["--port", "5061", "--hostname", "localhost", "--keys_file", "k.txt", "--config_dir", "c"],
      "/w",
    );
    assert.equal(v.configDir, "/w/c");
    assert.equal(v.deploymentMode, 2);
  });

  it("refuses bad values naming the flag, what was expected and what was found", () => {
    const without = (name: string): string[] => {
      const i = good.indexOf(name);
      return [...good.slice(0, i), ...good.slice(i + 2)];
    };
    assert.equal(
      err(() => parseBlobberFlags(without("--files_dir"))),
      "flag --files_dir: expected a value, found nothing (it is required)",
    );
    assert.equal(
      err(() => parseBlobberFlags([...without("--port"), "--port", "70000"])),
      'flag --port: expected a port number between 1 and 65535, found "70000"',
    );
    assert.equal(
      err(() => parseBlobberFlags([...good, "--deployment_mode", "3"])),
      'flag --deployment_mode: expected 0 (development), 1 (test) or 2 (main), found "3"',
    );
    assert.equal(
      err(() => parseBlobberFlags([...without("--hostname"), "--hostname", "bad host"])),
      'flag --hostname: expected a host name or IP address, found "bad host"',
    );
    assert.match(
      err(() => parseBlobberFlags([...good, "--colour", "x"])),
      /^unknown flag --colour; known flags: --port, /,
    );
    assert.equal(
      err(() => parseBlobberFlags([...good, "--port", "1"])),
      "flag --port: given twice",
    );
    assert.match(
      err(() => parseValidatorFlags(["--port", "1", "--hostname", "h", "--keys_file", "k", "--files_dir", "f"])),
      /unknown flag --files_dir/,
    );
  });
});

describe("blobber and validator binaries", () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-blobber-flags-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = (name: string): string => resolve(import.meta.dirname, `../../../src/bin/${name}.js`);
  const run = (name: string, args: string[]) =>
    spawnSync(process.execPath, [bin(name), ...args], { encoding: "utf8", timeout: 30_000 });

  it("exit 2 with the flag error and usage", () => {
    const r = run("blobber", ["--port", "x"]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^blobber: flag --port: expected a port number between 1 and 65535, found "x"\nusage: blobber /);
  });

  it("exit 1 naming the yaml file, field, expected and found", () => {
    const cfg = join(dir, "config");
    mkdirSync(cfg, { recursive: true });
    writeFileSync(join(cfg, "0chain_blobber.yaml"), "block_worker: http://127.0.0.1:1/dns\nmin_lock_demand: 2\n");
    writeFileSync(join(cfg, "0chain_validator.yaml"), "block_worker: nowhere\n");
    const r = run("blobber", [...good.slice(0, 8), "--keys_file", join(dir, "keys.txt"), "--config_dir", cfg]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^blobber: cannot start: .*0chain_blobber\.yaml: field "min_lock_demand": expected .*, found 2/);
    const v = run("validator", ["--port", "1", "--hostname", "h", "--keys_file", join(dir, "keys.txt"), "--config_dir", cfg]);
    assert.equal(v.status, 1);
    assert.match(
      v.stderr,
      /^validator: cannot start: .*0chain_validator\.yaml: field "block_worker": expected .*found "nowhere"/,
    );
  });

  it("exit 1 naming the keys file line when the keys are bad", () => {
    const cfg = join(dir, "config");
    writeFileSync(join(cfg, "0chain_blobber.yaml"), "block_worker: http://127.0.0.1:1/dns\n");
    writeFileSync(join(dir, "keys.txt"), "zz-not-hex\n");
    const r = run("blobber", [...good.slice(0, 8), "--keys_file", join(dir, "keys.txt"), "--config_dir", cfg]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /keys\.txt: line 1: expected the public key in hex, found "zz-not-hex"/);
  });
});
