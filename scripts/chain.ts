/**
 * Verify the tamper-evident log (seed 000's `selvedge verify`): `npm run chain -- verify [--tenant acme]`
 * walks each tenant's hash chain over change events and decisions and prints the first broken link.
 * Exits 1 when a chain is broken. Works on local D1 by default; `--remote` targets the deployed database.
 */
import { parseArgs } from "node:util";
import { SLUG } from "../src/auth/provision";
import { verifyChain, type SqlReader } from "../src/changes/chain";
import { querySql, type Target } from "./wrangler";

const USAGE = `usage:
  npm run chain -- verify [--tenant <slug>] [--remote] [--persist-to <dir>]`;

/** Entries per wrangler round trip. */
const PAGE = 5000;

/** SQL with its `?` placeholders replaced by literals: wrangler's d1 execute takes no bindings. */
function inlineSql(sql: string, params: unknown[]): string {
  let i = 0;
  return sql.replace(/\?/g, () => {
    const v = params[i++];
    if (v === null || v === undefined) return "NULL";
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
    return `'${String(v).replace(/'/g, "''")}'`;
  });
}

const wranglerReader = (target: Target): SqlReader => ({ all: (sql, params) => querySql(inlineSql(sql, params), target) });

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { tenant: { type: "string" }, remote: { type: "boolean", default: false }, "persist-to": { type: "string" } },
  });
  if (positionals[0] !== "verify") throw new Error(USAGE);
  if (values.tenant && !SLUG.test(values.tenant)) throw new Error("--tenant must be a slug");
  const target: Target = { remote: values.remote, persistTo: values["persist-to"] };
  const reader = wranglerReader(target);
  const tenants = await reader.all<{ id: string; slug: string }>(`SELECT id, slug FROM tenants ${values.tenant ? "WHERE slug = ?" : ""} ORDER BY slug`, values.tenant ? [values.tenant] : []);
  if (values.tenant && tenants.length === 0) throw new Error(`no tenant '${values.tenant}'${values.remote ? " in the deployed database" : " locally"}`);
  let broken = 0;
  for (const t of tenants) {
    let after = 0;
    let checked = 0;
    for (;;) {
      const r = await verifyChain(reader, t.id, { after, limit: PAGE });
      checked += r.checked;
      if (r.first_break) {
        broken++;
        const where = r.first_break.position === null ? "" : ` at chain position ${r.first_break.position}`;
        console.log(`${t.slug}: BROKEN${where} (${r.first_break.reason}): ${r.first_break.message}`);
        break;
      }
      if (r.next_position === undefined) {
        const legacy = r.unchained_legacy ? `; ${r.unchained_legacy} row(s) from before the chain not chained yet (the nightly sweep chains them)` : "";
        console.log(`${t.slug}: intact, ${checked} link(s)${legacy}`);
        break;
      }
      after = r.next_position;
    }
  }
  return broken > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err.message);
    process.exit(2);
  },
);
