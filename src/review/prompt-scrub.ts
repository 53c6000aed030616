/**
 * Masks secret-shaped text before anything is put in a prompt. A stand-in until
 * src/review/secrets.ts (the review toolset's own ruleset) lands with the same signature; it
 * reuses the registry's masking meanwhile, so the callers need no change when it is switched.
 */
import { maskText } from "../mcp/secrets";

/** `text` with secrets masked, and the kinds found (never the values). */
export function scrubForPrompt(text: string): { text: string; found: string[] } {
  const masked = maskText(text);
  return { text: masked.text, found: masked.kinds };
}
