/**
 * The daily stale-decision sweep: the change ledger's stale_decisions rules, run for every tenant,
 * with a notification to whoever logged each decision. Nobody has to remember to ask.
 */
import { evaluateStaleDecisions, type StaleDecision } from "../changes/stale-decisions";
import { and, eq, gt, inArray } from "drizzle-orm";
import { dbOf, jsonValues } from "../db/client";
import { iso } from "../core/time";
import { deliverNotices } from "../work/collab/inbox";
import { actors, tenants as tenantsTable } from "../db/schema";
import { readCursor, saveCursor } from "./cursor";

export const STALE_SWEEP_JOB = "stale_decision_sweep";

export interface SweepLimits {
  tenants: number;
  notices: number;
}

/** Sized so one run stays well inside a scheduled invocation's time and D1 query budget. */
export const SWEEP_LIMITS: SweepLimits = { tenants: 50, notices: 500 };

/** The rules already cap what they examine per tenant; asking for more than that changes nothing. */
const DECISIONS_PER_TENANT = 1000;

interface Notice {
  actorId: string;
  decision: StaleDecision;
}

export async function sweepStaleDecisions(d1: D1Database, now: Date, limits: SweepLimits = SWEEP_LIMITS): Promise<string> {
  const after = (await readCursor(d1, STALE_SWEEP_JOB)) ?? "";
  const tenants = await dbOf({ d1 }).select({ id: tenantsTable.id }).from(tenantsTable).where(gt(tenantsTable.id, after)).orderBy(tenantsTable.id).limit(limits.tenants).all();
  // The day is part of the key: a decision still stale tomorrow is worth one more notice tomorrow.
  const day = iso(now).slice(0, 10);
  let budget = limits.notices;
  let cursor = after;
  let swept = 0;
  let stale = 0;
  let sent = 0;
  let deferred = false;
  for (const [index, { id: tenantId }] of tenants.entries()) {
    const decisions = await evaluateStaleDecisions({ d1, tenantId, actorId: "", now }, { limit: DECISIONS_PER_TENANT });
    const notices = await addressNotices(d1, tenantId, decisions);
    const fits = notices.slice(0, budget);
    sent += await insertNotices(d1, tenantId, fits, now, day);
    budget -= fits.length;
    stale += decisions.length;
    if (fits.length < notices.length) {
      deferred = true;
      // Resume this tenant next run (dedupe skips what was sent), unless it alone overflows a whole
      // run's budget: then moving on is the only way the tenants after it are ever swept.
      if (index === 0) {
        cursor = tenantId;
        swept++;
      }
      break;
    }
    cursor = tenantId;
    swept++;
  }
  // A short page means the last tenant was reached: the next run starts again from the first.
  const wrapped = !deferred && tenants.length < limits.tenants;
  await saveCursor(d1, STALE_SWEEP_JOB, wrapped ? "" : cursor, iso(now));
  const rest = wrapped ? "all tenants swept" : "more tenants next run";
  return `${swept} tenant(s) swept, ${stale} stale decision(s), ${sent} notification(s) sent; ${rest}`;
}

/**
 * A decision's notice goes to the actor whose key logged it (`actor`, not the agent name the
 * client gave); a decision with no such actor (imports) has nobody to notify.
 */
async function addressNotices(d1: D1Database, tenantId: string, decisions: StaleDecision[]): Promise<Notice[]> {
  if (decisions.length === 0) return [];
  const names = [...new Set(decisions.map((d) => d.actor).filter((a) => a !== ""))];
  const results = await dbOf({ d1 })
    .select({ id: actors.id, name: actors.name })
    .from(actors)
    .where(and(eq(actors.tenantId, tenantId), inArray(actors.name, jsonValues(names))))
    .all();
  const byName = new Map(results.map((r) => [r.name, r.id]));
  return decisions.flatMap((decision) => {
    const actorId = byName.get(decision.actor);
    return actorId ? [{ actorId, decision }] : [];
  });
}

async function insertNotices(d1: D1Database, tenantId: string, notices: Notice[], now: Date, day: string): Promise<number> {
  return deliverNotices(
    { d1, tenantId, clock: { now: () => now } },
    notices.map(({ actorId, decision }) => ({
      actorId,
      kind: "stale_decision",
      objectType: "change_event",
      objectId: decision.id,
      summary: `${decision.entity_path}: ${decision.stale_reason}`.slice(0, 200),
      fromActorId: "",
      dedupeKey: `stale_decision:${decision.id}:${day}`,
    })),
  );
}
