/**
 * Mcp-Param-* headers (SEP-2243): which parameters a listing marks, how a header's value is decoded
 * (plain visible ASCII, or strict Base64 of UTF-8 between =?base64? and ?=), and when a call's
 * headers disagree with its body.
 */
import { describe, expect, it } from "vitest";
import { decodeParamHeader, paramHeaderMismatch, paramHeadersOf, withParamHeaders } from "../../src/core/param-headers";

const b64 = (s: string) => `=?base64?${btoa(String.fromCharCode(...new TextEncoder().encode(s)))}?=`;

describe("the listing", () => {
  const schema = { type: "object", properties: { project_id: { type: "string" }, repo: { type: "string" }, title: { type: "string" }, nested: { type: "object" } } };

  it("marks a write's project and repository, and nothing else", () => {
    const marked = withParamHeaders(schema, true);
    expect(paramHeadersOf(marked as { properties: Record<string, unknown> })).toEqual([
      ["project_id", "Project"],
      ["repo", "Repository"],
    ]);
    expect(schema.properties.project_id).toEqual({ type: "string" });
  });

  it("leaves a read's schema, and a routed name that is not a plain string, unmarked", () => {
    expect(withParamHeaders(schema, false)).toBe(schema);
    const array = { type: "object", properties: { repo: { type: "array", items: { type: "string" } } } };
    expect(withParamHeaders(array, true)).toBe(array);
  });
});

describe("decoding a header", () => {
  it.each([
    ["a plain value", "ACME", "ACME"],
    ["a plain value with inner spaces", "a b", "a b"],
    ["Base64 of ASCII", b64("Hello"), "Hello"],
    ["Base64 of non-ASCII UTF-8", b64("Zürich ✓"), "Zürich ✓"],
    ["a Base64-looking value without the wrapper, literally", "SGVsbG8=", "SGVsbG8="],
    ["a value missing the closing ?=, literally", "=?base64?SGVsbG8=", "=?base64?SGVsbG8="],
  ])("reads %s", (_label, raw, value) => {
    expect(decodeParamHeader(raw)).toBe(value);
  });

  it.each([
    ["Base64 with bad padding", "=?base64?SGVsbG8?="],
    ["Base64 with characters outside the alphabet", "=?base64?SGVs!!!bG8=?="],
    ["Base64 of bytes that are not UTF-8", `=?base64?${btoa("\u00ff\u00fe")}?=`],
    ["a plain value with a control character", "a\u0001b"],
    ["a plain value with non-ASCII", "Zürich"],
  ])("refuses %s", (_label, raw) => {
    expect(decodeParamHeader(raw)).toBeNull();
  });
});

describe("matching the body", () => {
  const bound: Array<[string, string]> = [["project_id", "Project"]];
  const headers = (h: Record<string, string>) => (name: string) => h[name] ?? null;

  it("accepts a matching header, plain or Base64, and no header for an absent or null value", () => {
    expect(paramHeaderMismatch(bound, { project_id: "ACME" }, headers({ "Mcp-Param-Project": "ACME" }))).toBeNull();
    expect(paramHeaderMismatch(bound, { project_id: "Zürich" }, headers({ "Mcp-Param-Project": b64("Zürich") }))).toBeNull();
    expect(paramHeaderMismatch(bound, {}, headers({}))).toBeNull();
    expect(paramHeaderMismatch(bound, { project_id: null }, headers({}))).toBeNull();
  });

  it("encodes numbers in decimal and booleans in lower case before comparing", () => {
    expect(paramHeaderMismatch([["n", "N"]], { n: 42 }, headers({ "Mcp-Param-N": "42" }))).toBeNull();
    expect(paramHeaderMismatch([["b", "B"]], { b: false }, headers({ "Mcp-Param-B": "false" }))).toBeNull();
    expect(paramHeaderMismatch([["b", "B"]], { b: false }, headers({ "Mcp-Param-B": "False" }))).toMatch(/does not match/);
  });

  it.each([
    ["a missing header for a value the body sets", { project_id: "ACME" }, {}, /is missing/],
    ["a header whose value differs", { project_id: "ACME" }, { "Mcp-Param-Project": "OTHER" }, /does not match/],
    ["a header for a value the body leaves out", {}, { "Mcp-Param-Project": "ACME" }, /body has no project_id/],
    ["a malformed header", { project_id: "ACME" }, { "Mcp-Param-Project": "=?base64?QUNNRQ?=" }, /malformed/],
  ])("names %s", (_label, args, h, reason) => {
    expect(paramHeaderMismatch(bound, args, headers(h))).toMatch(reason);
  });
});
