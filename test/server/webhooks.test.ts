/** GitHub webhooks through the Worker's fetch handler, with GitHub's own example payloads signed here. */
import { sign } from "@octokit/webhooks-methods";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { setRateLimitSql } from "../../src/auth/rate-limits";
import { sha256Hex } from "../../src/db/ids";
import { replaySql, setInstallationSql, setWebhookSecretSql } from "../../src/git/operator";
import { runMaintenance } from "../../src/cron/maintenance";
import { MAX_KEPT_DELIVERIES } from "../../src/server/webhook-backlog";
import { KEEP_PAYLOAD_BYTES, MAX_ATTEMPTS } from "../../src/server/webhooks";
import { MAX_WEBHOOK_BODY_BYTES } from "../../src/http/body";
import worker from "../../src/index";
import { count, makeCtx, ok, seedIdentity, type Structured, type TestIdentity } from "../support/helpers";
import { APP_SECRET, appTenant, deliver, deliveryRow, example, KEY, nextDeliveryId, type Payload, runCron, testEnv, withRepo } from "../support/webhook-rig";

const TENANT_SECRET = "tenant-webhook-secret-abcdef0123";

describe("signatures and bad input", () => {
  let a: TestIdentity;
  beforeAll(async () => {
    a = (await appTenant("hooks-sig", 9001, "sig/repo")).id;
  });
  // Each ping a different body: an identical body under a new delivery id is a duplicate (tested below).
  let hook = 0;
  const ping = () => ({ ...example("ping"), hook_id: ++hook, installation: { id: 9001 } });

  it("accepts a delivery signed with the App secret and answers ping", async () => {
    const r = await deliver("ping", ping());
    expect(r.status).toBe(202);
    expect(await deliveryRow(a.tenantId, r.delivery)).toMatchObject({ event: "ping", status: "processed", attempts: 1 });
  });

  it.each([
    ["missing", null],
    ["wrong secret", "not-the-app-secret-at-all"],
  ])("refuses a %s signature with 401 and stores nothing", async (_label, secret) => {
    const before = await count(`SELECT COUNT(*) AS n FROM webhook_deliveries`);
    const r = await deliver("ping", ping(), { secret });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("bad_signature");
    expect(await count(`SELECT COUNT(*) AS n FROM webhook_deliveries`)).toBe(before);
  });

  it("refuses a valid signature of another body", async () => {
    const body = JSON.stringify(ping());
    const r = await deliver("ping", body.replace("}", ', "x": 1}'), { headers: { "x-hub-signature-256": await sign(APP_SECRET, body) }, secret: null });
    expect(r.status).toBe(401);
  });

  it("refuses everything on the App URL when no App secret is configured", async () => {
    const body = JSON.stringify(ping());
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("http://ledger.test/webhooks/github", {
        method: "POST",
        body,
        headers: { "x-github-event": "ping", "x-github-delivery": "no-secret-1", "x-hub-signature-256": await sign("anything-at-all", body) },
      }),
      { ...testEnv, GITHUB_WEBHOOK_SECRET: undefined },
      ctx,
    );
    expect(res.status).toBe(401);
  });

  it("acknowledges a redelivery without processing it again", async () => {
    const first = await deliver("ping", ping());
    const again = await deliver("ping", ping(), { delivery: first.delivery });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ ok: true, duplicate: true });
    expect(await deliveryRow(a.tenantId, first.delivery)).toMatchObject({ attempts: 1 });
  });

  it("rejects a body over GitHub's 25 MB cap (by Content-Length, and by its real size while streaming) before checking anything", async () => {
    expect(MAX_WEBHOOK_BODY_BYTES).toBe(25 * 1024 * 1024);
    // The declared size alone refuses it: nothing of the body is read.
    let pulled = 0;
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    const counted = (total: number) =>
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled >= total) return controller.close();
          pulled += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
    const post = async (body: ReadableStream<Uint8Array>, extra: Record<string, string> = {}) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request("http://ledger.test/webhooks/github", {
          method: "POST",
          body,
          headers: { "x-github-event": "ping", "x-github-delivery": nextDeliveryId("big"), ...extra },
        }),
        testEnv,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return res;
    };
    const declared = await post(counted(2 * MAX_WEBHOOK_BODY_BYTES), { "content-length": String(MAX_WEBHOOK_BODY_BYTES + 1) });
    expect(declared.status).toBe(413);
    expect(pulled).toBeLessThanOrEqual(chunk.byteLength);
    const body = (await declared.json()) as Structured;
    expect(body).toMatchObject({ ok: false, error: { code: "payload_too_large", retryable: false, hint: expect.stringMatching(/\w/) } });
    expect(JSON.stringify(body).length).toBeLessThan(500);

    // Without a Content-Length (a chunked body) the cap applies while reading, and the rest is never pulled.
    pulled = 0;
    const chunked = await post(counted(2 * MAX_WEBHOOK_BODY_BYTES));
    expect(chunked.status).toBe(413);
    expect(pulled).toBeGreaterThan(MAX_WEBHOOK_BODY_BYTES);
    expect(pulled).toBeLessThan(MAX_WEBHOOK_BODY_BYTES + 4 * chunk.byteLength);
  });

  it("accepts a signed delivery of several megabytes (GitHub sends up to 25 MB)", async () => {
    const big = { ...ping(), hook: { config: { padding: "p".repeat(6 * 1024 * 1024) } } };
    const r = await deliver("ping", big);
    expect(r.status).toBe(202);
    // Too large to keep for a retry, but processed once from memory.
    expect(await deliveryRow(a.tenantId, r.delivery)).toMatchObject({ status: "processed", payload: "" });
  });

  it("rejects malformed JSON with 400 after the signature check, and stores nothing", async () => {
    const before = await count(`SELECT COUNT(*) AS n FROM webhook_deliveries`);
    const r = await deliver("ping", "{not json");
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("malformed_json");
    expect((await deliver("ping", "{not json", { secret: null })).status).toBe(401);
    expect(await count(`SELECT COUNT(*) AS n FROM webhook_deliveries`)).toBe(before);
  });

  it("records a delivery for an installation no tenant claims as ignored, touching no tenant", async () => {
    const r = await deliver("ping", { ...ping(), installation: { id: 424242 } });
    expect(r.status).toBe(202);
    expect(await deliveryRow("", r.delivery)).toMatchObject({ status: "ignored" });
  });

  it("acknowledges and records an event it does not handle as ignored", async () => {
    const r = await deliver("star", { action: "created", installation: { id: 9001 }, repository: { full_name: "sig/repo" } });
    expect(r.status).toBe(202);
    expect(await deliveryRow(a.tenantId, r.delivery)).toMatchObject({ status: "ignored", event: "star", action: "created", repository: "sig/repo" });
  });
});

describe("per-tenant repository webhooks", () => {
  let a: TestIdentity;
  beforeAll(async () => {
    a = await seedIdentity("hooks-own", "dev");
    await env.DB.prepare(await setWebhookSecretSql(a.tenantId, TENANT_SECRET, KEY)).run();
    await seedIdentity("hooks-nosecret", "dev");
  });

  it("verifies against the tenant's own secret", async () => {
    const r = await deliver("ping", example("ping"), { path: "/webhooks/github/hooks-own", secret: TENANT_SECRET });
    expect(r.status).toBe(202);
    expect(await deliveryRow(a.tenantId, r.delivery)).toMatchObject({ status: "processed" });
  });

  it("processes a tenant-URL delivery for that tenant only, whatever installation the payload names", async () => {
    const other = await appTenant("hooks-own-other", 3001, "own/repo");
    await ok(makeCtx(a), "repo_register", { slug: "own/repo" });
    const p = withRepo(
      example("push", (e) => e.commits.length > 0),
      "own/repo",
      3001,
    );
    const r = await deliver("push", p, { path: "/webhooks/github/hooks-own", secret: TENANT_SECRET });
    expect(await deliveryRow(a.tenantId, r.delivery)).toMatchObject({ status: "processed" });
    expect(await count(`SELECT COUNT(*) AS n FROM git_commits WHERE tenant_id = ?`, a.tenantId)).toBe(1);
    expect(await count(`SELECT COUNT(*) AS n FROM git_commits WHERE tenant_id = ?`, other.id.tenantId)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE tenant_id = ?`, other.id.tenantId)).toBe(0);
  });

  it("stores the secret only encrypted, and refuses a weak one", async () => {
    const stored = await env.DB.prepare(`SELECT secret FROM github_webhook_secrets WHERE tenant_id = ?`).bind(a.tenantId).first<{ secret: string }>();
    expect(stored!.secret).toMatch(/^v1:/);
    expect(stored!.secret).not.toContain(TENANT_SECRET);
    await expect(setWebhookSecretSql(a.tenantId, "short", KEY)).rejects.toThrow(/16–256/);
  });

  it("refuses the App secret, another tenant's URL, and unknown tenants alike", async () => {
    expect((await deliver("ping", example("ping"), { path: "/webhooks/github/hooks-own", secret: APP_SECRET })).status).toBe(401);
    expect((await deliver("ping", example("ping"), { path: "/webhooks/github/hooks-nosecret", secret: TENANT_SECRET })).status).toBe(401);
    expect((await deliver("ping", example("ping"), { path: "/webhooks/github/no-such-tenant", secret: TENANT_SECRET })).status).toBe(401);
  });
});

describe("the same body under a new delivery id", () => {
  let a: Awaited<ReturnType<typeof appTenant>>;
  beforeAll(async () => {
    a = await appTenant("hooks-hash", 9201, "hash/repo");
  });
  const push = (sha: string) => {
    const p = withRepo(
      example("push", (e) => e.commits.length > 0),
      "hash/repo",
      9201,
    );
    p.ref = "refs/heads/main";
    p.commits = [{ ...p.commits[0], id: sha, timestamp: "2026-06-02T10:00:00Z", message: "once", added: [], modified: ["src/once.ts"], removed: [] }];
    return p;
  };

  it("is acknowledged with 200, recorded as a duplicate of the first, and not processed again", async () => {
    const body = JSON.stringify(push("d".repeat(40)));
    const first = await deliver("push", body);
    expect(first.status).toBe(202);
    const again = await deliver("push", body);
    expect(again.delivery).not.toBe(first.delivery);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ok: true, delivery: again.delivery, duplicate: true, duplicate_of: first.delivery });
    expect(await deliveryRow(a.id.tenantId, first.delivery)).toMatchObject({ status: "processed", attempts: 1, duplicate_of: "" });
    const dup = await deliveryRow(a.id.tenantId, again.delivery);
    // Recognised by the SHA-256 of the raw body.
    expect(dup).toMatchObject({ status: "duplicate", attempts: 0, payload: "", duplicate_of: first.delivery, content_hash: await sha256Hex(body) });
    expect((await deliveryRow(a.id.tenantId, first.delivery))!.content_hash).toBe(await sha256Hex(body));
    // The retry job never picks a duplicate up, and the operator's replay has no payload to replay.
    await runCron(new Date());
    expect(await deliveryRow(a.id.tenantId, again.delivery)).toMatchObject({ status: "duplicate", attempts: 0 });
    expect((await env.DB.prepare(replaySql(again.delivery, a.id.tenantId)).all()).results).toHaveLength(0);
    // Its own redelivery (the same id again) is still just a duplicate.
    expect((await deliver("push", body, { delivery: again.delivery })).body).toEqual({ ok: true, delivery: again.delivery, duplicate: true });
    // One byte different is another delivery.
    expect((await deliver("push", body.replace('"once"', '"twice"'))).status).toBe(202);
  });

  it("lets only one of two identical bodies racing in be processed", async () => {
    const body = JSON.stringify(push("e".repeat(40)));
    const results = await Promise.all([deliver("push", body), deliver("push", body), deliver("push", body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 202]);
    const rows = (
      await env.DB.prepare(`SELECT status FROM webhook_deliveries WHERE tenant_id = ? AND delivery_id IN (?, ?, ?)`)
        .bind(a.id.tenantId, ...results.map((r) => r.delivery))
        .all<{ status: string }>()
    ).results
      .map((r) => r.status)
      .sort();
    expect(rows).toEqual(["duplicate", "duplicate", "processed"]);
  });

  it("is judged per tenant: the same body to two tenants' URLs is each tenant's own delivery", async () => {
    const slugs = ["hooks-hash-x", "hooks-hash-y"];
    for (const slug of slugs) {
      const id = await seedIdentity(slug, "dev");
      await env.DB.prepare(await setWebhookSecretSql(id.tenantId, TENANT_SECRET, KEY)).run();
    }
    const body = JSON.stringify({ ...example("ping"), hook_id: 424_242 });
    for (const slug of slugs) expect((await deliver("ping", body, { path: `/webhooks/github/${slug}`, secret: TENANT_SECRET })).status).toBe(202);
    expect((await deliver("ping", body, { path: `/webhooks/github/${slugs[0]}`, secret: TENANT_SECRET })).status).toBe(200);
  });
});

describe("rate limits", () => {
  const tight = { RATE_LIMIT_TENANT_PER_MIN: "2" };
  let hook = 0;
  const ping = (installationId: number) => ({ ...example("ping"), hook_id: ++hook, installation: { id: installationId } });

  const kept = (tenantId: string) => count(`SELECT COUNT(*) AS n FROM webhook_backlog WHERE tenant_id = ?`, tenantId);
  const recordedFor = (tenantId: string) => count(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE tenant_id = ?`, tenantId);

  it("limits signed deliveries per App installation: over the limit a delivery is kept (202 queued), one it cannot keep is refused (429, Retry-After, rate_limited); other installations go on", async () => {
    const a = await appTenant("hooks-rl-a", 9101, "rl/a");
    await appTenant("hooks-rl-b", 9102, "rl/b");
    // Unsigned or mis-signed junk is refused before it is counted.
    for (let i = 0; i < 3; i++) expect((await deliver("ping", ping(9101), { secret: "not-the-app-secret-at-all", env: tight })).status).toBe(401);
    expect((await deliver("ping", ping(9101), { env: tight })).status).toBe(202);
    expect((await deliver("ping", ping(9101), { env: tight })).status).toBe(202);
    const before = await recordedFor(a.id.tenantId);
    const over = await deliver("ping", ping(9101), { env: tight });
    expect(over.status).toBe(202);
    expect(over.body).toEqual({ ok: true, delivery: over.delivery, queued: true });
    expect(await recordedFor(a.id.tenantId)).toBe(before);
    expect(await kept(a.id.tenantId)).toBe(1);
    // A payload too large for a D1 row cannot be kept: refused as before, with the way to get it back.
    const large = await deliver("ping", { ...ping(9101), padding: "p".repeat(KEEP_PAYLOAD_BYTES) }, { env: tight });
    expect(large.status).toBe(429);
    expect(Number(large.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(large.body).toMatchObject({
      ok: false,
      error: { code: "rate_limited", retryable: true, message: expect.stringContaining("installation sent more than 2 webhook deliveries"), hint: expect.stringContaining("redeliver") },
    });
    expect(await recordedFor(a.id.tenantId)).toBe(before);
    expect(await kept(a.id.tenantId)).toBe(1);
    expect((await deliver("ping", ping(9102), { env: tight })).status).toBe(202);
  });

  it(`limits a tenant URL per tenant, by the tenant's own override, keeping at most ${MAX_KEPT_DELIVERIES} deliveries`, async () => {
    const own = await seedIdentity("hooks-rl-own", "dev");
    await env.DB.prepare(await setWebhookSecretSql(own.tenantId, TENANT_SECRET, KEY)).run();
    await env.DB.prepare(setRateLimitSql(own.tenantId, { tenantPerMin: 1 })).run();
    const path = "/webhooks/github/hooks-rl-own";
    expect((await deliver("ping", ping(1), { path, secret: TENANT_SECRET })).status).toBe(202);
    expect((await deliver("ping", ping(1), { path, secret: TENANT_SECRET })).body).toMatchObject({ ok: true, queued: true });
    // Fill the tenant's backlog to its cap: the next delivery over the limit is refused.
    await env.DB.prepare(
      `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?2)
       INSERT INTO webhook_backlog (tenant_id, delivery_id, event, bucket, payload, bytes, content_hash, received_at)
       SELECT ?1, 'fill-' || x, 'ping', 'fill', '{}', 2, 'fill-' || x, '2000-01-01T00:00:00.000Z' FROM n`,
    )
      .bind(own.tenantId, MAX_KEPT_DELIVERIES - 1)
      .run();
    const over = await deliver("ping", ping(1), { path, secret: TENANT_SECRET });
    expect(over.status).toBe(429);
    expect(over.body.error.message).toContain("this tenant's webhook URL received more than 1 deliveries");
    expect(await kept(own.tenantId)).toBe(MAX_KEPT_DELIVERIES);
    await env.DB.prepare(`DELETE FROM webhook_backlog WHERE tenant_id = ?`).bind(own.tenantId).run();
  });

  it("processes a kept delivery from the cron job once its source has room, once: a redelivery of the same id is not processed twice", async () => {
    const t = await seedIdentity("hooks-rl-drain", "dev");
    await env.DB.prepare(await setWebhookSecretSql(t.tenantId, TENANT_SECRET, KEY)).run();
    await env.DB.prepare(setRateLimitSql(t.tenantId, { tenantPerMin: 1 })).run();
    const path = "/webhooks/github/hooks-rl-drain";
    expect((await deliver("ping", ping(1), { path, secret: TENANT_SECRET })).status).toBe(202);
    const body = JSON.stringify(ping(1));
    const queued = await deliver("ping", body, { path, secret: TENANT_SECRET });
    expect(queued.body).toMatchObject({ queued: true });
    // GitHub's redelivery keeps the id: still throttled, it is already waiting.
    const again = await deliver("ping", body, { path, secret: TENANT_SECRET, delivery: queued.delivery });
    expect(again.body).toEqual({ ok: true, delivery: queued.delivery, queued: true, duplicate: true });
    expect(await kept(t.tenantId)).toBe(1);
    expect(await deliveryRow(t.tenantId, queued.delivery)).toBeNull();

    const job = async () => (await runMaintenance(testEnv as typeof env, new Date())).find((r) => r.job === "webhook_backlog")!;
    // Within the minute the source is still full: the job leaves it waiting rather than go past the limit.
    expect((await job()).detail).toContain("1 still over their source's limit");
    expect(await kept(t.tenantId)).toBe(1);

    // With room (an operator raised the limit), the job feeds it through the live path.
    await env.DB.prepare(setRateLimitSql(t.tenantId, { tenantPerMin: 100 })).run();
    expect((await job()).detail).toMatch(/^1 kept delivery\(ies\) processed, 0 already recorded, 0 still over/);
    expect(await kept(t.tenantId)).toBe(0);
    expect(await deliveryRow(t.tenantId, queued.delivery)).toMatchObject({ status: "processed", attempts: 1, error: "" });

    // A later redelivery of the same id is a duplicate, and the job has nothing left to do.
    const late = await deliver("ping", body, { path, secret: TENANT_SECRET, delivery: queued.delivery });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ duplicate: true });
    expect((await job()).detail).toContain("0 kept delivery(ies) processed, 0 already recorded, 0 still over");
    expect(await deliveryRow(t.tenantId, queued.delivery)).toMatchObject({ status: "processed", attempts: 1 });
  });

  it("processes a delivery when its counter cannot be reached (fails open): it is signed, bounded, and GitHub would not resend it", async () => {
    const t = await seedIdentity("hooks-rl-down", "dev");
    await env.DB.prepare(await setWebhookSecretSql(t.tenantId, TENANT_SECRET, KEY)).run();
    const down = { ...testEnv, RATE_LIMITS: { getByName: () => ({ hit: () => Promise.reject(new Error("counter down")) }) } } as unknown as typeof env;
    const ctx = createExecutionContext();
    const body = JSON.stringify(ping(1));
    const res = await worker.fetch(
      new Request("http://ledger.test/webhooks/github/hooks-rl-down", {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "x-github-event": "ping", "x-github-delivery": "down-1", "x-hub-signature-256": await sign(TENANT_SECRET, body) },
      }),
      down,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ok: true, delivery: "down-1" });
    expect(await deliveryRow(t.tenantId, "down-1")).toMatchObject({ status: "processed" });
  });

  it("lets the job drop a kept delivery that was recorded meanwhile, without processing it again", async () => {
    const t = await seedIdentity("hooks-rl-raced", "dev");
    await env.DB.prepare(await setWebhookSecretSql(t.tenantId, TENANT_SECRET, KEY)).run();
    await env.DB.prepare(setRateLimitSql(t.tenantId, { tenantPerMin: 1 })).run();
    const path = "/webhooks/github/hooks-rl-raced";
    expect((await deliver("ping", ping(1), { path, secret: TENANT_SECRET })).status).toBe(202);
    const body = JSON.stringify(ping(1));
    const queued = await deliver("ping", body, { path, secret: TENANT_SECRET });
    expect(queued.body).toMatchObject({ queued: true });
    // The limit is raised and the same delivery is redelivered by hand before the job runs.
    await env.DB.prepare(setRateLimitSql(t.tenantId, { tenantPerMin: 100 })).run();
    expect((await deliver("ping", body, { path, secret: TENANT_SECRET, delivery: queued.delivery })).status).toBe(202);
    const job = (await runMaintenance(testEnv as typeof env, new Date())).find((r) => r.job === "webhook_backlog")!;
    expect(job.detail).toContain("1 already recorded");
    expect(await kept(t.tenantId)).toBe(0);
    expect(await deliveryRow(t.tenantId, queued.delivery)).toMatchObject({ status: "processed", attempts: 1 });
  });
});

describe("push", () => {
  let a: Awaited<ReturnType<typeof appTenant>>;
  let b: Awaited<ReturnType<typeof appTenant>>;
  beforeAll(async () => {
    a = await appTenant("hooks-push-a", 7001, "acme/api");
    b = await appTenant("hooks-push-b", 7002, "acme/api");
  });

  const push = (installationId: number, ref: string, files: string[], sha: string, timestamp: string) => {
    const p = withRepo(
      example("push", (e) => e.commits.length > 0),
      "acme/api",
      installationId,
    );
    p.ref = ref;
    p.commits = [{ ...p.commits[0], id: sha, timestamp, message: "touch files", added: [], modified: files, removed: [] }];
    return p;
  };

  it("records commits and back-fills git_commit on the events it explains, conservatively", async () => {
    const log = (entity_path: string, project = "api", extra: Structured = {}) => ok(a.ctx, "log_change", { entity_path, change_type: "modify", reasoning: "r", project, ...extra });
    const explained = await log("src/app.ts");
    const symbol = await log("src/app.ts::handler");
    const otherProject = await log("src/app.ts", "web");
    const otherFile = await log("src/other.ts");
    const committed = await log("src/app.ts", "api", { git_commit: "abc1234" });
    const sameInB = await ok(b.ctx, "log_change", { entity_path: "src/app.ts", change_type: "modify", reasoning: "r", project: "api" });
    const sha = "a".repeat(40);
    const r = await deliver("push", push(7001, "refs/heads/main", ["src/app.ts"], sha, "2026-06-02T10:00:00Z"));
    expect(r.status).toBe(202);
    expect(await deliveryRow(a.id.tenantId, r.delivery)).toMatchObject({ status: "processed", error: "" });
    expect(await count(`SELECT COUNT(*) AS n FROM git_commits WHERE tenant_id = ? AND sha = ?`, a.id.tenantId, sha)).toBe(1);
    const commitOf = async (e: Structured) => (await env.DB.prepare(`SELECT git_commit FROM events WHERE id = ?`).bind(e.id).first<{ git_commit: string }>())!.git_commit;
    expect(await commitOf(explained)).toBe(sha);
    expect(await commitOf(symbol)).toBe(sha);
    expect(await commitOf(otherProject)).toBe("");
    expect(await commitOf(otherFile)).toBe("");
    expect(await commitOf(committed)).toBe("abc1234");
    // Tenant isolation: the same repository and path in tenant B are untouched.
    expect(await commitOf(sameInB)).toBe("");
    expect(await count(`SELECT COUNT(*) AS n FROM git_commits WHERE tenant_id = ?`, b.id.tenantId)).toBe(0);
  });

  it("does not back-fill from other branches or from commits older than the event", async () => {
    const e = await ok(a.ctx, "log_change", { entity_path: "src/late.ts", change_type: "modify", reasoning: "r", project: "acme/api" });
    await deliver("push", push(7001, "refs/heads/feature", ["src/late.ts"], "b".repeat(40), "2026-06-02T10:00:00Z"));
    await deliver("push", push(7001, "refs/heads/main", ["src/late.ts"], "c".repeat(40), "2026-05-01T10:00:00Z"));
    const row = await env.DB.prepare(`SELECT git_commit FROM events WHERE id = ?`).bind(e.id).first<{ git_commit: string }>();
    expect(row!.git_commit).toBe("");
    expect(await count(`SELECT COUNT(*) AS n FROM git_commits WHERE tenant_id = ? AND sha IN (?, ?)`, a.id.tenantId, "b".repeat(40), "c".repeat(40))).toBe(2);
  });

  it("ignores, with a record, a push for a repository the tenant has not registered", async () => {
    const r = await deliver("push", withRepo(example("push"), "acme/unknown", 7001));
    expect(await deliveryRow(a.id.tenantId, r.delivery)).toMatchObject({ status: "ignored", error: expect.stringContaining("not registered") });
  });
});

describe("pull_request", () => {
  let a: Awaited<ReturnType<typeof appTenant>>;
  let b: Awaited<ReturnType<typeof appTenant>>;
  let taskA: Structured;
  let taskB: Structured;
  beforeAll(async () => {
    a = await appTenant("hooks-pr-a", 8001, "acme/api");
    b = await appTenant("hooks-pr-b", 8002, "acme/api");
    for (const w of [a, b]) await ok(w.ctx, "project_create", { title: "Project PR", key: "PR" });
    taskA = (await ok(a.ctx, "task_create", { project_id: "PR", title: "a task" })).task as Structured;
    taskB = (await ok(b.ctx, "task_create", { project_id: "PR", title: "b task" })).task as Structured;
  });

  const pr = (action: string, number: number, extra: Payload = {}) => {
    const p = withRepo(
      example("pull_request", (e) => e.action === action),
      "acme/api",
      8001,
    );
    p.number = number;
    p.pull_request = { ...p.pull_request, number, title: "Fix the thing", body: "", ...extra };
    return p;
  };

  it("links the tasks a PR names and moves their refs to merged, with pr.merged activity", async () => {
    const opened = await deliver("pull_request", pr("opened", 41, { title: "PR-1: fix the thing", body: "Also see NOPE-9." }));
    expect(await deliveryRow(a.id.tenantId, opened.delivery)).toMatchObject({ status: "processed" });
    const refs = (await ok(a.ctx, "code_ref_query", { object_id: taskA.id })).items as Structured[];
    expect(refs).toEqual([expect.objectContaining({ ref_type: "pr", pr_number: 41, pr_state: "open", pr_url: "https://github.com/acme/api/pull/41" })]);
    // Tenant B has a task with the same key and the same repository: untouched.
    expect((await ok(b.ctx, "code_ref_query", { object_id: taskB.id })).items).toEqual([]);

    await deliver("pull_request", pr("closed", 41, { title: "PR-1: fix the thing", merged: true }));
    const after = (await ok(a.ctx, "code_ref_query", { object_id: taskA.id })).items as Structured[];
    expect(after).toHaveLength(1);
    expect(after[0]!.pr_state).toBe("merged");
    expect(await count(`SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'pr.merged' AND object_id = ?`, a.id.tenantId, taskA.id)).toBe(1);
    // A merged PR is not reopened by a later delivery.
    await deliver("pull_request", pr("reopened", 41));
    expect(((await ok(a.ctx, "code_ref_query", { object_id: taskA.id })).items as Structured[])[0]!.pr_state).toBe("merged");
  });

  it("closes an existing PR ref without merging it, and ignores untracked actions", async () => {
    await ok(a.ctx, "task_code_ref", { task_id: taskA.id, ref_type: "pr", pr_number: 52, repository_id: "acme/api" });
    await deliver("pull_request", pr("closed", 52, { merged: false }));
    const refs = (await ok(a.ctx, "code_ref_query", { object_id: taskA.id, pr_state: "closed" })).items as Structured[];
    expect(refs.map((r) => r.pr_number)).toEqual([52]);
    expect(await count(`SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'pr.closed'`, a.id.tenantId)).toBe(1);
    const labeled = await deliver("pull_request", pr("labeled", 52));
    expect(await deliveryRow(a.id.tenantId, labeled.delivery)).toMatchObject({ status: "ignored" });
  });
});

describe("installation events", () => {
  let a: TestIdentity;
  let b: Awaited<ReturnType<typeof appTenant>>;
  beforeAll(async () => {
    a = await seedIdentity("hooks-inst-a", "dev");
    await env.DB.prepare(setInstallationSql(a.tenantId, "6001")).run();
    b = await appTenant("hooks-inst-b", 6002, "octo/one");
  });
  const slugs = async (tenantId: string) => (await env.DB.prepare(`SELECT slug FROM repositories WHERE tenant_id = ? ORDER BY slug`).bind(tenantId).all<{ slug: string }>()).results.map((r) => r.slug);

  it("registers and unregisters the installation's repositories for its tenant only", async () => {
    const created = example("installation", (e) => e.action === "created");
    created.installation = { ...created.installation, id: 6001 };
    created.repositories = [{ full_name: "octo/one" }, { full_name: "octo/two" }, { full_name: "../evil" }];
    expect((await deliver("installation", created)).status).toBe(202);
    expect(await slugs(a.tenantId)).toEqual(["octo/one", "octo/two"]);

    const changed = example("installation_repositories", (e) => e.action === "removed");
    changed.installation = { ...changed.installation, id: 6001 };
    changed.repositories_added = [{ full_name: "octo/three" }];
    changed.repositories_removed = [{ full_name: "octo/one" }];
    await deliver("installation_repositories", changed);
    expect(await slugs(a.tenantId)).toEqual(["octo/three", "octo/two"]);
    expect(await slugs(b.id.tenantId)).toEqual(["octo/one"]);
    expect(await count(`SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'repo.unregistered'`, a.tenantId)).toBe(1);
  });
});

describe("failures and retries", () => {
  let a: Awaited<ReturnType<typeof appTenant>>;
  beforeAll(async () => {
    a = await appTenant("hooks-retry", 5001, "acme/flaky");
  });

  it("records a failed delivery, retries it from the scheduled handler with attempts counted, and replays it on request", async () => {
    const payload = withRepo(
      example("push", (e) => e.commits.length > 0),
      "acme/flaky",
      5001,
    );
    payload.ref = "refs/heads/main";
    // Break processing the way a schema drift would: the commits table is briefly unusable.
    await env.DB.prepare(`ALTER TABLE git_commits RENAME TO git_commits_away`).run();
    const r = await deliver("push", payload);
    expect(r.status).toBe(202);
    expect(await deliveryRow(a.id.tenantId, r.delivery)).toMatchObject({ status: "failed", attempts: 1, error: expect.stringContaining("git_commits") });

    await runCron(new Date());
    expect(await deliveryRow(a.id.tenantId, r.delivery)).toMatchObject({ status: "failed", attempts: 2 });
    await env.DB.prepare(`ALTER TABLE git_commits_away RENAME TO git_commits`).run();
    await runCron(new Date());
    expect(await deliveryRow(a.id.tenantId, r.delivery)).toMatchObject({ status: "processed", attempts: 3, error: "" });
    expect(await count(`SELECT COUNT(*) AS n FROM git_commits WHERE tenant_id = ?`, a.id.tenantId)).toBe(1);

    // Attempts are bounded: an exhausted delivery waits for an operator's replay.
    await env.DB.prepare(`UPDATE webhook_deliveries SET status = 'failed', attempts = ? WHERE delivery_id = ?`).bind(MAX_ATTEMPTS, r.delivery).run();
    await runCron(new Date());
    expect(await deliveryRow(a.id.tenantId, r.delivery)).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS });
    const replayed = await env.DB.prepare(replaySql(r.delivery, a.id.tenantId)).all();
    expect(replayed.results).toHaveLength(1);
    await runCron(new Date());
    expect(await deliveryRow(a.id.tenantId, r.delivery)).toMatchObject({ status: "processed", attempts: 1 });
  });

  it("drops deliveries past retention", async () => {
    const r = await deliver("ping", { ...example("ping"), installation: { id: 5001 } });
    await runCron(new Date(Date.now() + 31 * 24 * 60 * 60_000));
    expect(await deliveryRow(a.id.tenantId, r.delivery)).toBeNull();
  });
});

describe("a push that changes reserved paths", () => {
  it("tells each holder whose reservation covers a changed file, once per push, whoever pushed", async () => {
    const a = await appTenant("hooks-reserved", 9301, "rsv/repo");
    // The webhook path reads the wall clock: the reservation is made on it too.
    const holder = makeCtx(a.id, { now: () => new Date() });
    const other = await seedIdentity("hooks-reserved", "other");
    const otherCtx = makeCtx(other, { now: () => new Date() });
    await ok(holder, "path_reserve", { repository_id: "rsv/repo", paths: ["src/auth/**"] });
    await ok(otherCtx, "path_reserve", { repository_id: "rsv/repo", paths: ["docs/**"], exclusive: false });
    const push = (sha: string, files: string[]) => {
      const p = withRepo(
        example("push", (e) => e.commits.length > 0),
        "rsv/repo",
        9301,
      );
      p.ref = "refs/heads/feature";
      p.after = sha;
      p.commits = [{ ...p.commits[0], id: sha, timestamp: "2026-06-02T10:00:00Z", message: "outside", added: [], modified: files, removed: [] }];
      return p;
    };
    const notes = async (actorId: string) =>
      (
        await env.DB.prepare(`SELECT kind, summary FROM notifications WHERE tenant_id = ? AND actor_id = ? AND kind = 'paths.pushed' ORDER BY seq`)
          .bind(a.id.tenantId, actorId)
          .all<{ kind: string; summary: string }>()
      ).results;
    const first = await deliver("push", push("f".repeat(40), ["src/auth/login.ts", "README.md"]));
    expect(first.status).toBe(202);
    expect(await deliveryRow(a.id.tenantId, first.delivery)).toMatchObject({ status: "processed" });
    const told = await notes(a.id.actorId);
    expect(told).toHaveLength(1);
    expect(told[0]!.summary).toMatch(/pushed fffffff to rsv\/repo@feature changing src\/auth\/login\.ts, under your reservation src\/auth\/\*\*/);
    expect(await notes(other.actorId)).toEqual([]);
    // The same push delivered again is a duplicate; a push outside every reservation tells nobody.
    await deliver("push", push("f".repeat(40), ["src/auth/login.ts", "README.md"]));
    await deliver("push", push("1".repeat(40), ["README.md"]));
    expect(await notes(a.id.actorId)).toHaveLength(1);
    // A later push through shared paths tells their holder.
    await deliver("push", push("2".repeat(40), ["docs/guide.md"]));
    expect((await notes(other.actorId)).map((n) => n.kind)).toEqual(["paths.pushed"]);
  });
});
