import type { AnyToolDef } from "./define-tool";

/**
 * The tools by name, for a tool that runs another it does not import (a plan step's task tools).
 * The top floor's catalog registers itself here when it loads: the ground floor never imports it,
 * so no tool module depends on the catalog having finished loading before it.
 */
let lookup: ((name: string) => AnyToolDef | undefined) | undefined;

export function registerCatalog(find: (name: string) => AnyToolDef | undefined): void {
  lookup = find;
}

/** The registered tool of this name; a missing catalog or tool is a defect, not a caller's error. */
export function toolNamed(name: string): AnyToolDef {
  if (!lookup) throw new Error(`no tool catalog is registered (looking up ${name}): load the server's registry first`);
  const def = lookup(name);
  if (!def) throw new Error(`the tool catalog has no tool ${name}`);
  return def;
}
