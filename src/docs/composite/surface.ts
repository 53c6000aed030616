import { z } from "zod";
import { normalizeArgs, parseArgs } from "../../core/inputs";
import { notFound } from "../../core/errors";
import { failed, outcome, type OpKind, type PipelineOp, type PipelineSurface, type StepOutcome } from "../../core/pipeline";
import { jsonSchema } from "../../core/json-schema";
import { unitsOf } from "../../core/meter";
import { type AnyOpDef, defineOp } from "../shared";
import { addOp } from "../content/add";
import { listCollectionsOp, listSnapshotsOp } from "../collections/list";
import { deleteOp } from "../content/delete";
import { download } from "../content/download";
import { getOp } from "../content/get";
import { graphOp } from "../search/graph";
import { grepOp } from "../search/grep";
import { listOp } from "../content/list";
import { restoreOp } from "../content/restore";
import { searchOp } from "../search/search";
import { statusOp } from "../search/status";
import { sessionOps } from "../sessions/session";
import { updateOp } from "../content/update";
import { watchOp } from "../sessions/watch";

const KINDS: readonly OpKind[] = ["query", "execute", "session"];
const opKey = (op: AnyOpDef) => (op.category === "session" ? `session_${op.name}` : op.name);

const describeOp = defineOp({
  name: "describe",
  category: "query",
  description: "The full parameter schema of any operation; without a target, every operation by tool.",
  params: z.object({
    target: z.string().min(1).max(64).optional().describe("The op to describe (session ops also as session_start, …); omit to list every op."),
  }),
  async run(_ctx, p) {
    if (p.target === undefined) {
      return {
        query_ops: names("query"),
        execute_ops: names("execute"),
        session_ops: names("session"),
        descriptions: Object.fromEntries(DOC_OPS.map((o) => [opKey(o), o.description])),
      };
    }
    const op = DOC_OPS.find((o) => o.name === p.target && o.category !== "session") ?? DOC_OPS.find((o) => o.category === "session" && (opKey(o) === p.target || o.name === p.target));
    if (!op) {
      const all = KINDS.map((k) => `${k}: ${names(k).join(", ")}`).join("; ");
      throw notFound("operation", p.target, `Known operations — ${all}.`);
    }
    return { op: opKey(op), description: op.description, paramsSchema: jsonSchema(op.params, "input"), category: op.category, readOnly: op.category === "query" };
  },
});

/** Every op, in the seed's order per tool. */
export const DOC_OPS: readonly AnyOpDef[] = [
  searchOp,
  grepOp,
  listOp,
  listCollectionsOp,
  listSnapshotsOp,
  graphOp,
  getOp,
  statusOp,
  describeOp,
  addOp,
  updateOp,
  deleteOp,
  restoreOp,
  download,
  ...sessionOps,
  watchOp,
];

function names(kind: OpKind): string[] {
  return DOC_OPS.filter((o) => o.category === kind).map((o) => o.name);
}

/** Runs an op the way every tool runs: the seed's renames, the generic input rules, its zod schema, then its handler. */
function asPipelineOp(op: AnyOpDef): PipelineOp {
  const parse = (raw: Record<string, unknown>) => {
    const renamed = op.normalize ? op.normalize(raw) : raw;
    return parseArgs(op.params, normalizeArgs(renamed, op.params, "params"), op.name);
  };
  const runMany = op.runMany?.bind(op);
  return {
    name: op.name,
    kind: op.category,
    units: (params) => unitsOf(op.cost, params),
    invoke: (ctx, raw) => outcome(async () => op.run(ctx, parse(raw))),
    ...(runMany
      ? {
          // Steps that do not parse fail on their own; the rest run together, in order.
          invokeRun: async (ctx, steps, stopAtFailure) => {
            const out: (StepOutcome | null)[] = [];
            const parsed: { at: number; params: unknown }[] = [];
            for (const step of steps) {
              try {
                parsed.push({ at: out.length, params: parse(step.params) });
                out.push(null);
              } catch (err) {
                out.push(failed(err));
                if (stopAtFailure) break;
              }
            }
            const ran = await runMany(
              ctx,
              parsed.map((p) => p.params),
              stopAtFailure,
            );
            ran.forEach((r, k) => (out[parsed[k]!.at] = r.ok ? r : failed(r.error)));
            // A stopping run ends at its first failure, wherever it came from.
            const end = out.findIndex((o) => o === null || !o.ok);
            return (stopAtFailure && end >= 0 ? out.slice(0, out[end] === null ? end : end + 1) : out).filter((o): o is StepOutcome => o !== null);
          },
        }
      : {}),
  };
}

const PIPELINE_OPS = new Map(DOC_OPS.map((o) => [o.name, asPipelineOp(o)]));

export const DOCS_SURFACE: PipelineSurface = {
  queryTool: "docs_query",
  executeTool: "docs_execute",
  find: (name) => PIPELINE_OPS.get(name),
  names,
  unresolved: "null",
  headlineFields: true,
};
