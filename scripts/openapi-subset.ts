/**
 * Extracts, from GitHub's published OpenAPI description (the @octokit/openapi package), the
 * operations this server calls: method, path template, parameters, required body fields, success
 * response schemas and GitHub's example answers. The committed result (test/support/github/openapi-subset.json) is what the
 * tests check every outgoing GitHub request and every response fixture against.
 *
 *   npm i --no-save @octokit/openapi@23.0.2 && npx tsx scripts/openapi-subset.ts
 *
 * The full description is ~385 MB unpacked, too heavy to install on every `npm ci`.
 */
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

export const OPERATIONS = [
  "GET /repos/{owner}/{repo}",
  "GET /repos/{owner}/{repo}/branches/{branch}",
  "GET /repos/{owner}/{repo}/compare/{basehead}",
  "GET /repos/{owner}/{repo}/commits",
  "GET /repos/{owner}/{repo}/commits/{ref}",
  "GET /repos/{owner}/{repo}/commits/{ref}/status",
  "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
  "GET /repos/{owner}/{repo}/pulls",
  "GET /repos/{owner}/{repo}/pulls/{pull_number}",
  "GET /repos/{owner}/{repo}/pulls/{pull_number}/files",
  "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
  "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
  "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
  "GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations",
  "GET /repos/{owner}/{repo}/code-scanning/alerts",
  "GET /repos/{owner}/{repo}/contents/{path}",
  "GET /repos/{owner}/{repo}/git/ref/{ref}",
  "POST /repos/{owner}/{repo}/git/refs",
  "PATCH /repos/{owner}/{repo}/git/refs/{ref}",
  "DELETE /repos/{owner}/{repo}/git/refs/{ref}",
  "GET /repos/{owner}/{repo}/git/commits/{commit_sha}",
  "POST /repos/{owner}/{repo}/git/commits",
  "GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
  "POST /repos/{owner}/{repo}/git/trees",
  "POST /repos/{owner}/{repo}/git/blobs",
  "GET /repos/{owner}/{repo}/git/blobs/{file_sha}",
  "GET /repos/{owner}/{repo}/tarball/{ref}",
  "POST /repos/{owner}/{repo}/merges",
  "POST /app/installations/{installation_id}/access_tokens",
  "GET /rate_limit",
] as const;

type Json = Record<string, unknown>;

/**
 * OpenAPI 3.0's `nullable: true` is not JSON Schema; the validators the tests use read JSON Schema,
 * so it becomes a "null" type. Examples and descriptions are dropped to keep the subset small.
 */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === "example" || k === "examples" || k === "description" || k === "nullable") continue;
    out[k] = k === "properties" ? Object.fromEntries(Object.entries(v as Json).map(([name, sub]) => [name, toJsonSchema(sub)])) : toJsonSchema(v);
  }
  if ((node as Json).nullable === true) {
    if (typeof out.type === "string") out.type = [out.type, "null"];
    else return { anyOf: [out, { type: "null" }] };
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  }
  return out;
}

async function main(): Promise<void> {
  const require = createRequire(import.meta.url);
  const dir = path.dirname(require.resolve("@octokit/openapi/package.json"));
  const version = (JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")) as { version: string }).version;
  const spec = JSON.parse(await readFile(path.join(dir, "generated/api.github.com.deref.json"), "utf8")) as { paths: Record<string, Record<string, Json>> };
  const operations: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    const [method, route] = op.split(" ") as [string, string];
    const entry = spec.paths[route]?.[method.toLowerCase()];
    if (!entry) throw new Error(`not in the description: ${op}`);
    const parameters = ((entry.parameters ?? []) as Json[]).map((p) => ({ name: p.name, in: p.in, required: p.required === true }));
    const body = (entry.requestBody as Json | undefined)?.content as Record<string, { schema?: Json }> | undefined;
    const bodySchema = body?.["application/json"]?.schema;
    const responses: Record<string, unknown> = {};
    const examples: Record<string, unknown> = {};
    for (const [status, res] of Object.entries((entry.responses ?? {}) as Record<string, Json>)) {
      if (!/^2\d\d$/.test(status)) continue;
      const content = res.content as Record<string, { schema?: Json; examples?: Record<string, { value?: unknown }> }> | undefined;
      responses[status] = toJsonSchema(content?.["application/json"]?.schema ?? null);
      // GitHub's own example answer: the tests' fixtures start from it.
      const example = Object.values(content?.["application/json"]?.examples ?? {})[0]?.value;
      if (example !== undefined) examples[status] = example;
    }
    operations[op] = {
      operationId: entry.operationId,
      parameters,
      body: bodySchema ? { required: bodySchema.required ?? [], properties: Object.keys((bodySchema.properties ?? {}) as Json) } : null,
      responses,
      examples,
    };
  }
  const out = { source: `@octokit/openapi@${version} generated/api.github.com.deref.json`, operations };
  await writeFile(path.join(import.meta.dirname, "../test/support/github/openapi-subset.json"), `${JSON.stringify(out)}\n`);
  console.log(`wrote ${Object.keys(operations).length} operations from @octokit/openapi@${version}`);
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
