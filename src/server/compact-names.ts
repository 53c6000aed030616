/**
 * What an op name means in compact mode. Several toolsets share the seeds' short names (seed 003's
 * `search`, `get`, `add`, … beside the work ledger's `search` and seed 000's `search`, `diff`, …), so
 * a name is resolved to every op it could mean on the surface: one candidate runs, several are
 * refused with the names that pick one, none is explained when the name exists on another surface.
 */
import { excerpt, ToolError } from "../core/errors";
import type { OpKind, PipelineOp } from "../core/pipeline";

/** What the resolver needs to know of an op. */
export interface NamedOp {
  pipeline: PipelineOp;
  toolset: string;
  /** One line for the op list and for a refusal that names it. */
  line: string;
  /** Names besides its own that mean it: the seed's name (docs `get` for docs_get, seed 000's `search` for change_search). */
  seedName?: string;
  /** A read that writes only bookkeeping (ToolDef.queryable): execute runs it too. */
  queryable?: boolean;
}

/** The name that means this op and nothing else: its own, or toolset.name when a bare name is shared. */
export const qualifiedName = (o: NamedOp) => `${o.toolset}.${o.pipeline.name}`;

const toolFor = (kind: OpKind) => (kind === "query" ? "query" : kind === "execute" ? "execute" : "session");

const howToCall = (o: NamedOp, name: string) =>
  o.pipeline.kind === "session" ? `session with {"action": "${name}", "params": {…}}` : `${toolFor(o.pipeline.kind)} with {"op": "${name}", "params": {…}}`;

export interface OpResolver<T extends NamedOp> {
  /** Every op a name could mean here. */
  candidates(name: string): T[];
  /** The op a name means for the asking tool; throws when it is ambiguous or belongs to another surface. */
  resolve(name: string, kind?: OpKind): PipelineOp | undefined;
}

/**
 * `elsewhere` answers for a name with no candidate here: the ops it means on the widest surface,
 * and how to reach that surface from this one.
 */
export function opResolver<T extends NamedOp>(ops: ReadonlyMap<string, T>, elsewhere: (name: string) => { ops: NamedOp[]; reach: (o: NamedOp) => string }): OpResolver<T> {
  const bySeedName = new Map<string, T[]>();
  const byQualified = new Map<string, T>();
  for (const o of ops.values()) {
    if (o.seedName && o.seedName !== o.pipeline.name) (bySeedName.get(o.seedName) ?? bySeedName.set(o.seedName, []).get(o.seedName)!).push(o);
    byQualified.set(qualifiedName(o), o);
    if (o.seedName) byQualified.set(`${o.toolset}.${o.seedName}`, o);
  }
  const candidates = (name: string): T[] => {
    const exact = ops.get(name) ?? byQualified.get(name);
    return [...new Set([...(exact ? [exact] : []), ...(bySeedName.get(name) ?? [])])];
  };
  // How to name one candidate so that nothing else answers to it.
  const unique = (o: NamedOp) => (candidates(o.pipeline.name).length === 1 ? o.pipeline.name : qualifiedName(o));
  return {
    candidates,
    resolve(name, kind) {
      const found = candidates(name);
      const shown = excerpt(name, 60);
      if (found.length > 1) {
        throw new ToolError("invalid_input", `'${shown}' names ${found.length} ops here: ${found.map((o) => `${unique(o)} (${o.toolset}: ${o.line})`).join("; ")}.`, {
          hint: `Name the one you mean: ${found.map((o) => `"${unique(o)}"`).join(" or ")}.`,
        });
      }
      const op = found[0];
      if (!op) {
        const there = elsewhere(name);
        if (there.ops.length === 0) return undefined;
        const o = there.ops[0]!;
        throw new ToolError("invalid_input", `'${shown}' is not on this surface: it is ${there.ops.map((x) => `${x.pipeline.name} in the ${x.toolset} toolset`).join(", or ")}.`, {
          hint: `${there.reach(o)}, then call ${howToCall(o, o.pipeline.name)}.`,
        });
      }
      if (kind === "execute" && op.queryable && op.pipeline.kind === "query") return { ...op.pipeline, kind: "execute" };
      // A seed's name for another tool's op: say which tool runs it, under the name it has here.
      if (kind && kind !== op.pipeline.kind && name !== op.pipeline.name) {
        throw new ToolError("invalid_input", `'${shown}' here is ${op.pipeline.name} (${op.toolset}: ${op.line}), which the ${toolFor(op.pipeline.kind)} tool runs.`, {
          hint: `Call ${howToCall(op, unique(op))}.`,
        });
      }
      return op.pipeline;
    },
  };
}
