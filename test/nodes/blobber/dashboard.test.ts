// The blobber dashboard rendered by a real headless Chromium (Debian's chromium driven by playwright-core):
// the page shows the blobber id, capacity, used space, allocations, stake, health and chain activity.
// A machine without chromium fails this test (CI installs it); it is never skipped.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type BrowserContext, chromium, type Locator } from "playwright-core";
import { type Listening, listen } from "../../../src/nodes/http.js";
import { allocationRecord } from "./fakes.js";
import { START, testBlobber } from "./helpers.js";

const CHROMIUM = "/usr/bin/chromium";

/** The text as rendered (CSS applied), as a person reads it. */
function shown(l: Locator): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the rendered text, which is the point here
  return l.innerText();
}

describe("blobber dashboard in headless Chromium", { timeout: 120_000 }, () => {
  let ctx: BrowserContext;
  let profile: string;
  let server: Listening;
  let setup: Awaited<ReturnType<typeof testBlobber>>;
  const alloc1 = "a1".repeat(32);
  const alloc2 = "a2".repeat(32);

  before(async () => {
    assert.ok(
      existsSync(CHROMIUM),
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does)`,
    );
    setup = await testBlobber();
    const { blobber, chain } = setup;
    const other = "0".repeat(64);
    const exp = Math.floor(START / 1000) + 720 * 3600;
    chain.allocations.set(alloc1, allocationRecord(alloc1, "c".repeat(64), [blobber.id, other, other, other], 1 << 30, exp));
    chain.allocations.set(alloc2, allocationRecord(alloc2, "e".repeat(64), [blobber.id, other, other, other], 1 << 29, exp));
    chain.offers = [alloc1, alloc2];
    chain.stake = 100_000_000_000n;
    await blobber.loops.register.trigger();
    await blobber.loops.health.trigger();
    await blobber.loops.sync.trigger();
    blobber.ctx.usage.add(alloc1, 3 * 1024 * 1024);
    server = await listen(blobber.app, "127.0.0.1", 0);
    profile = mkdtempSync(join(tmpdir(), "cairn-chromium-"));
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });

  after(async () => {
    await ctx?.close();
    await server?.close();
    await setup?.blobber.stop();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("shows the blobber id, capacity, used space and allocations", async () => {
    const { blobber } = setup;
    const page = await ctx.newPage();
    const res = await page.goto(`${server.url}/`);
    assert.equal(res?.status(), 200);
    assert.equal(await page.title(), `Blobber ${blobber.id.slice(0, 8)}`);
    assert.equal(await shown(page.getByTestId("blobber-id")), blobber.id);
    assert.equal(await shown(page.getByTestId("capacity")), "10.0 GiB");
    assert.equal(await shown(page.getByTestId("used-space")), "3.0 MiB");
    assert.equal(await shown(page.getByTestId("allocations-count")), "2");
    assert.equal(await shown(page.getByTestId("stake")), "10 ZCN");
    assert.match(await shown(page.getByTestId("health")), /registered/);
    const rows = page.getByTestId("allocations").locator("tbody tr");
    assert.equal(await rows.count(), 2);
    const text = await shown(page.getByTestId("allocations"));
    assert.match(text, new RegExp(alloc1.slice(0, 16)));
    assert.match(text, new RegExp(alloc2.slice(0, 16)));
    assert.match(text, /1\.0 GiB/);
    assert.match(text, /active/);
    const activity = await shown(page.getByTestId("activity"));
    assert.match(activity, /add_blobber/);
    assert.match(activity, /blobber_health_check/);
    // the page is laid out (cards side by side on a desktop-sized viewport), not raw text
    const cards = await page.locator(".card").evaluateAll((els) => els.map((e) => e.getBoundingClientRect().top));
    assert.ok(cards.length >= 6);
    assert.equal(cards[0], cards[1], "the first cards share a row");
    await page.close();
  });
});
