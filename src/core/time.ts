/**
 * Time helpers. Every stored instant is `Date#toISOString()` output: UTC, `Z`, fixed width,
 * so comparing the text compares the time.
 */
import { invalidInput } from "./errors";

/** Where "now" comes from. Services take it from their Ctx so tests can move time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const iso = (d: Date): string => d.toISOString();

const MINUTE = 60_000;
const UNIT_MS: Record<string, number> = {
  m: MINUTE,
  h: 60 * MINUTE,
  d: 24 * 60 * MINUTE,
  w: 7 * 24 * 60 * MINUTE,
  mo: 30 * 24 * 60 * MINUTE,
  mon: 30 * 24 * 60 * MINUTE,
  y: 365 * 24 * 60 * MINUTE,
};

// `m` is minutes and `mo`/`mon` months (30 days), as the seed's grammar says.
const RELATIVE = /^(\d{1,6})\s*(mon|mo|m|h|d|w|y)$/i;

/**
 * Milliseconds of a relative offset such as `15m`, `24h`, `7d`, `5mo`, `1y`, or null. A capital
 * `M` alone is refused rather than read: `6M` means six months to most people and six minutes to
 * a case-insensitive grammar, and a decision meant for half a year must not come due in minutes.
 */
export function parseOffset(text: string): number | null {
  const m = RELATIVE.exec(text.trim());
  if (!m) return null;
  if (m[2] === "M") {
    throw invalidInput(`'${text.trim()}' is ambiguous: a capital M could mean months or minutes.`, `Write ${m[1]}mo for ${m[1]} months or ${m[1]}m for ${m[1]} minutes (mo = months, m = minutes).`);
  }
  return Number(m[1]) * UNIT_MS[m[2]!.toLowerCase()]!;
}

// Dates and date-times of ISO 8601's extended form. A time without an offset is UTC.
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Parses an ISO-8601 date or date-time to an instant, or null when it is not one. */
export function parseIsoInstant(text: string): Date | null {
  const t = text.trim();
  let d: Date;
  if (ISO_DATE.test(t)) {
    d = new Date(`${t}T00:00:00.000Z`);
  } else {
    const m = ISO_DATETIME.exec(t);
    if (!m) return null;
    const [, y, mo, da, h, mi, s = "00", frac = "", zone = "Z"] = m;
    const ms = frac ? frac.slice(1, 4).padEnd(3, "0") : "000";
    const z = zone.toUpperCase() === "Z" ? "Z" : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
    d = new Date(`${y}-${mo}-${da}T${h}:${mi}:${s}.${ms}${z}`);
  }
  if (Number.isNaN(d.getTime())) return null;
  // Reject calendar overflow such as 2026-02-31, which Date would roll into March.
  const dateOnly = t.slice(0, 10);
  const check = new Date(`${dateOnly}T00:00:00.000Z`);
  if (Number.isNaN(check.getTime()) || check.toISOString().slice(0, 10) !== dateOnly) return null;
  return d;
}

/**
 * Resolves the `since` grammar (relative offset back from now, or an ISO instant).
 * Returns "" for an empty input (all time) and null when unparseable.
 */
export function resolveSince(text: string, now: Date): string | null {
  if (text.trim() === "") return "";
  const offset = parseOffset(text);
  if (offset !== null) return iso(new Date(now.getTime() - offset));
  const at = parseIsoInstant(text);
  return at ? iso(at) : null;
}
