// Child process for the lmdb crash test (not a test file itself): commits transactions in a loop and
// acknowledges each one on stdout only after `transaction()` has returned. The parent kills it with SIGKILL.
// Each transaction i writes `n/<i>` = i, a 3 KiB filler (so commits span several pages) and `count` = i + 1,
// so after a crash `count` must equal the number of `n/` entries (atomicity) and cover every acknowledged i.
import { writeSync } from "node:fs";
import { LmdbKV } from "../../src/nodes/io/kv-lmdb.js";

const dir = process.argv[2];
if (dir === undefined) throw new Error("usage: kv-crash-child <dir>");
const kv = new LmdbKV(dir, { sync: true });
let i = kv.getJson<number>("count") ?? 0;
const filler = new Uint8Array(3072);

function batch(): void {
  // commit a few transactions per event-loop turn, then yield, so the process stays killable at any point
  for (let k = 0; k < 20; k++, i++) {
    filler.fill(i & 0xff);
    kv.transaction((tx) => {
      tx.putJson(`n/${String(i).padStart(8, "0")}`, i);
      tx.put(`fill/${i % 50}`, filler);
      tx.putJson("count", i + 1);
    });
    writeSync(1, `${i}\n`); // synchronous: an ack is never printed before its commit returned
  }
  setImmediate(batch);
}
writeSync(1, "ready\n");
batch();
