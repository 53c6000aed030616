/**
 * Regular expressions from callers run on re2js: linear time whatever the pattern, so a hostile
 * pattern cannot stall a Worker. A pattern RE2 cannot take is the caller's mistake: invalid_input.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from "re2js";
import { excerpt, invalidInput } from "./errors";

/** Compiles `pattern` (the value of the parameter `name`) with RE2 `flags`. */
export function compileRe2(pattern: string, flags: number, name = "pattern"): RE2JS {
  try {
    return RE2JS.compile(pattern, flags);
  } catch (err) {
    if (err instanceof RE2JSSyntaxException) {
      throw invalidInput(
        `${name} '${excerpt(pattern, 80)}' is not a valid regular expression: ${excerpt(err.getDescription(), 120)}`,
        `${name} uses RE2 syntax: no backreferences (\\1) or lookaround ((?=…), (?<=…)); escape literal metacharacters such as ( [ . * + ? with a backslash; repeat counts are at most 1000.`,
      );
    }
    if (err instanceof RE2JSException) {
      throw invalidInput(`${name} '${excerpt(pattern, 80)}' cannot be compiled: ${excerpt(err.message, 120)}`, "Simplify the pattern (fewer or smaller repetitions).");
    }
    throw err;
  }
}

/** One RE2 match, shaped like a RegExpExecArray: [whole, ...groups], undefined for a group that took no part. */
export type Re2Match = (string | undefined)[] & { index: number };

/**
 * Every match of `re` in `text`, left to right, as String.prototype.matchAll gives them; the
 * linear-time counterpart of `text.matchAll(/…/g)` for regexes run on a caller's content.
 */
export function* re2Matches(re: RE2JS, text: string): Generator<Re2Match> {
  const m = re.matcher(text);
  const groups = m.groupCount();
  while (m.find()) {
    const out = [m.group(0) ?? ""] as Re2Match;
    for (let g = 1; g <= groups; g++) out.push(m.group(g) ?? undefined);
    out.index = m.start(0);
    yield out;
  }
}

/** Compiles a fixed (not caller-supplied) RE2 pattern with `^`/`$` at line ends, the `m` flag of a JS regex. */
export const re2Lines = (pattern: string): RE2JS => RE2JS.compile(pattern, RE2JS.MULTILINE);
