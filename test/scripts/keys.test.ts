/** `npm run keys -- create` with a name that is not a slug: refused before anything is written, with the rule and a slug to use. */
import { mkdtemp, rm, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { suggestSlug } from "../../src/auth/provision";
import { runScript } from "./support/run-script";

const keys = (args: string[], persistTo: string) => runScript("keys.ts", [...args, "--persist-to", persistTo]);

it("a tenant that is not a slug is refused with the naming rule and the nearest slug, and nothing is created", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "agent-ledger-keys-"));
  try {
    const run = keys(["create", "--tenant", "Acme Corp", "--actor", "claude-code"], dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("tenant 'Acme Corp' is not a slug");
    expect(run.stderr).toContain("lowercase letters, digits, '.', '_' and '-'");
    expect(run.stderr).toContain("Try --tenant acme-corp");
    const actor = keys(["create", "--tenant", "acme", "--actor", "Claude Code!"], dir);
    expect(actor.stderr).toContain("Try --actor claude-code");
    expect(await readdir(dir)).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it("the usage names the slug rule", () => {
  const run = runScript("keys.ts");
  expect(run.stderr).toContain("Tenant and actor names are slugs");
});

it("suggests a slug only where one can be made", () => {
  expect(suggestSlug("Team 2 / Backend")).toBe("team-2-backend");
  expect(suggestSlug("--x")).toBe("x");
  expect(suggestSlug("ÄÖ")).toBe("");
  expect(suggestSlug("a".repeat(80))).toHaveLength(63);
});
