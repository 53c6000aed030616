/** GitHub webhook deliveries through the Worker's fetch handler: GitHub's own example payloads, signed here, to tenants connected through an App installation. */
import { sign } from "@octokit/webhooks-methods";
import definitions from "@octokit/webhooks-examples";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { setInstallationSql } from "../../src/git/operator";
import worker from "../../src/index";
import { makeCtx, ok, seedIdentity, TestClock, type Structured } from "./helpers";

export const APP_SECRET = "app-webhook-secret-0123456789";
export const KEY = "test-credentials-key-0123456789abcdef";
export const testEnv = { ...env, GITHUB_WEBHOOK_SECRET: APP_SECRET, GITHUB_CREDENTIALS_KEY: KEY };

export type Payload = Record<string, any>;

/** A copy of one of GitHub's example payloads for the event (and action). */
export function example(event: string, pick: (p: Payload) => boolean = () => true): Payload {
  const def = (definitions as unknown as { name: string; examples: Payload[] }[]).find((d) => d.name === event);
  const found = def?.examples.find(pick);
  if (!found) throw new Error(`no example for ${event}`);
  return structuredClone(found);
}

let deliveries = 0;
/** A delivery id no other test delivery has. */
export const nextDeliveryId = (prefix = "0000") => `${prefix}-${++deliveries}-${Date.now()}`;

export interface DeliverOptions {
  path?: string;
  secret?: string | null;
  delivery?: string;
  headers?: Record<string, string>;
  env?: Record<string, string>;
}

/** Posts a delivery to the worker and waits for what it does after the response. */
export async function deliver(event: string, payload: Payload | string, o: DeliverOptions = {}): Promise<{ status: number; body: Structured; delivery: string; retryAfter: string | null }> {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const delivery = o.delivery ?? nextDeliveryId();
  const headers: Record<string, string> = { "content-type": "application/json", "x-github-event": event, "x-github-delivery": delivery, ...o.headers };
  if (o.secret !== null) headers["x-hub-signature-256"] = await sign(o.secret ?? APP_SECRET, body);
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://ledger.test${o.path ?? "/webhooks/github"}`, { method: "POST", headers, body }), { ...testEnv, ...o.env }, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as Structured, delivery, retryAfter: res.headers.get("Retry-After") };
}

export const deliveryRow = (tenantId: string, delivery: string) =>
  env.DB.prepare(`SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND delivery_id = ?`).bind(tenantId, delivery).first<Structured>();

/** Runs the Worker's scheduled handler at `at` and waits for it. */
export async function runCron(at: Date): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "*/5 * * * *", scheduledTime: at.getTime() }), testEnv, ctx);
  await waitOnExecutionContext(ctx);
}

/** A tenant connected through the GitHub App installation `installationId`, with a registered repository. */
export async function appTenant(slug: string, installationId: number, repoSlug: string) {
  const id = await seedIdentity(slug, "dev");
  await env.DB.prepare(setInstallationSql(id.tenantId, String(installationId))).run();
  const ctx = makeCtx(id, new TestClock());
  await ok(ctx, "repo_register", { slug: repoSlug, default_branch: "main" });
  return { id, ctx };
}

/** The payload, about the repository `fullName` on github.com, from the installation. */
export const withRepo = (p: Payload, fullName: string, installationId: number): Payload => ({
  ...p,
  repository: { ...p.repository, full_name: fullName, html_url: `https://github.com/${fullName}`, default_branch: "main" },
  installation: { id: installationId },
});
