/** The webhook receiver and the scheduled handler end to end, in `wrangler dev` (docs/git.md's and docs/operations.md's curl recipes, as code). */
import { sign } from "@octokit/webhooks-methods";
import { describe, expect, inject, it } from "vitest";

const SECRET = "e2e-webhook-secret";

async function deliver(body: string, opts: { id?: string; secret?: string; event?: string } = {}): Promise<Response> {
  return fetch(`${inject("baseUrl")}/webhooks/github/e2e-a`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-GitHub-Event": opts.event ?? "ping",
      "X-GitHub-Delivery": opts.id ?? crypto.randomUUID(),
      "X-Hub-Signature-256": await sign(opts.secret ?? SECRET, body),
    },
    body,
  });
}

describe("webhooks and cron over HTTP (wrangler dev)", () => {
  it("accepts a signed delivery once, acknowledges its redelivery, and refuses a bad signature", async () => {
    const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
    const id = crypto.randomUUID();
    const first = await deliver(body, { id });
    expect(first.status).toBe(202);
    const again = await deliver(body, { id });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true });
    // The same body under a new delivery id is recognised by its SHA-256 and not applied again.
    const copy = await deliver(body);
    expect(copy.status).toBe(200);
    expect(await copy.json()).toMatchObject({ duplicate: true, duplicate_of: id });
    expect((await deliver(body, { secret: "not-the-secret" })).status).toBe(401);
    const unsigned = await fetch(`${inject("baseUrl")}/webhooks/github/e2e-a`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": crypto.randomUUID() },
      body,
    });
    expect(unsigned.status).toBe(401);
  });

  it("runs the scheduled handler for both triggers", async () => {
    for (const cron of ["*/5 * * * *", "17 6 * * *"]) {
      const res = await fetch(`${inject("baseUrl")}/__scheduled?cron=${encodeURIComponent(cron)}`);
      expect(res.status, cron).toBe(200);
      expect(await res.text()).toContain("Ran scheduled event");
    }
  });
});
