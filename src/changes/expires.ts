/**
 * `expires_when`: a closed grammar saying when a decision stops holding.
 *   library:NAME>=VERSION   a dependency reaching a version
 *   entity:PATH:changes     any later change to PATH (exact or dotted prefix)
 *   date:YYYY-MM-DD[Thh:mm…] a point in time
 *   manual:LABEL            a condition only a person can judge; never fires by itself
 */
import { ToolError } from "../core/errors";
import { iso, parseIsoInstant } from "../core/time";
import { canonicalPath } from "./paths";

export type ExpiresCondition = { kind: "library"; name: string; version: string } | { kind: "entity"; path: string } | { kind: "date"; at: string } | { kind: "manual"; label: string };

const FORMS_HINT = "Use one of: 'library:NAME>=VERSION' (e.g. library:stripe>=9.0), 'entity:PATH:changes' (e.g. entity:users.email:changes), 'date:YYYY-MM-DD', 'manual:LABEL'.";

const LIBRARY = /^library:([A-Za-z0-9@][A-Za-z0-9@/._-]*)\s*>=\s*(\d+(?:\.\d+)*)$/;

export function parseExpiresWhen(raw: string): ExpiresCondition {
  const text = raw.trim();
  const fail = (why: string) => new ToolError("invalid_expires_when", `could not parse expires_when '${raw}': ${why}`, { hint: FORMS_HINT });
  const colon = text.indexOf(":");
  const kind = colon > 0 ? text.slice(0, colon).toLowerCase() : "";
  const body = colon > 0 ? text.slice(colon + 1) : "";
  switch (kind) {
    case "library": {
      const m = LIBRARY.exec(`library:${body.trim()}`);
      if (!m) throw fail("expected library:NAME>=VERSION with a dotted-numeric version");
      return { kind: "library", name: m[1]!, version: m[2]! };
    }
    case "entity": {
      if (!body.endsWith(":changes")) throw fail("expected entity:PATH:changes");
      const path = canonicalPath(body.slice(0, -":changes".length));
      if (path === "") throw fail("the entity path is empty");
      return { kind: "entity", path };
    }
    case "date": {
      const at = parseIsoInstant(body);
      if (!at) throw fail("expected date:YYYY-MM-DD or an ISO-8601 date-time");
      return { kind: "date", at: iso(at) };
    }
    case "manual": {
      if (body.trim() === "") throw fail("the manual label is empty");
      return { kind: "manual", label: body.trim() };
    }
    default:
      throw fail("unknown form");
  }
}

/** The stored, canonical spelling of a condition. */
export function formatExpiresWhen(c: ExpiresCondition): string {
  switch (c.kind) {
    case "library":
      return `library:${c.name}>=${c.version}`;
    case "entity":
      return `entity:${c.path}:changes`;
    case "date":
      return `date:${c.at}`;
    case "manual":
      return `manual:${c.label}`;
  }
}
