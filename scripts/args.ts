/**
 * Command-line parsing for the operator scripts. node:util's parseArgs refuses `--grant -Ab3…` as
 * ambiguous, yet ids the provider mints may begin with '-', and an operator pastes them as listed.
 * A string option takes the next word as its value unless that word is itself a `--` option.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

export function attachValues(argv: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const name = word.startsWith("--") && !word.includes("=") ? word.slice(2) : undefined;
    const next = argv[i + 1];
    if (name && options[name]?.type === "string" && next !== undefined && next.startsWith("-") && !next.startsWith("--")) {
      out.push(`${word}=${next}`);
      i++;
    } else out.push(word);
  }
  return out;
}

export function parseCommand<O extends Options>(argv: string[], options: O) {
  return parseArgs({ args: attachValues(argv, options), allowPositionals: true, options });
}
