/** The checks run before a grammar gets a text: what its parse and queries would cost. */
import { MAX_NESTING_WORK, MAX_SYNTAX_CHARS } from "./limits";

/** Bracket depth summed over the text: what the queries will cost, estimated in one pass. */
export function nestingWork(text: string): number {
  let depth = 0;
  let work = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) depth++;
    else if ((c === 41 || c === 93 || c === 125) && depth > 0) depth--;
    work += depth;
  }
  return work;
}

/** Why a text is too costly for its grammar, or undefined when the grammar may read it. */
export function syntaxRefusal(text: string): { reason: "size" | "nesting"; note: string } | undefined {
  if (text.length > MAX_SYNTAX_CHARS) return { reason: "size", note: `the text is over ${MAX_SYNTAX_CHARS} characters, the grammar's size limit` };
  if (nestingWork(text) > MAX_NESTING_WORK) {
    return { reason: "nesting", note: `brackets nest too deep for the syntax queries' work limit (${MAX_NESTING_WORK})` };
  }
  return undefined;
}
