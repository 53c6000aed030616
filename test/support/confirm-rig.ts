/** A record one actor may only remove after a confirmation: actor A's attachment, removed by actor B. */
import { makeCtx, ok, seedIdentity, type TestIdentity } from "./helpers";

/** Actor A attaches a link to project MOD; actor B (same tenant) is the one asked before removing it. */
export async function othersAttachment(tenant: string): Promise<{ b: TestIdentity; attachmentId: string; a: TestIdentity }> {
  const a = await seedIdentity(tenant, "alice");
  const b = await seedIdentity(tenant, "bob");
  const ctx = makeCtx(a);
  const project = (await ok(ctx, "project_create", { title: "Modern", key: "MOD" })).project as { id: string };
  const added = await ok(ctx, "attach_add", { object_type: "project", object_id: project.id, kind: "link", url: "https://example.com/spec", title: "spec" });
  return { a, b, attachmentId: (added.attachment as { id: string }).id };
}

/** Whether the attachment is still live on project MOD. */
export const live = async (ctx: ReturnType<typeof makeCtx>, id: string) =>
  ((await ok(ctx, "attachment_query", { object_type: "project", object_id: "MOD" })).items as { id: string }[]).some((x) => x.id === id);
