/**
 * The tool-tasks queue's consumer (src/server/tasks/background.ts) when the platform fails a run:
 * the queue retries it, and its last attempt ends the task as failed instead of leaving it working.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/core/time";
import type { Env } from "../../src/env";
import { handleToolTaskBatch, type ToolTaskMessage } from "../../src/server/tasks/background";
import { createTask, findTask } from "../../src/server/tasks/store";
import { queuedMeter } from "../../src/http/rate-limit";
import { makeCtx, seedIdentity } from "../support/helpers";

async function queuedTask(tenant: string) {
  const ctx = makeCtx(await seedIdentity(tenant, "agent"), systemClock);
  const row = await createTask(ctx, {
    tool: "execute_plan",
    driver: "tool.background",
    link: { args: {}, actorName: "agent", operator: false, canAsk: false, answers: {} },
    ttlMs: 60_000,
    pollMs: 5000,
  });
  return { ctx, row };
}

/** One message of the queue, as the platform hands it to the consumer, at its `attempts`th delivery. */
function batchOf(body: ToolTaskMessage, attempts: number) {
  const message = { id: "m1", timestamp: new Date(), body, attempts, ack: vi.fn(), retry: vi.fn() };
  return { message, batch: { queue: "agent-ledger-tool-tasks", messages: [message], ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<ToolTaskMessage> };
}

/** A runner whose tool lookup fails as the platform might (a binding down). */
const broken = {
  findTool: () => {
    throw new Error("the catalog could not be read");
  },
  meterOf: queuedMeter,
};

describe("the tool-tasks queue's consumer", () => {
  it("retries a run that throws, leaving its task working", async () => {
    const { ctx, row } = await queuedTask("tq-retry");
    const { message, batch } = batchOf({ tenantId: ctx.tenantId, actorId: ctx.actorId, taskId: row.id }, 1);
    await handleToolTaskBatch(batch, env as unknown as Env, createExecutionContext(), broken);
    expect(message.retry).toHaveBeenCalledOnce();
    expect(message.ack).not.toHaveBeenCalled();
    expect((await findTask(ctx, row.id))?.status).toBe("working");
  });

  it("ends the task as failed on the last attempt, and acknowledges the message", async () => {
    const { ctx, row } = await queuedTask("tq-give-up");
    const { message, batch } = batchOf({ tenantId: ctx.tenantId, actorId: ctx.actorId, taskId: row.id }, 4);
    await handleToolTaskBatch(batch, env as unknown as Env, createExecutionContext(), broken);
    expect(message.ack).toHaveBeenCalledOnce();
    expect(message.retry).not.toHaveBeenCalled();
    const failed = (await findTask(ctx, row.id))!;
    expect(failed.status).toBe("failed");
    expect(JSON.parse(failed.error!)).toMatchObject({ code: -32603, message: expect.stringContaining("failed 4 times") });
  });

  it("acknowledges a message whose task is no longer working without running anything", async () => {
    const { ctx, row } = await queuedTask("tq-done");
    await env.DB.prepare(`UPDATE mcp_tasks SET status = 'cancelled' WHERE id = ?`).bind(row.id).run();
    const findTool = vi.fn();
    const { message, batch } = batchOf({ tenantId: ctx.tenantId, actorId: ctx.actorId, taskId: row.id }, 1);
    await handleToolTaskBatch(batch, env as unknown as Env, createExecutionContext(), { findTool, meterOf: queuedMeter });
    expect(message.ack).toHaveBeenCalledOnce();
    expect(findTool).not.toHaveBeenCalled();
    expect((await findTask(ctx, row.id))?.status).toBe("cancelled");
  });
});
