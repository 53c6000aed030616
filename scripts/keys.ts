/**
 * Manage API keys: `npm run keys -- create --tenant acme --actor claude-code [--label laptop] [--operator]`,
 * `npm run keys -- list [--tenant acme]`, `npm run keys -- revoke --prefix alk_xxxxxx`, and a
 * tenant's rate limits: `npm run keys -- rate-limit --tenant acme --key-per-min 100 --tenant-per-min 1000`
 * (`--clear` drops the override; without limits it shows them).
 * Works on local D1 by default; `--remote` targets the deployed database.
 */
import { IDENTITY_CACHE_MS } from "../src/auth/identity";
import { assertSlug, provisionKey, revokeKeySql, SLUG_RULE, tenantIdSql } from "../src/auth/provision";
import { clearRateLimitSql, listRateLimitsSql, parseLimit, setRateLimitSql } from "../src/auth/rate-limits";
import { parseCommand } from "./args";
import { executeSql, querySql, type Target } from "./wrangler";

const USAGE = `usage:
  npm run keys -- create --tenant <slug> --actor <slug> [--label <text>] [--operator] [--remote] [--persist-to <dir>]
  npm run keys -- list [--tenant <slug>] [--remote] [--persist-to <dir>]
  npm run keys -- revoke --prefix <key prefix> [--remote] [--persist-to <dir>]
  npm run keys -- rate-limit --tenant <slug> [--key-per-min <n|default>] [--tenant-per-min <n|default>] [--remote] [--persist-to <dir>]
  npm run keys -- rate-limit --tenant <slug> --clear       (back to RATE_LIMIT_KEY_PER_MIN / RATE_LIMIT_TENANT_PER_MIN)
  npm run keys -- rate-limit [--tenant <slug>]             (show the overrides in force)
  A limit is requests per minute; 0 turns it off for the tenant.
  Tenant and actor names are slugs: ${SLUG_RULE} (acme, team-2, claude-code).
  A new tenant or actor is created with its first key.`;

export async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseCommand(argv, {
    tenant: { type: "string" },
    actor: { type: "string" },
    label: { type: "string", default: "" },
    operator: { type: "boolean", default: false },
    prefix: { type: "string" },
    remote: { type: "boolean", default: false },
    "persist-to": { type: "string" },
    quiet: { type: "boolean", default: false },
    "key-per-min": { type: "string" },
    "tenant-per-min": { type: "string" },
    clear: { type: "boolean", default: false },
  });
  const target: Target = { remote: values.remote, persistTo: values["persist-to"] };
  switch (positionals[0]) {
    case "create": {
      if (!values.tenant || !values.actor) throw new Error(`create needs --tenant and --actor\n${USAGE}`);
      const role = values.operator ? "operator" : "agent";
      const { key, statements } = await provisionKey(values.tenant, values.actor, new Date(), values.label, role);
      await executeSql(statements, target);
      if (values.quiet) {
        process.stdout.write(`${key}\n`);
      } else {
        console.log(`Created ${role === "operator" ? "an operator" : "an agent"} key for actor '${values.actor}' in tenant '${values.tenant}'${values.remote ? " (remote)" : " (local)"}.`);
        console.log("It is shown only this once; store it now:\n");
        console.log(`  ${key}\n`);
      }
      return;
    }
    case "list": {
      if (values.tenant) assertSlug("tenant", values.tenant);
      const rows = await querySql<Record<string, string | null>>(
        `SELECT t.slug AS tenant, a.name AS actor, k.role, k.prefix, k.label, k.created_at, k.revoked_at
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id JOIN actors a ON a.id = k.actor_id
         ${values.tenant ? `WHERE t.slug = '${values.tenant}'` : ""} ORDER BY k.created_at`,
        target,
      );
      console.table(rows);
      return;
    }
    case "revoke": {
      if (!values.prefix) throw new Error(`revoke needs --prefix\n${USAGE}`);
      await executeSql([revokeKeySql(values.prefix)], target);
      console.log(`Revoked live keys starting with ${values.prefix}.`);
      return;
    }
    case "rate-limit": {
      const keyPerMin = parseLimit("--key-per-min", values["key-per-min"]);
      const tenantPerMin = parseLimit("--tenant-per-min", values["tenant-per-min"]);
      const changing = values.clear || keyPerMin !== undefined || tenantPerMin !== undefined;
      if (changing) {
        if (!values.tenant) throw new Error(`rate-limit needs --tenant\n${USAGE}`);
        if (values.clear && (keyPerMin !== undefined || tenantPerMin !== undefined)) throw new Error("--clear takes no limits");
        const [tenant] = await querySql<{ id: string }>(tenantIdSql(values.tenant), target);
        if (!tenant) throw new Error(`no tenant '${values.tenant}'${values.remote ? " in the deployed database" : " locally"}`);
        await executeSql([values.clear ? clearRateLimitSql(tenant.id) : setRateLimitSql(tenant.id, { keyPerMin, tenantPerMin })], target);
        if (!values.quiet) {
          console.log(
            `${values.clear ? "Cleared" : "Set"} the rate limits of tenant '${values.tenant}'${values.remote ? " (remote)" : " (local)"}; ` +
              `running servers apply it within ${IDENTITY_CACHE_MS / 1000} s.`,
          );
        }
      }
      if (values.quiet) return;
      const rows = await querySql<Record<string, string>>(listRateLimitsSql(values.tenant), target);
      if (rows.length > 0) console.table(rows);
      else console.log(`No overrides${values.tenant ? ` for tenant '${values.tenant}'` : ""}: the Worker's RATE_LIMIT_KEY_PER_MIN and RATE_LIMIT_TENANT_PER_MIN apply.`);
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
