/**
 * visualize_plan over HTTP against `wrangler dev`, every diagram checked with Mermaid's own parser
 * (Mermaid runs in Node here on a jsdom window; it cannot run inside workerd): a realistic plan, one
 * made of hostile titles, paths and reserved words, and the largest plan the schema allows, in
 * each of the three diagram types, passed in and saved.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { JSDOM } from "jsdom";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { BIG, HOSTILE, PLAN } from "../fixtures/plans";

type S = Record<string, any>;
type Mermaid = { parse(text: string): Promise<unknown> };

const DIAGRAMS = ["dependencies", "architecture", "gantt"] as const;

describe("visualize_plan over HTTP (wrangler dev), parsed by Mermaid", () => {
  let client: Client;
  let mermaid: Mermaid;
  const run = Date.now().toString(36);

  const draw = async (args: Record<string, unknown>): Promise<S> => {
    const r = await client.callTool({ name: "visualize_plan", arguments: args });
    expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
    return { ...(r.structuredContent as S), text: (r.content as Array<{ text: string }>)[0]!.text };
  };

  beforeAll(async () => {
    // Mermaid sanitizes labels with DOMPurify, which needs a window: jsdom's, installed before Mermaid loads.
    const { window } = new JSDOM("");
    Object.assign(globalThis, { window, document: window.document });
    mermaid = (await import("mermaid")).default as Mermaid;
    const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=plans`), {
      requestInit: { headers: { Authorization: `Bearer ${inject("keyB")}` } },
    });
    client = new Client({ name: "e2e-plans-visualize", version: "1.0.0" });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("the parser check can fail: Mermaid rejects a label with an unescaped quote, the very thing the escaping prevents", async () => {
    const hostile = await draw({ plan: JSON.stringify(HOSTILE) });
    await expect(mermaid.parse(hostile.mermaid)).resolves.toBeTruthy();
    const broken = (hostile.mermaid as string).replaceAll("#34;", '"');
    expect(broken).not.toBe(hostile.mermaid);
    await expect(mermaid.parse(broken)).rejects.toThrow(/Parse error/);
    await expect(mermaid.parse("flowchart TD\n    s1 --> \n    end end")).rejects.toThrow();
  });

  const cases = [
    ["a realistic plan", () => PLAN],
    ["hostile titles, paths and reserved words", () => JSON.stringify(HOSTILE)],
    ["a 200-step plan", () => BIG],
  ] as const;
  for (const [name, plan] of cases) {
    it(`${name}: every diagram type parses`, async () => {
      for (const diagram_type of DIAGRAMS) {
        const r = await draw({ plan: plan(), diagram_type });
        expect(r.diagram_type).toBe(diagram_type);
        expect(r.text).toContain(`\`\`\`mermaid\n${r.mermaid}\n\`\`\``);
        const parsed = (await mermaid.parse(r.mermaid)) as { diagramType: string };
        expect(parsed.diagramType, `${name} ${diagram_type}`).toBe(diagram_type === "gantt" ? "gantt" : "flowchart-v2");
      }
    });
  }

  it("a saved plan by plan_id draws the same text as the plan passed in, and parses", async () => {
    const id = `viz-${run}`;
    const saved = await client.callTool({ name: "save_plan", arguments: { plan: JSON.stringify({ ...HOSTILE, id }) } });
    expect(saved.isError, JSON.stringify(saved.structuredContent)).toBeFalsy();
    for (const diagram_type of DIAGRAMS) {
      const stored = await draw({ plan_id: id, diagram_type });
      expect(stored).toMatchObject({ plan_id: id, plan_version: 1 });
      expect(stored.mermaid).toBe((await draw({ plan: JSON.stringify(HOSTILE), diagram_type })).mermaid);
      await expect(mermaid.parse(stored.mermaid)).resolves.toBeTruthy();
    }
    const other = await client.callTool({ name: "visualize_plan", arguments: { plan_id: `nope-${run}` } });
    expect(other.isError).toBe(true);
    expect((other.structuredContent as S).error).toMatchObject({ code: "not_found" });
  });
});
