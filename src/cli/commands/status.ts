/** `status` and `stale`: a person's look at where they stand, from the same tools an agent calls. */
import type { Envelope, Ledger } from "../connection";
import { EXIT, printResult, type Out } from "../output";

type Row = Record<string, unknown>;
const rows = (v: unknown): Row[] => (Array.isArray(v) ? (v as Row[]) : []);
const section = (v: unknown): { count: number; items: Row[] } => {
  const o = (v ?? {}) as Row;
  return { count: Number(o.count ?? o.unread_count ?? o.open_count ?? 0), items: rows(o.items) };
};

/** whoami's answer as a person reads it: who, what they hold and until when, what waits for them. */
export function digest(url: string, w: Envelope): string {
  const actor = (w.actor ?? {}) as Row;
  const tenant = (w.tenant ?? {}) as Row;
  const lines = [`${actor.display_name ?? "?"} (${actor.kind ?? "?"}) on ${url}, tenant ${tenant.slug ?? "?"}`];
  // Overseer messages are notices of kind "overseer", which whoami lists first: they lead here too.
  const overseer = section(w.notifications).items.filter((n) => n.kind === "overseer");
  if (overseer.length) {
    lines.push("", `From the overseer (${overseer.length}):`);
    for (const m of overseer.slice(0, 5)) lines.push(`  ! ${String(m.summary ?? "").slice(0, 200)}`);
  }
  const tasks = rows(w.open_tasks);
  lines.push("", `Open tasks (${tasks.length}):`);
  for (const t of tasks) {
    const lease = t.lease_expires_at ? `, lease until ${t.lease_expires_at}` : "";
    lines.push(`  ${t.ref} [P${t.priority}] ${t.title} (${t.status}${t.state === "blocked" ? ", blocked" : ""}${lease})`);
  }
  if (!tasks.length) lines.push("  (none)");
  const inbox = section(w.inbox);
  const waiting = section(w.handoffs_waiting);
  const notices = section(w.notifications);
  const mentions = section(w.mentions);
  lines.push("", `Inbox: ${inbox.count} handoff(s), ${waiting.count} waiting on you`);
  for (const h of waiting.items.slice(0, 10)) lines.push(`  ${h.kind}: ${h.title} (${h.status}, since ${h.created_at})`);
  lines.push(`Unread notices: ${notices.count}${mentions.count ? `, ${mentions.count} mention(s)` : ""}`);
  for (const n of notices.items.slice(0, 10)) lines.push(`  ${n.kind}: ${String(n.summary ?? "").slice(0, 160)} (${n.created_at})`);
  const decisions = rows(w.recent_decisions);
  if (decisions.length) {
    lines.push("", "Recent decisions:");
    for (const d of decisions.slice(0, 5)) lines.push(`  ${d.title} (${d.status}, ${d.at})`);
  }
  const next = (((w.hints ?? {}) as Row).next as string[] | undefined) ?? [];
  if (next.length) lines.push("", "Next:", ...next.map((n) => `  ${n}`));
  return lines.join("\n");
}

export async function status(ledger: Ledger, out: Out): Promise<number> {
  const { envelope, text } = await ledger.call("whoami", {});
  if (!envelope.ok || out.json) return printResult(out, envelope, text);
  out.stdout(digest(ledger.url, envelope));
  return EXIT.ok;
}

export async function stale(ledger: Ledger, out: Out, args: Record<string, unknown>): Promise<number> {
  const { envelope, text } = await ledger.call("stale_decisions", args);
  return printResult(out, envelope, text);
}
