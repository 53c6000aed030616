/**
 * `npm run setup:cloud -- --dry-run`: one command per resource `[env.production]` binds, read from
 * wrangler.toml itself, so the list cannot drift from the config; and no placeholder ids in the config.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { expect, it } from "vitest";
import { kvTitle, METADATA_KEYS, setBindingValue } from "../../scripts/setup-cloud";
import { ROOT } from "../../scripts/wrangler";
import { runScript } from "./support/run-script";

const toml = readFileSync(path.join(ROOT, "wrangler.toml"), "utf8");
type Binding = Record<string, string>;
const config = parse(toml) as unknown as { name: string; env: { production: Record<string, Binding[] | Binding | { producers?: Binding[] }> } };
const prod = config.env.production;
const list = (key: string) => (prod[key] ?? []) as Binding[];

it("the dry run prints a wrangler command for every resource [env.production] binds", () => {
  const run = runScript("setup-cloud.ts", ["--dry-run"]);
  expect(run.status, run.stderr).toBe(0);
  const out = run.stdout;
  const commands = out.split("\n").filter((l) => l.startsWith("npx wrangler "));
  const expected = [
    ...list("d1_databases").map((d) => `npx wrangler d1 create ${d.database_name}`),
    ...list("kv_namespaces").map((k) => `npx wrangler kv namespace create ${kvTitle(config.name, k.binding!)}`),
    ...list("r2_buckets").map((b) => `npx wrangler r2 bucket create ${b.bucket_name}`),
    ...list("vectorize").flatMap((v) => [
      `npx wrangler vectorize create ${v.index_name} --dimensions=768 --metric=cosine`,
      ...["kind", "object_type", "project_id", "scope"].map((k) => `npx wrangler vectorize create-metadata-index ${v.index_name} --property-name=${k} --type=string`),
    ]),
    ...((prod.queues as { producers?: Binding[] } | undefined)?.producers ?? []).map((q) => `npx wrangler queues create ${q.queue}`),
  ];
  expect(commands).toEqual(expected);
  // Every kind of resource the production Worker uses is covered.
  expect(list("d1_databases").length * list("kv_namespaces").length * list("r2_buckets").length * list("vectorize").length).toBeGreaterThan(0);
  expect(METADATA_KEYS).toEqual(["kind", "object_type", "project_id", "scope"]);
});

it("wrangler.toml holds no placeholder ids", () => {
  expect(toml).not.toMatch(/"0{8}-0{4}-0{4}-0{4}-0{12}"|"0{32}"/);
  for (const d of list("d1_databases")) expect(d.database_id).toBeUndefined();
  for (const k of list("kv_namespaces")) expect(k.id).toBeUndefined();
});

it("the ids a real run finds are written into the production block of their binding, and only there", () => {
  const withDb = setBindingValue(toml, "d1_databases", "DB", "database_id", "11111111-2222-4333-8444-555555555555");
  const withKv = setBindingValue(withDb, "kv_namespaces", "OAUTH_KV", "id", "abcdef0123456789abcdef0123456789");
  const parsed = parse(withKv) as unknown as typeof config & { d1_databases: Binding[]; kv_namespaces: Binding[] };
  expect((parsed.env.production.d1_databases as Binding[])[0]!.database_id).toBe("11111111-2222-4333-8444-555555555555");
  expect((parsed.env.production.kv_namespaces as Binding[])[0]!.id).toBe("abcdef0123456789abcdef0123456789");
  expect(parsed.d1_databases[0]!.database_id).toBeUndefined();
  expect(parsed.kv_namespaces[0]!.id).toBeUndefined();
  // Run again, it replaces rather than adds.
  expect(setBindingValue(withKv, "kv_namespaces", "OAUTH_KV", "id", "ff".repeat(16)).match(/^id = /gm)).toHaveLength(1);
  expect(() => setBindingValue(toml, "d1_databases", "NOPE", "database_id", "x")).toThrow(/no \[\[env.production.d1_databases\]\]/);
});
