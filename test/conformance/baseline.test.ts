import { describe, expect, it } from "vitest";
import { judge, outcomeOf, parseExpectedFailures, renderTable, type Check, type ScenarioResult } from "./baseline";

const planned = new Map([
  ["2026-07-28", ["tools-list", "caching"]],
  ["2025-11-25", ["ping", "tools-list"]],
]);

const check = (status: Check["status"], id = "c", errorMessage?: string): Check => ({ id, status, ...(errorMessage ? { errorMessage } : {}) });

const result = (scenario: string, revision: string, outcome: ScenarioResult["outcome"]): ScenarioResult => ({
  scenario,
  revision,
  outcome,
  passed: outcome === "pass" ? 1 : 0,
  failed: outcome === "fail" ? 1 : 0,
  warnings: 0,
  seconds: 1,
});

describe("conformance scenario outcome", () => {
  it("passes only with a success and no failure or warning", () => {
    expect(outcomeOf([check("SUCCESS"), check("INFO")]).outcome).toBe("pass");
    expect(outcomeOf([check("SUCCESS"), check("FAILURE", "x", "boom")])).toMatchObject({ outcome: "fail", passed: 1, failed: 1, detail: "x: boom" });
    // The suite's own baseline counts a WARNING (a SHOULD not met) as a failure.
    expect(outcomeOf([check("SUCCESS"), check("WARNING", "w", "should")])).toMatchObject({ outcome: "fail", warnings: 1, detail: "w: should" });
  });

  it("does not count a scenario whose checks were all skipped as passing", () => {
    expect(outcomeOf([check("SKIPPED", "grant", "requires --client-id")])).toMatchObject({ outcome: "skipped", detail: "grant: requires --client-id" });
    expect(outcomeOf([]).outcome).toBe("skipped");
  });
});

describe("expected-failures file", () => {
  it("reads revision → scenario → reason", () => {
    const parsed = parseExpectedFailures(`"2026-07-28":\n  tools-list: "not yet served"\n"2025-11-25":\n  ping: "no ping"\n`, planned);
    expect(parsed.get("2026-07-28")?.get("tools-list")).toBe("not yet served");
    expect(parsed.get("2025-11-25")?.get("ping")).toBe("no ping");
    expect(parseExpectedFailures("# nothing fails\n", planned).size).toBe(0);
  });

  it("refuses an entry without a reason, a scenario or revision that is not run, and a list", () => {
    expect(() => parseExpectedFailures(`"2026-07-28":\n  tools-list:\n`, planned)).toThrow(/one-line reason/);
    expect(() => parseExpectedFailures(`"2026-07-28":\n  tools-lst: "typo"\n`, planned)).toThrow(/tools-lst is not run at 2026-07-28/);
    expect(() => parseExpectedFailures(`"2025-06-18":\n  ping: "old"\n`, planned)).toThrow(/revision 2025-06-18 is not run/);
    expect(() => parseExpectedFailures(`"2026-07-28":\n  - tools-list\n`, planned)).toThrow(/must map scenario names to reasons/);
  });
});

describe("conformance verdict", () => {
  const expected = parseExpectedFailures(`"2026-07-28":\n  tools-list: "not yet served"\n  caching: "no hints"\n`, planned);

  it("accepts failures that are listed for their revision", () => {
    const v = judge([result("tools-list", "2026-07-28", "fail"), result("caching", "2026-07-28", "skipped"), result("ping", "2025-11-25", "pass")], expected);
    expect(v.ok).toBe(true);
    expect(v.expected.map((r) => r.scenario)).toEqual(["tools-list", "caching"]);
  });

  it("fails on a failure listed only for another revision", () => {
    const v = judge([result("tools-list", "2025-11-25", "fail")], expected);
    expect(v.ok).toBe(false);
    expect(v.unexpected.map((r) => `${r.revision} ${r.scenario}`)).toEqual(["2025-11-25 tools-list"]);
  });

  it("fails when a listed scenario passes, so the list shrinks", () => {
    const v = judge([result("tools-list", "2026-07-28", "pass"), result("caching", "2026-07-28", "fail")], expected);
    expect(v.ok).toBe(false);
    expect(v.stale.map((r) => r.scenario)).toEqual(["tools-list"]);
  });

  it("treats a run the suite could not finish as a failure", () => {
    expect(judge([result("ping", "2025-11-25", "error")], expected).unexpected).toHaveLength(1);
  });

  it("renders each run with its verdict and the listed reason", () => {
    const results = [result("tools-list", "2026-07-28", "fail"), result("ping", "2025-11-25", "fail")];
    const table = renderTable(results, expected, judge(results, expected));
    expect(table).toContain("| 2026-07-28 | tools-list | fail | 0/1/0 | expected | not yet served |");
    expect(table).toContain("| 2025-11-25 | ping | fail | 0/1/0 | UNEXPECTED |");
    expect(table).toContain("0 of 2 scenario runs pass; 1 fail as listed, 1 unexpected, 0 stale.");
  });
});
