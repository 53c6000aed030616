/**
 * Confirmations for 2025-era clients (the v1 SDK client, sessions kept in a Durable Object): a
 * client that declared elicitation is asked with elicitation/create on the call's stream and its
 * answer decides; a client that cannot be asked is refused unless the call carries confirm: true.
 * Never silently done.
 */
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { live, othersAttachment } from "../support/confirm-rig";
import { connectClient, makeCtx, workerFetch } from "../support/helpers";

type Reply = "yes" | "no" | "cancel";

/** A 2025 client that declares form elicitation (or not) and answers every question with `reply`, recording them. */
async function legacyClient(key: string, reply?: Reply, path = "/mcp?toolsets=collab") {
  const asked: string[] = [];
  const { client, transport } = await connectClient(key, path, reply ? { elicitation: {} } : {}, (c) => {
    if (!reply) return;
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      if (reply === "cancel") return { action: "cancel" };
      return { action: "accept", content: { confirm: reply === "yes" } };
    });
  });
  return { client, transport, asked };
}

const errorOf = (r: Awaited<ReturnType<Awaited<ReturnType<typeof legacyClient>>["client"]["callTool"]>>) =>
  (r.structuredContent as { error: { code: string; message: string; hint: string; retryable: boolean } }).error;

describe("confirmations on 2025 sessions", () => {
  it("asks a client that declared elicitation, over the call's stream, and removes on a yes", async () => {
    const { a, b, attachmentId } = await othersAttachment("legacy-yes");
    const { client, transport, asked } = await legacyClient(b.key, "yes");
    expect(transport.sessionId).toBeTruthy();
    const r = await client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ ok: true, removed: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("another actor added");
    expect(await live(makeCtx(a), attachmentId)).toBe(false);
    await client.close();
  });

  it("changes nothing on a no or a cancel, and says so", async () => {
    const { a, b, attachmentId } = await othersAttachment("legacy-no");
    for (const reply of ["no", "cancel"] as const) {
      const { client, asked } = await legacyClient(b.key, reply);
      const r = await client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId } });
      expect(r.isError).toBe(true);
      expect(errorOf(r)).toMatchObject({ code: "confirmation_declined", retryable: false });
      expect(errorOf(r).hint).toContain("Nothing was changed");
      expect(asked).toHaveLength(1);
      await client.close();
    }
    expect(await live(makeCtx(a), attachmentId)).toBe(true);
  });

  it("asks a client that can be asked even when the call says confirm: true", async () => {
    const { a, b, attachmentId } = await othersAttachment("legacy-ask-anyway");
    const { client, asked } = await legacyClient(b.key, "no");
    const r = await client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId, confirm: true } });
    expect(errorOf(r).code).toBe("confirmation_declined");
    expect(asked).toHaveLength(1);
    expect(await live(makeCtx(a), attachmentId)).toBe(true);
    await client.close();
  });

  it("refuses a client without elicitation, with a hint naming confirm: true, and does it with the parameter", async () => {
    const { a, b, attachmentId } = await othersAttachment("legacy-mute");
    const { client } = await legacyClient(b.key);
    const refused = await client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId } });
    expect(refused.isError).toBe(true);
    expect(errorOf(refused)).toMatchObject({ code: "confirmation_required", retryable: false });
    expect(errorOf(refused).hint).toContain("confirm: true");
    expect(await live(makeCtx(a), attachmentId)).toBe(true);
    const done = await client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId, confirm: true } });
    expect(done.isError).toBeFalsy();
    expect(await live(makeCtx(a), attachmentId)).toBe(false);
    await client.close();
  });

  it("lists confirm on the tools that ask, and only there", async () => {
    const { b } = await othersAttachment("legacy-list");
    const { client } = await legacyClient(b.key);
    const { tools } = await client.listTools();
    const props = (name: string) => Object.keys((tools.find((t) => t.name === name)!.inputSchema.properties ?? {}) as object);
    expect(props("attach_remove")).toContain("confirm");
    expect(props("attach_add")).not.toContain("confirm");
    await client.close();
  });

  it("refuses a step of a compact batch that needs a yes unless the step carries confirm: true", async () => {
    const { a, b, attachmentId } = await othersAttachment("legacy-compact");
    const { client } = await legacyClient(b.key, "yes", "/mcp?mode=compact&toolsets=collab");
    const step = (params: Record<string, unknown>) => ({ name: "execute", arguments: { operations: [{ op: "attach_remove", params }] } });
    const refused = await client.callTool(step({ attachment_id: attachmentId }));
    expect(JSON.stringify(refused.structuredContent)).toContain("confirmation_required");
    expect(await live(makeCtx(a), attachmentId)).toBe(true);
    const done = await client.callTool(step({ attachment_id: attachmentId, confirm: true }));
    expect(done.isError).toBeFalsy();
    expect(await live(makeCtx(a), attachmentId)).toBe(false);
    await client.close();
  });

  it("refuses an answer to a question nobody asked", async () => {
    const { b } = await othersAttachment("legacy-stray");
    const { client, transport } = await legacyClient(b.key, "yes");
    const res = await workerFetch("http://ledger.test/mcp?toolsets=collab", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${b.key}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "Mcp-Session-Id": transport.sessionId!,
        "MCP-Protocol-Version": transport.protocolVersion ?? "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: "question-unknown", result: { action: "accept", content: { confirm: true } } }),
    });
    expect(res.status).toBe(400);
    await client.close();
  });
});
