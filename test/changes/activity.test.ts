/**
 * Change-log events in the work ledger's feed (seed 001: project_brief and activity_query show
 * what was changed, by whom, by name): log_change appends a change.logged activity row in its
 * own batch, tied to the project whose key the event carries.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { changeSummary } from "../../src/changes/log-change";
import { count, newWorld, ok, refusedWithoutWrites, type Structured } from "../support/helpers";

const T0 = "2026-03-01T10:00:00.000Z";
const WHY = "Emails must be unique so password resets reach one account";

const activityRows = (tenantId: string) =>
  env.DB.prepare("SELECT verb, object_type, object_id, project_id, actor_id, summary FROM activity WHERE tenant_id = ? AND verb = 'change.logged' ORDER BY seq")
    .bind(tenantId)
    .all<Structured>()
    .then((r) => r.results);

describe("log_change", () => {
  describe("change events in the activity feed", () => {
    it("a logged change shows in its project's brief and in activity_query, with the actor's name", async () => {
      const w = await newWorld("chg-feed", { start: T0, actor: "alice" });
      const api = (await ok(w.ctx, "project_create", { title: "Billing API", key: "API" })).project as Structured;
      const logged = await ok(w.ctx, "log_change", { entity_path: "users.email", change_type: "modify", reasoning: WHY, project: "api", agent: "claude-code" });

      const brief = await ok(w.ctx, "project_brief", { project: "API" });
      const item = (brief.recent_activity as Structured[]).find((a) => a.verb === "change.logged");
      expect(item).toEqual({ at: T0, verb: "change.logged", object_type: "change", object_id: logged.id, actor_id: w.id.actorId, actor_name: "alice", summary: `modify users.email: ${WHY}` });

      const feed = await ok(w.ctx, "activity_query", { verb: "change.*" });
      expect(feed.items).toHaveLength(1);
      expect((feed.items as Structured[])[0]).toMatchObject({
        object_id: logged.id,
        project_id: api.id,
        actor_name: "alice",
        metadata: { change_type: "modify", entity_path: "users.email", agent: "claude-code" },
      });
      // Every feed item carries the name beside the id: the project's own creation too.
      expect((await ok(w.ctx, "activity_query", { project_id: "API" })).items).toEqual(expect.arrayContaining([expect.objectContaining({ verb: "project.created", actor_name: "alice" })]));
    });

    it("a change whose project is no work-ledger project is in the tenant's feed without a project", async () => {
      const w = await newWorld("chg-noproj", { start: T0 });
      await ok(w.ctx, "log_change", { entity_path: "deps/stripe", change_type: "add", reasoning: "Payments", project: "scratch" });
      expect(await activityRows(w.id.tenantId)).toEqual([expect.objectContaining({ project_id: null, summary: "add deps/stripe: Payments" })]);
    });

    it("a deleted project's key ties no change to it, whether the key is given or defaulted from the run's repository", async () => {
      const w = await newWorld("chg-deleted", { start: T0 });
      const old = (await ok(w.ctx, "project_create", { title: "Old", key: "OLD" })).project as Structured;
      await env.DB.prepare("UPDATE projects SET deleted_at = ? WHERE id = ?").bind(T0, old.id).run();
      await ok(w.ctx, "log_change", { entity_path: "a.b", change_type: "add", reasoning: "Given key", project: "OLD" });
      expect(await activityRows(w.id.tenantId)).toEqual([expect.objectContaining({ project_id: null })]);
    });

    it("a rename is one feed row naming both paths; a refused log_change adds none", async () => {
      const w = await newWorld("chg-rename", { start: T0 });
      await ok(w.ctx, "log_change", { entity_path: "src/auth/login.ts", change_type: "rename", rename_from: "src/login.ts", reasoning: "Group auth code" });
      expect((await activityRows(w.id.tenantId)).map((r) => r.summary)).toEqual(["rename src/login.ts → src/auth/login.ts: Group auth code"]);
      await refusedWithoutWrites(w.ctx, "log_change", { entity_path: "x", change_type: "modfy" }, "invalid_input", () => activityRows(w.id.tenantId));
    });

    it("whoami's delta names the other actor who changed something", async () => {
      const w = await newWorld("chg-whoami", { start: T0 });
      const bob = await w.other("bob");
      await ok(w.ctx, "whoami", {});
      await ok(bob.ctx, "log_change", { entity_path: "users.email", change_type: "modify", reasoning: WHY });
      const me = await ok(w.ctx, "whoami", { include: ["delta_items"] });
      expect(JSON.stringify(me)).toContain('"actor_name":"bob"');
    });

    it("never reaches another tenant: not its project of the same key, nor its feed", async () => {
      const a = await newWorld("chg-iso-a", { start: T0 });
      const b = await newWorld("chg-iso-b", { start: T0 });
      await ok(a.ctx, "project_create", { title: "API", key: "API" });
      await ok(b.ctx, "project_create", { title: "API", key: "API" });
      await ok(a.ctx, "log_change", { entity_path: "users.email", change_type: "modify", reasoning: WHY, project: "API" });
      expect((await ok(b.ctx, "activity_query", { verb: "change.*" })).items).toEqual([]);
      expect((await ok(b.ctx, "project_brief", { project: "API" })).recent_activity).toEqual(expect.not.arrayContaining([expect.objectContaining({ verb: "change.logged" })]));
      expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'change.logged'", b.id.tenantId)).toBe(0);
    });
  });

  describe("changeSummary", () => {
    it("keeps the first line of the reasoning, cut at 160 characters", () => {
      expect(changeSummary("modify", "a.b", "", "")).toBe("modify a.b");
      const long = changeSummary("add", "a", "", `${"x".repeat(300)}\nsecond line`);
      expect(long).toBe(`add a: ${"x".repeat(159)}…`);
    });
  });
});
