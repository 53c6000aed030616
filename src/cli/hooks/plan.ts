/**
 * `agent-ledger hooks install|uninstall`, as pure planners: given the client, the options and the
 * settings file's current text (null when it does not exist), the file's path and its text before
 * and after. The caller shows the diff (--dry-run) or writes `after`; `after === before` means
 * nothing to do, and `after === null` means the file held nothing but our hooks and goes.
 */
import { settingsPath, specOf, type HookClient, type PlanOptions } from "./clients";
import { oursIn, parseSettings, serialise, withoutOurs, withOurs } from "./settings";

export interface HookPlan {
  path: string;
  before: string | null;
  after: string | null;
}

/** Our hooks, written once: an install that finds them already as it would write them changes nothing. */
export function planInstall(client: HookClient, options: PlanOptions, currentText: string | null): HookPlan {
  const spec = specOf(client);
  const path = settingsPath(client, options);
  const doc = parseSettings(path, currentText);
  const entries = spec.entries(options);
  if (currentText !== null && JSON.stringify(oursIn(doc, spec.layout)) === JSON.stringify(entries)) return { path, before: currentText, after: currentText };
  const base = currentText === null || Object.keys(doc).length === 0 ? { ...spec.skeleton } : withoutOurs(doc, spec.layout).doc;
  return { path, before: currentText, after: serialise(withOurs(base, entries, spec.layout)) };
}

/** Exactly the handlers we wrote go; the user's own hooks and keys stay. */
export function planUninstall(client: HookClient, options: Pick<PlanOptions, "scope" | "cwd" | "home">, currentText: string | null): HookPlan {
  const spec = specOf(client);
  const path = settingsPath(client, options);
  if (currentText === null) return { path, before: null, after: null };
  const { doc, removed } = withoutOurs(parseSettings(path, currentText), spec.layout);
  if (!removed) return { path, before: currentText, after: currentText };
  // A file left with nothing but what a new file starts with was ours alone.
  const leftover = Object.keys(doc).filter((k) => !(k in spec.skeleton && doc[k] === spec.skeleton[k]));
  return { path, before: currentText, after: leftover.length === 0 ? null : serialise(doc) };
}
