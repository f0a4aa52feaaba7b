// Stopping the local network's processes: SIGTERM with a grace period, SIGKILL after it; a second Ctrl-C kills at once
// (`killNodes`), so an impatient user never leaves a node running behind `npm start`'s exit.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { killNodes, type RunningNode, stopNodes } from "../../src/localnet/processes.js";

/** A node that ignores SIGTERM (as one whose shutdown hangs does), ready once it printed its line. */
async function stubborn(name: string): Promise<RunningNode> {
  const child = spawn(
    process.execPath,
    ["-e", "process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000);"],
    {
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  const exited = new Promise<number | null>((ok) => child.on("exit", (code) => ok(code)));
  await new Promise<void>((ok) => child.stdout?.once("data", () => ok()));
  return { spec: { name, role: "miner", url: "" }, child, exited, logFile: "/dev/null" } as unknown as RunningNode;
}

describe("stopping the local network's processes", () => {
  it("kills a node that ignores SIGTERM after the grace period", async () => {
    const n = await stubborn("miner1");
    await stopNodes([n], 200);
    assert.equal(n.child.signalCode, "SIGKILL");
  });

  it("a second signal kills every node still running at once, and leaves the stopped ones alone", async () => {
    const a = await stubborn("miner1");
    const b = await stubborn("blobber1");
    const stopping = stopNodes([a, b], 60_000); // the first Ctrl-C: SIGTERM, ignored by both
    a.child.kill("SIGKILL");
    await a.exited;
    killNodes([a, b]); // the second
    await stopping;
    assert.deepEqual([a.child.signalCode, b.child.signalCode], ["SIGKILL", "SIGKILL"]);
  });
});
