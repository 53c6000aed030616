/**
 * The hostile-content cases of `npm run bench:fuzz`, at small sizes: each one is a call the server
 * accepts and handles (not an input-bound refusal), so the bench measures the content path it
 * names; and the generators build what they say (a real PDF sharing one stream, distinct keys).
 */
import { describe, expect, it } from "vitest";
import { findSecrets } from "../../src/review/scanners/secrets";
import { connectClient, seedIdentity } from "../support/helpers";
import { DEFAULT_SIZES, hostileCases, keyShapedStrings, sharedStreamPdf, type HostileCall } from "./hostile";

const SMALL = { markdownBrackets: 2048, importLines: 200, pdfPages: 3, pdfStreamBytes: 20_000, keys: 50, diffFiles: 3, diffLines: 10, yamlDepth: 50, grepLines: 20 };

describe("hostile content cases", () => {
  it("builds distinct key-shaped strings of 21 bytes each, found as secrets", async () => {
    const text = keyShapedStrings(DEFAULT_SIZES.keys);
    expect(text.length).toBe(DEFAULT_SIZES.keys * 21);
    const keys = text.trim().split(" ");
    expect(new Set(keys).size).toBe(keys.length);
    const found = findSecrets(keyShapedStrings(5));
    expect(found.length).toBe(5);
  });

  it("builds a PDF whose pages all point at one Flate stream", async () => {
    const pdf = new TextDecoder("latin1").decode(await sharedStreamPdf(4, 100_000));
    expect(pdf.startsWith("%PDF-1.4")).toBe(true);
    expect(pdf.match(/\/Contents 4 0 R/g)).toHaveLength(4);
    expect(pdf.match(/\/FlateDecode/g)).toHaveLength(1);
    // A thousandfold: the file stays small whatever the stream inflates to.
    expect(pdf.length).toBeLessThan(5_000);
  });

  it("every case, small, is accepted and handled by the tool it names", { timeout: 120_000 }, async () => {
    const me = await seedIdentity("hostile-cases", "agent");
    const clients = new Map<string, Awaited<ReturnType<typeof connectClient>>["client"]>();
    const run = async (c: HostileCall) => {
      let client = clients.get(c.path);
      if (!client) {
        client = (await connectClient(me.key, c.path)).client;
        clients.set(c.path, client);
      }
      return client.callTool({ name: c.name, arguments: c.args });
    };
    const cases = await hostileCases(SMALL, "small");
    expect(new Set(cases.map((c) => c.tool)).size).toBeGreaterThanOrEqual(7);
    for (const c of cases) {
      for (const s of c.setup ?? []) expect((await run(s)).isError, `${c.tool} setup`).toBeFalsy();
      const r = await run(c);
      const text = JSON.stringify(r.structuredContent);
      // Refused for its shape would mean the bench measures the bounds, not the content path.
      expect(text, `${c.tool}: ${c.label}`).not.toContain("invalid_input");
      expect(text, `${c.tool}: ${c.label}`).not.toContain("internal_error");
      if (c.tool === "check_invariants" && c.label.startsWith("diff")) expect(text).toContain('"id":"SEC001"');
    }
    for (const client of clients.values()) await client.close();
  });
});
