/**
 * The nightly check of every tenant's tamper-evident log (src/changes/chain.ts). A run checks a
 * bounded number of chain entries and keeps its place in cron_cursors, so a large ledger is
 * covered over several nights and then checked again from the start. Before walking a tenant's
 * chain from the start it chains that tenant's rows from before the chain existed.
 */
import { chainLegacyRows, d1Reader, verifyChain, type ChainBreak } from "../changes/chain";
import { gt, gte } from "drizzle-orm";
import { dbOf } from "../db/client";
import { tenants as tenantsTable } from "../db/schema";
import { iso } from "../core/time";
import { readCursor, saveCursor } from "./cursor";

export const CHAIN_SWEEP_JOB = "ledger_chain_verify";

export interface ChainSweepLimits {
  /** Chain entries checked per run, across tenants. */
  entries: number;
  /** Rows from before the chain chained per tenant per run. */
  legacy: number;
  tenants: number;
}

export const CHAIN_SWEEP_LIMITS: ChainSweepLimits = { entries: 20_000, legacy: 2000, tenants: 50 };
const PAGE = 2000;

/** Where the sweep stopped: inside a tenant's chain (after `pos`), or past it (`pos` -1). */
interface Place {
  tenant: string;
  pos: number;
}

function parsePlace(text: string | undefined): Place {
  const m = /^(.*):(-?\d+)$/.exec(text ?? "");
  return m ? { tenant: m[1]!, pos: Number(m[2]) } : { tenant: "", pos: -1 };
}

export async function sweepChains(d1: D1Database, now: Date, limits: ChainSweepLimits = CHAIN_SWEEP_LIMITS): Promise<string> {
  const at = iso(now);
  const start = parsePlace(await readCursor(d1, CHAIN_SWEEP_JOB));
  const tenants = await dbOf({ d1 })
    .select({ id: tenantsTable.id })
    .from(tenantsTable)
    .where((start.pos < 0 ? gt : gte)(tenantsTable.id, start.tenant))
    .orderBy(tenantsTable.id)
    .limit(limits.tenants)
    .all();
  let budget = limits.entries;
  let place: Place = start;
  let checked = 0;
  let chained = 0;
  let finished = 0;
  const broken: Array<{ tenant: string; at: ChainBreak }> = [];
  for (const { id: tenant } of tenants) {
    if (budget <= 0) break;
    let after = tenant === start.tenant && start.pos >= 0 ? start.pos : 0;
    if (after === 0) chained += await chainLegacyRows(d1, tenant, at, limits.legacy);
    for (;;) {
      const r = await verifyChain(d1Reader(d1), tenant, { after, limit: Math.min(PAGE, budget) });
      budget -= r.checked;
      checked += r.checked;
      if (r.first_break) broken.push({ tenant, at: r.first_break });
      if (r.first_break || r.next_position === undefined) {
        place = { tenant, pos: -1 };
        finished++;
        break;
      }
      after = r.next_position;
      place = { tenant, pos: after };
      if (budget <= 0) break;
    }
  }
  // A short page of tenants, all finished, means the last tenant was reached: start over next run.
  const last = tenants[tenants.length - 1]?.id;
  const wrapped = tenants.length < limits.tenants && (last === undefined || (place.tenant === last && place.pos === -1));
  await saveCursor(d1, CHAIN_SWEEP_JOB, wrapped ? "" : `${place.tenant}:${place.pos}`, at);
  const summary = `${finished} tenant chain(s) verified, ${checked} link(s) checked, ${chained} earlier row(s) chained; ${wrapped ? "all tenants swept" : "more next run"}`;
  if (broken.length > 0) {
    for (const b of broken) console.error(`[ledger chain] BROKEN tenant ${b.tenant}: ${b.at.message}`);
    // Failing the job makes the scheduled run's report show it, beside the per-tenant lines above.
    throw new Error(`TAMPER-EVIDENT LOG BROKEN in ${broken.length} tenant(s): ${broken.map((b) => `${b.tenant} (${b.at.reason} ${b.at.kind} ${b.at.row_id})`).join(", ")}; ${summary}`);
  }
  return summary;
}
