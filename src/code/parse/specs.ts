/** The languages with a grammar, and what each grammar tells the generic passes. */
import { ecmascript } from "./grammars/ecmascript";
import { go } from "./grammars/go";
import { python } from "./grammars/python";
import type { LanguageSpec } from "./spec";

export const SPECS: Readonly<Record<string, LanguageSpec>> = {
  typescript: ecmascript("typescript"),
  tsx: ecmascript("typescript"),
  javascript: ecmascript("javascript"),
  python,
  go,
};
