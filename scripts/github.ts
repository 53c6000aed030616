/**
 * Connect tenants to GitHub (docs/git.md: Connecting a tenant):
 *   printf %s "$TOKEN" | npm run github -- set-token --tenant acme
 *   npm run github -- set-installation --tenant acme --installation-id 12345678
 *   npm run github -- clear --tenant acme
 *   npm run github -- status [--tenant acme]
 *   npm run github -- set-preset --tenant acme --name services < preset.json
 *   npm run github -- delete-preset --tenant acme --name services
 *   printf %s "$SECRET" | npm run github -- set-webhook-secret --tenant acme
 *   npm run github -- deliveries [--tenant acme] [--status failed]
 *   npm run github -- replay --delivery <X-GitHub-Delivery id> [--tenant acme]
 * Local D1 by default; --remote targets the deployed database. Tokens are read from stdin only
 * (never argv, which other users and shell history can see) and stored encrypted with
 * GITHUB_CREDENTIALS_KEY: from the environment (required with --remote, the same value as the
 * Worker secret) or, locally, the development key that `npm start` also uses.
 */
import { parseArgs } from "node:util";
import { clearSql, deletePresetSql, replaySql, setInstallationSql, setPresetSql, setTokenSql, setWebhookSecretSql } from "../src/git/operator";
import { tenantIdSql } from "../src/auth/provision";
import { SLUG } from "../src/auth/provision";
import { localCredentialsKey } from "./credentials-key";
import { executeSql, querySql, type Target } from "./wrangler";

const USAGE = `usage (add --remote for the deployed database, --persist-to <dir> for another local state):
  npm run github -- set-token --tenant <slug>            (the token on stdin)
  npm run github -- set-installation --tenant <slug> --installation-id <id>
  npm run github -- clear --tenant <slug>
  npm run github -- status [--tenant <slug>]
  npm run github -- set-preset --tenant <slug> --name <name>   (JSON {nestedRoots?, parityPairs?, workspaceRootHint?} on stdin)
  npm run github -- delete-preset --tenant <slug> --name <name>
  npm run github -- set-webhook-secret --tenant <slug>   (the secret on stdin)
  npm run github -- deliveries [--tenant <slug>] [--status pending|processing|processed|ignored|failed|duplicate]
  npm run github -- replay --delivery <id> [--tenant <slug>]`;

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Paste the value, then press Ctrl-D:\n");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

async function tenantId(slug: string | undefined, target: Target): Promise<string> {
  if (!slug) throw new Error(`--tenant is required\n${USAGE}`);
  const rows = await querySql<{ id: string }>(tenantIdSql(slug), target);
  if (!rows[0]) throw new Error(`no tenant '${slug}'${target.remote ? " in the deployed database" : " locally"}; create it with npm run keys -- create --tenant ${slug} --actor <name>`);
  return rows[0].id;
}

async function credentialsKey(target: Target): Promise<string> {
  const fromEnv = process.env.GITHUB_CREDENTIALS_KEY;
  if (fromEnv) return fromEnv;
  if (target.remote) throw new Error("set GITHUB_CREDENTIALS_KEY in the environment to the value of the deployed Worker's secret");
  return localCredentialsKey();
}

export async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tenant: { type: "string" },
      "installation-id": { type: "string" },
      name: { type: "string" },
      delivery: { type: "string" },
      status: { type: "string" },
      remote: { type: "boolean", default: false },
      "persist-to": { type: "string" },
    },
  });
  const target: Target = { remote: values.remote, persistTo: values["persist-to"] };
  const where = values.remote ? "remote" : "local";
  switch (positionals[0]) {
    case "set-token": {
      const id = await tenantId(values.tenant, target);
      const token = await readStdin();
      if (!token) throw new Error("no token on stdin");
      await executeSql([await setTokenSql(id, token, await credentialsKey(target))], target);
      console.log(`Stored an encrypted GitHub token for tenant '${values.tenant}' (${where}).`);
      return;
    }
    case "set-installation": {
      const id = await tenantId(values.tenant, target);
      await executeSql([setInstallationSql(id, values["installation-id"] ?? "")], target);
      console.log(`Tenant '${values.tenant}' now uses GitHub App installation ${values["installation-id"]} (${where}); the server needs GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY.`);
      return;
    }
    case "clear": {
      const id = await tenantId(values.tenant, target);
      await executeSql([clearSql(id)], target);
      console.log(`Removed the GitHub credentials of tenant '${values.tenant}' (${where}).`);
      return;
    }
    case "status": {
      if (values.tenant && !SLUG.test(values.tenant)) throw new Error("--tenant must be a slug");
      const rows = await querySql<Record<string, string>>(
        `SELECT t.slug AS tenant, c.kind, c.installation_id, c.updated_at,
           (SELECT COUNT(*) FROM git_presets p WHERE p.tenant_id = t.id) AS presets
         FROM tenants t LEFT JOIN github_credentials c ON c.tenant_id = t.id
         ${values.tenant ? `WHERE t.slug = '${values.tenant}'` : ""} ORDER BY t.slug`,
        target,
      );
      console.table(rows);
      return;
    }
    case "set-preset": {
      const id = await tenantId(values.tenant, target);
      if (!values.name) throw new Error(`--name is required\n${USAGE}`);
      await executeSql([setPresetSql(id, values.name, await readStdin())], target);
      console.log(`Stored preset '${values.name}' for tenant '${values.tenant}' (${where}).`);
      return;
    }
    case "delete-preset": {
      const id = await tenantId(values.tenant, target);
      await executeSql([deletePresetSql(id, values.name ?? "")], target);
      console.log(`Deleted preset '${values.name}' of tenant '${values.tenant}' (${where}).`);
      return;
    }
    case "set-webhook-secret": {
      const id = await tenantId(values.tenant, target);
      const secret = await readStdin();
      if (!secret) throw new Error("no secret on stdin");
      await executeSql([await setWebhookSecretSql(id, secret, await credentialsKey(target))], target);
      console.log(`Stored the webhook secret of tenant '${values.tenant}' (${where}); its repositories' webhooks go to /webhooks/github/${values.tenant}.`);
      return;
    }
    case "deliveries": {
      if (values.tenant && !SLUG.test(values.tenant)) throw new Error("--tenant must be a slug");
      if (values.status && !/^[a-z]{1,20}$/.test(values.status)) throw new Error("--status must be a delivery status");
      const filters = [values.tenant ? `t.slug = '${values.tenant}'` : "", values.status ? `d.status = '${values.status}'` : ""].filter(Boolean);
      console.table(
        await querySql<Record<string, string>>(
          `SELECT d.delivery_id, coalesce(t.slug, '') AS tenant, d.event, d.action, d.repository, d.status, d.attempts, d.error, d.received_at
         FROM webhook_deliveries d LEFT JOIN tenants t ON t.id = d.tenant_id ${filters.length ? `WHERE ${filters.join(" AND ")}` : ""}
         ORDER BY d.received_at DESC LIMIT 50`,
          target,
        ),
      );
      return;
    }
    case "replay": {
      const id = values.tenant ? await tenantId(values.tenant, target) : undefined;
      const rows = await querySql<{ tenant_id: string; event: string }>(replaySql(values.delivery ?? "", id), target);
      if (rows.length === 0) throw new Error(`no stored delivery '${values.delivery}' with a kept payload${values.tenant ? ` for tenant '${values.tenant}'` : ""}`);
      console.log(`Queued ${rows.length} delivery(ies) (${rows.map((r) => r.event).join(", ")}); the next webhook_retry cron run processes them (${where}).`);
      return;
    }
    default:
      throw new Error(USAGE);
  }
}

main(process.argv.slice(2)).catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
