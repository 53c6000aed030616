/**
 * Advisory checks on a change before it is written. Warnings never block the write; they
 * tell the agent what to improve next time. Secret warnings name the kind, never the text.
 */
import { secretKinds } from "../core/secrets";
import type { ChangeType, EntityType } from "./vocab";

export const DIFF_MAX_BYTES = 65_536;
export const REASONING_MAX_BYTES = 32_768;

/** Cuts text to at most `maxBytes` of UTF-8 (never inside a character) and says so in the text. */
export function boundText(text: string, maxBytes: number, field: string): { text: string; warning?: string } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return { text };
  let cut = maxBytes;
  // Step back over UTF-8 continuation bytes so the cut lands on a character boundary.
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
  const kept = new TextDecoder().decode(bytes.subarray(0, cut));
  const droppedKb = Math.ceil((bytes.length - cut) / 1024);
  return {
    text: `${kept}…[truncated ${droppedKb}KB]`,
    warning: `${field} truncated to ${Math.floor(maxBytes / 1024)}KB (was ${Math.ceil(bytes.length / 1024)}KB); the stored text ends with a truncation marker`,
  };
}

const GENERIC_REASONING = /^(?:user request|as requested|per request|done|updated?|changed?|fix(?:ed)?|add(?:ed)?|removed?|n\/a|na|none|todo|see (?:diff|code|pr))[.!]?$/i;
const ALTERNATIVE_MARKER = /\b(?:instead|went with|chose|chosen|opted|in favou?r of|rather than|picked|alternative)\b/i;
const REVISIT_CHANGES: ReadonlySet<string> = new Set(["add", "modify", "create", "migrate"]);
const REVISIT_ENTITIES: ReadonlySet<string> = new Set(["table", "schema", "dependency", "config"]);

export interface WarningInput {
  entityPath: string;
  entityType: EntityType;
  changeType: ChangeType;
  reasoning: string;
  diff: string;
  revisitAfter: string;
  expiresWhen: string;
  staleWhen: string;
}

/** Warnings for secret-shaped text in a change's diff or reasoning (the kind, never the text). */
export function secretWarnings(c: Pick<WarningInput, "diff" | "reasoning">): string[] {
  const out: string[] = [];
  for (const [field, text] of [
    ["diff", c.diff],
    ["reasoning", c.reasoning],
  ] as const) {
    const kinds = secretKinds(text);
    if (kinds.length > 0) {
      out.push(`${field} looks like it contains a secret (${kinds.join(", ")}); it was stored as given: rotate it if it is real and log the change again without it`);
    }
  }
  return out;
}

/** The advisory warnings for a change, in the seed's order (truncation warnings come first, from the caller). */
export function changeWarnings(c: WarningInput): string[] {
  const out = secretWarnings(c);

  const reasoning = c.reasoning.trim();
  if (reasoning === "") {
    out.push("reasoning is empty: record why this change was made, not just what changed");
  } else {
    if (reasoning.length < 20) out.push(`reasoning very short (${reasoning.length} chars): say why, so the next agent can judge the change`);
    if (GENERIC_REASONING.test(reasoning)) out.push(`reasoning is generic ('${reasoning}'): say why this change was made`);
  }

  if (c.changeType === "reject" && reasoning !== "" && !ALTERNATIVE_MARKER.test(reasoning)) {
    out.push("reject without an alternative: say what was chosen instead (e.g. 'went with X rather than Y')");
  }

  if (c.entityType === "function" && !c.entityPath.includes("::")) {
    out.push(`entity_path '${c.entityPath}' is a function without '::' (expected file::function, e.g. src/auth.py::login)`);
  } else if (c.entityType === "class" && !c.entityPath.includes("::")) {
    out.push(`entity_path '${c.entityPath}' is a class without '::' (expected file::Class)`);
  } else if (c.entityType === "column" && !c.entityPath.includes(".")) {
    out.push(`entity_path '${c.entityPath}' is a column without '.' (expected table.column, e.g. users.email)`);
  } else if (c.entityType === "file" && !c.entityPath.includes("/") && !/\.[A-Za-z0-9]+$/.test(c.entityPath)) {
    out.push(`entity_path '${c.entityPath}' is a file with neither a directory nor an extension`);
  }

  if (REVISIT_CHANGES.has(c.changeType) && REVISIT_ENTITIES.has(c.entityType) && c.revisitAfter === "") {
    out.push(`consider revisit_after (e.g. '90d') so this ${c.entityType} decision comes back for review`);
  }
  if ((c.changeType === "reject" || c.changeType === "revert") && c.staleWhen === "" && c.expiresWhen === "") {
    out.push("consider expires_when or stale_when, so this rejection is reconsidered when circumstances change");
  }
  return out;
}
