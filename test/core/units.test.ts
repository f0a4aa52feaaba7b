import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { autoFormatBalance, formatBalance, parseZcn, sasToZcnString, zcnNumberToSas } from "../../src/core/amount.js";
import { formatDuration, HOUR, MINUTE, parseDuration, SECOND } from "../../src/core/duration.js";
import { CodedError } from "../../src/core/errors.js";

describe("token amounts", () => {
  it("auto-formats like the reference Balance.AutoFormat", () => {
    assert.equal(autoFormatBalance(10_000_000_000n), "1.000 ZCN");
    assert.equal(autoFormatBalance(8_000_000_000n), "800.000 mZCN");
    assert.equal(autoFormatBalance(12n), "12 SAS");
    assert.equal(autoFormatBalance(0n), "0 SAS");
    assert.equal(autoFormatBalance(50_000n), "5.000 uZCN");
    assert.equal(autoFormatBalance(123_456_789_012n), "12.346 ZCN");
    assert.equal(autoFormatBalance(9_999n), "9999 SAS");
  });
  it("rounds exact ties to even as Go's %.3f does", () => {
    assert.equal(formatBalance(10_625_000_000n, "ZCN"), "1.062 ZCN");
    assert.equal(formatBalance(11_875_000_000n, "ZCN"), "1.188 ZCN");
  });
  it("parses flags exactly into SAS and round-trips", () => {
    for (const [text, sas] of [
      ["1", 10_000_000_000n],
      ["0.5", 5_000_000_000n],
      [".5", 5_000_000_000n],
      ["0.0000000001", 1n],
      ["1e-10", 1n],
      ["2.5e3", 25_000_000_000_000n],
      ["100", 1_000_000_000_000n],
    ] as const) {
      assert.equal(parseZcn(text), sas, text);
      assert.equal(parseZcn(sasToZcnString(sas)), sas);
    }
    for (let i = 0n; i < 200n; i++) {
      const sas = i * 7_919_113n + i ** 5n;
      assert.equal(parseZcn(sasToZcnString(sas)), sas);
    }
  });
  it("rejects negatives, NaN, garbage, 11 decimals and overflow with a clear error", () => {
    const cases: [string, RegExp][] = [
      ["-1", /must not be negative/],
      ["NaN", /expected a decimal number/],
      ["Infinity", /expected a decimal number/],
      ["", /found nothing/],
      ["1.2.3", /expected a decimal number/],
      ["0x10", /expected a decimal number/],
      ["0.00000000001", /at most 10 decimal places/],
      ["1000000000000", /exceeds the maximum/],
    ];
    for (const [text, re] of cases) {
      assert.throws(
        () => parseZcn(text, "--tokens"),
        (e: unknown) =>
          e instanceof CodedError && e.code === "invalid_amount" && re.test(e.message) && e.message.includes("--tokens"),
        text,
      );
    }
  });
  it("converts config token numbers without float drift", () => {
    assert.equal(zcnNumberToSas(0.01), 100_000_000n);
    assert.equal(zcnNumberToSas(0.1), 1_000_000_000n);
    assert.equal(zcnNumberToSas(100.0), 1_000_000_000_000n);
  });
});

describe("durations", () => {
  it("parses Go duration strings", () => {
    assert.equal(parseDuration("744h"), 744n * HOUR);
    assert.equal(parseDuration("1m"), MINUTE);
    assert.equal(parseDuration("2h0m0s"), 2n * HOUR);
    assert.equal(parseDuration("1h30m"), HOUR + 30n * MINUTE);
    assert.equal(parseDuration("1.5s"), 1_500_000_000n);
    assert.equal(parseDuration("300ms"), 300_000_000n);
    assert.equal(parseDuration("1µs"), 1000n);
    assert.equal(parseDuration("1us"), 1000n);
    assert.equal(parseDuration("0"), 0n);
    assert.equal(parseDuration("-1m"), -MINUTE);
  });
  it("prints like Go's Duration.String", () => {
    assert.equal(formatDuration(2n * HOUR), "2h0m0s");
    assert.equal(formatDuration(744n * HOUR), "744h0m0s");
    assert.equal(formatDuration(MINUTE), "1m0s");
    assert.equal(formatDuration(90n * SECOND), "1m30s");
    assert.equal(formatDuration(1_500_000_000n), "1.5s");
    assert.equal(formatDuration(300_000_000n), "300ms");
    assert.equal(formatDuration(1_500n), "1.5µs");
    assert.equal(formatDuration(12n), "12ns");
    assert.equal(formatDuration(0n), "0s");
    assert.equal(formatDuration(-MINUTE), "-1m0s");
  });
  it("round-trips", () => {
    for (const ns of [1n, 999n, 1_000_001n, 59n * SECOND, 3601n * SECOND + 5n, 744n * HOUR, 123_456_789_012_345n]) {
      assert.equal(parseDuration(formatDuration(ns)), ns);
    }
  });
  it("rejects bad strings naming the field", () => {
    for (const bad of ["", "10", "h", "1x", "1h-2m", "abc", "1.h.5"]) {
      assert.throws(
        () => parseDuration(bad, "--lock"),
        (e: unknown) => e instanceof CodedError && e.code === "invalid_duration" && e.message.includes("--lock"),
        bad,
      );
    }
  });
});
