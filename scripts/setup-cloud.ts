/**
 * `npm run setup:cloud [-- --dry-run]`: the Cloudflare resources `[env.production]` of wrangler.toml
 * binds (D1, KV, R2, Vectorize with its metadata indexes, queues), created where missing, and the
 * ids of the new D1 database and KV namespaces written into wrangler.toml. Read from the config, so a
 * binding added there is set up without touching this script. `--dry-run` prints the commands only.
 * Needs `npx wrangler login` (or CLOUDFLARE_API_TOKEN) first, except for --dry-run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { parse } from "smol-toml";
import { EMBED_SOURCES } from "../src/search/sources";
import { ROOT, wrangler } from "./wrangler";

const ENV = "production";
export const CONFIG_FILE = path.join(ROOT, "wrangler.toml");

interface EnvConfig {
  name?: string;
  vars?: Record<string, string>;
  d1_databases?: Array<{ binding: string; database_name: string; database_id?: string }>;
  kv_namespaces?: Array<{ binding: string; id?: string }>;
  r2_buckets?: Array<{ binding: string; bucket_name: string }>;
  vectorize?: Array<{ binding: string; index_name: string }>;
  queues?: { producers?: Array<{ queue: string }>; consumers?: Array<{ queue: string; dead_letter_queue?: string }> };
}

/** One resource: the command that creates it, and how to tell it already exists. */
export interface Step {
  kind: "d1" | "kv" | "r2" | "vectorize" | "vectorize-metadata" | "queue";
  name: string;
  binding?: string;
  args: string[];
}

/** Vectorize dimensions by embedding model (its index's size is fixed at creation). */
const DIMENSIONS: Record<string, number> = { "bge-small": 384, "bge-base": 768, "bge-large": 1024 };

/** Every metadata key a vector carries: each needs a metadata index before vectors are inserted, or filters on it match nothing. */
export const METADATA_KEYS = [...new Set(Object.values(EMBED_SOURCES).flatMap((s) => Object.keys(s.metadata({}))))].sort();

/** A KV namespace has no name in the config; this one is its title in the account. */
export const kvTitle = (worker: string, binding: string) => `${worker}-${binding.toLowerCase().replace(/_/g, "-")}`;

export function productionConfig(toml = readFileSync(CONFIG_FILE, "utf8")): EnvConfig {
  const config = parse(toml) as unknown as { env?: Record<string, EnvConfig>; name: string };
  const env = config.env?.[ENV];
  if (!env) throw new Error(`wrangler.toml has no [env.${ENV}]`);
  return { ...env, name: env.name ?? config.name };
}

export function plan(env: EnvConfig): Step[] {
  const steps: Step[] = [];
  for (const db of env.d1_databases ?? []) steps.push({ kind: "d1", name: db.database_name, binding: db.binding, args: ["d1", "create", db.database_name] });
  for (const kv of env.kv_namespaces ?? []) {
    const title = kvTitle(env.name!, kv.binding);
    steps.push({ kind: "kv", name: title, binding: kv.binding, args: ["kv", "namespace", "create", title] });
  }
  for (const bucket of env.r2_buckets ?? []) steps.push({ kind: "r2", name: bucket.bucket_name, args: ["r2", "bucket", "create", bucket.bucket_name] });
  for (const index of env.vectorize ?? []) {
    const model = env.vars?.EMBEDDING_MODEL ?? "";
    const size = Object.entries(DIMENSIONS).find(([family]) => model.includes(family))?.[1];
    if (!size) throw new Error(`no known dimensions for EMBEDDING_MODEL '${model}' (the Vectorize index ${index.index_name} must match it)`);
    steps.push({ kind: "vectorize", name: index.index_name, args: ["vectorize", "create", index.index_name, `--dimensions=${size}`, "--metric=cosine"] });
    for (const key of METADATA_KEYS) {
      steps.push({ kind: "vectorize-metadata", name: `${index.index_name}:${key}`, args: ["vectorize", "create-metadata-index", index.index_name, `--property-name=${key}`, "--type=string"] });
    }
  }
  const queues = new Set([...(env.queues?.producers ?? []).map((p) => p.queue), ...(env.queues?.consumers ?? []).flatMap((c) => [c.queue, c.dead_letter_queue ?? []].flat())]);
  for (const queue of queues) steps.push({ kind: "queue", name: queue, args: ["queues", "create", queue] });
  return steps;
}

/**
 * wrangler.toml with `key = "value"` set in the `[[env.production.<section>]]` block whose binding is
 * `binding` (added after the binding line, or replaced). Line-based, so comments and layout stay.
 */
export function setBindingValue(toml: string, section: string, binding: string, key: string, value: string): string {
  const lines = toml.split("\n");
  const header = `[[env.${ENV}.${section}]]`;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== header) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trim().startsWith("[")) end++;
    const block = lines.slice(i + 1, end);
    if (!block.some((l) => l.replace(/\s/g, "") === `binding="${binding}"`)) continue;
    const existing = block.findIndex((l) => l.trim().startsWith(`${key} `) || l.trim().startsWith(`${key}=`));
    if (existing >= 0) lines[i + 1 + existing] = `${key} = "${value}"`;
    else lines.splice(i + 1 + block.findIndex((l) => l.includes("binding")) + 1, 0, `${key} = "${value}"`);
    return lines.join("\n");
  }
  throw new Error(`wrangler.toml has no ${header} with binding = "${binding}"`);
}

const json = async <T>(args: string[]): Promise<T> => {
  const out = await wrangler(args);
  return JSON.parse(out.slice(out.search(/[[{]/))) as T;
};

/** What exists in the account already, by kind: names, and ids where the config needs them. */
async function existing(kinds: Set<Step["kind"]>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (kinds.has("d1")) for (const db of await json<Array<{ name: string; uuid: string }>>(["d1", "list", "--json"])) found.set(`d1:${db.name}`, db.uuid);
  if (kinds.has("kv")) for (const ns of await json<Array<{ title: string; id: string }>>(["kv", "namespace", "list"])) found.set(`kv:${ns.title}`, ns.id);
  if (kinds.has("r2"))
    for (const line of (await wrangler(["r2", "bucket", "list"])).split("\n")) {
      const name = line.match(/^name:\s+(\S+)/)?.[1];
      if (name) found.set(`r2:${name}`, name);
    }
  if (kinds.has("vectorize")) for (const ix of await json<Array<{ name: string }>>(["vectorize", "list", "--json"])) found.set(`vectorize:${ix.name}`, ix.name);
  if (kinds.has("queue"))
    for (const line of (await wrangler(["queues", "list"])).split("\n")) {
      const name = line
        .split("│")
        .map((c) => c.trim())
        .filter(Boolean)[1];
      if (name) found.set(`queue:${name}`, name);
    }
  return found;
}

async function apply(steps: Step[]): Promise<void> {
  await wrangler(["whoami"]).catch(() => {
    throw new Error("wrangler is not logged in: run `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then npm run setup:cloud again");
  });
  const found = await existing(new Set(steps.map((s) => s.kind)));
  let toml = readFileSync(CONFIG_FILE, "utf8");
  const create = async (step: Step) => {
    console.log(`creating: npx wrangler ${step.args.join(" ")}`);
    await wrangler(step.args);
  };
  for (const step of steps) {
    if (step.kind === "vectorize-metadata") {
      // Creating a metadata index that exists is refused, so each is looked up first.
      const [index, key] = step.name.split(":") as [string, string];
      const have = await json<Array<{ propertyName: string }>>(["vectorize", "list-metadata-index", index, "--json"]).catch(() => []);
      if (have.some((m) => m.propertyName === key)) console.log(`exists: ${step.kind} ${step.name}`);
      else await create(step);
      continue;
    }
    if (found.has(`${step.kind}:${step.name}`)) console.log(`exists: ${step.kind} ${step.name}`);
    else await create(step);
    if (step.kind === "d1" || step.kind === "kv") {
      if (!found.has(`${step.kind}:${step.name}`)) (await existing(new Set([step.kind]))).forEach((v, k) => found.set(k, v));
      const id = found.get(`${step.kind}:${step.name}`);
      if (!id) throw new Error(`created ${step.kind} ${step.name} but cannot find its id: put it into wrangler.toml by hand`);
      toml = step.kind === "d1" ? setBindingValue(toml, "d1_databases", step.binding!, "database_id", id) : setBindingValue(toml, "kv_namespaces", step.binding!, "id", id);
    }
  }
  writeFileSync(CONFIG_FILE, toml);
  console.log(`Done. wrangler.toml has the D1 and KV ids. Next: npx wrangler d1 migrations apply DB --remote --env ${ENV}, then npm run deploy.`);
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { "dry-run": { type: "boolean", default: false } } });
  const steps = plan(productionConfig());
  if (values["dry-run"]) {
    console.log(`# The resources [env.${ENV}] of wrangler.toml binds; each command creates one (skip those that exist).`);
    for (const step of steps) console.log(`npx wrangler ${step.args.join(" ")}`);
    console.log(`# Then put the D1 database's id (database_id) and the KV namespace's id (id) into [env.${ENV}] of wrangler.toml.`);
    return;
  }
  await apply(steps);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, "scripts", "setup-cloud.ts")) {
  main(process.argv.slice(2)).catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}
