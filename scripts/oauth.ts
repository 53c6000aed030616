/**
 * OAuth operator commands (docs/operations.md: OAuth in production):
 * `npm run oauth -- map-github --login octocat --tenant acme --actor alice [--operator]`,
 * `npm run oauth -- unmap-github --login octocat`, `npm run oauth -- github-users [--tenant acme]`,
 * `npm run oauth -- grants --tenant acme`, `npm run oauth -- revoke --tenant acme --grant <grant id>`.
 * Works on local D1 by default; `--remote` targets the deployed database.
 * `npm run oauth -- create-client --url <server> --name <text> --redirect-uri <uri> [--confidential]`
 * pre-registers a client through the running server (POST /oauth/clients), with the operator key in
 * AGENT_LEDGER_OPERATOR_KEY: the provider's client records live in KV, behind the Worker.
 */
import { listGithubSql, listGrantsSql, mapGithubSql, revokeGrantSql, unmapGithubSql } from "../src/auth/oauth-admin";
import { parseCommand } from "./args";
import { executeSql, querySql, type Target } from "./wrangler";

const USAGE = `usage:
  npm run oauth -- map-github --login <github login> --tenant <slug> --actor <slug> [--operator] [--remote] [--persist-to <dir>]
  npm run oauth -- unmap-github --login <github login> [--remote] [--persist-to <dir>]   (also revokes the grants it signed in)
  npm run oauth -- github-users [--tenant <slug>] [--remote] [--persist-to <dir>]
  npm run oauth -- grants --tenant <slug> [--remote] [--persist-to <dir>]
  npm run oauth -- revoke --tenant <slug> --grant <grant id> [--remote] [--persist-to <dir>]
  npm run oauth -- create-client --url <server origin> --name <client name> --redirect-uri <uri> [--redirect-uri <uri> …] [--confidential]
    (an operator API key in the environment variable AGENT_LEDGER_OPERATOR_KEY)
  The actor must exist (npm run keys -- create makes tenants and actors).`;

export async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseCommand(argv, {
    login: { type: "string" },
    tenant: { type: "string" },
    actor: { type: "string" },
    grant: { type: "string" },
    operator: { type: "boolean", default: false },
    remote: { type: "boolean", default: false },
    "persist-to": { type: "string" },
    quiet: { type: "boolean", default: false },
    url: { type: "string" },
    name: { type: "string" },
    "redirect-uri": { type: "string", multiple: true },
    confidential: { type: "boolean", default: false },
  });
  const target: Target = { remote: values.remote, persistTo: values["persist-to"] };
  const where = values.remote ? " (remote)" : " (local)";
  const say = (text: string) => {
    if (!values.quiet) console.log(text);
  };
  switch (positionals[0]) {
    case "create-client": {
      const key = process.env.AGENT_LEDGER_OPERATOR_KEY;
      if (!values.url || !values.name || !values["redirect-uri"]?.length || !key) {
        throw new Error(`create-client needs --url, --name, --redirect-uri and an operator key in AGENT_LEDGER_OPERATOR_KEY\n${USAGE}`);
      }
      const res = await fetch(new URL("/oauth/clients", values.url), {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify({ client_name: values.name, redirect_uris: values["redirect-uri"], confidential: values.confidential }),
      });
      const answer = (await res.json()) as { ok: boolean; client_id?: string; client_secret?: string; error?: { message: string } };
      if (!answer.ok) throw new Error(`the server refused: ${answer.error?.message ?? res.status}`);
      say(`Registered '${values.name}': client_id ${answer.client_id}${answer.client_secret ? `\nclient_secret ${answer.client_secret} (shown once; store it in the client's configuration)` : ""}`);
      return;
    }
    case "map-github": {
      if (!values.login || !values.tenant || !values.actor) throw new Error(`map-github needs --login, --tenant and --actor\n${USAGE}`);
      await executeSql([mapGithubSql(values.login, values.tenant, values.actor, values.operator ? "operator" : "agent")], target);
      const mapped = await querySql<Record<string, string>>(listGithubSql(values.tenant), target);
      if (!mapped.some((m) => m.login === values.login!.toLowerCase() && m.actor === values.actor)) {
        throw new Error(`no actor '${values.actor}' in tenant '${values.tenant}'${where}: create it first (npm run keys -- create --tenant ${values.tenant} --actor ${values.actor})`);
      }
      say(`GitHub user @${values.login} now signs in as actor '${values.actor}' of tenant '${values.tenant}'${values.operator ? " with the operator role" : ""}${where}.`);
      return;
    }
    case "unmap-github": {
      if (!values.login) throw new Error(`unmap-github needs --login\n${USAGE}`);
      await executeSql(unmapGithubSql(values.login), target);
      say(`GitHub user @${values.login} can no longer sign in; the grants it made are revoked${where}.`);
      return;
    }
    case "github-users": {
      const rows = await querySql<Record<string, string>>(listGithubSql(values.tenant), target);
      if (rows.length > 0) console.table(rows);
      else say("No GitHub users are mapped.");
      return;
    }
    case "grants": {
      if (!values.tenant) throw new Error(`grants needs --tenant\n${USAGE}`);
      const rows = await querySql<Record<string, string>>(listGrantsSql(values.tenant), target);
      if (values.quiet) process.stdout.write(`${JSON.stringify(rows)}\n`);
      else if (rows.length > 0) console.table(rows);
      else console.log(`Tenant '${values.tenant}' has no OAuth grants${where}.`);
      return;
    }
    case "revoke": {
      if (!values.tenant || !values.grant) throw new Error(`revoke needs --tenant and --grant\n${USAGE}`);
      const revoked = await querySql<{ grant_id: string }>(revokeGrantSql(values.tenant, values.grant), target);
      if (revoked.length === 0) throw new Error(`no live grant '${values.grant}' in tenant '${values.tenant}'${where}`);
      say(`Revoked grant ${values.grant}${where}: its access tokens are refused from the next request, its refresh token at the next refresh.`);
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
