import type { z } from "zod";
import type { Ctx } from "./context";
import type { ErrorBody } from "./errors";
import type { CallCost } from "./meter";
import type { ToolTask } from "./task-driver";

export type ToolsetId =
  | "changes"
  | "identity"
  | "projects"
  | "tasks"
  | "decisions"
  | "handoffs"
  | "collab"
  | "repos"
  | "feedback"
  | "skills"
  | "knowledge"
  | "search"
  | "runs"
  | "coordination"
  | "git"
  | "docs"
  | "code"
  | "review"
  | "plans"
  | "imports"
  /** The tools of compact mode (src/server/compact.ts), which is a surface, not a toolset one can select. */
  | "compact";

export interface ToolsetMeta {
  id: ToolsetId;
  description: string;
  /** Exposed on a bare `/mcp` when no toolsets are asked for. */
  default: boolean;
}

export interface ToolAnnotations {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
}

/** A tool that only reads this server's own stores: the same call answers the same way until something writes. */
export const READ_ONLY: Readonly<ToolAnnotations> = Object.freeze({ readOnly: true, destructive: false, idempotent: true, openWorld: false });

/**
 * One tool, defined once: its contract (name, schemas, annotations) and a short handler.
 * The registry adds everything every tool shares: alias handling, strict validation, the
 * envelope, idempotency keys for writes, and the mapping of errors.
 */
export interface ToolDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  toolset: ToolsetId;
  /**
   * The seed's own name for the tool, where ours differs to sit beside the work ledger (seed 000's
   * `diff`, `history`, `search`; seed 003's `query`, `execute`, `session`). A surface without the work ledger lists the tool under it; every
   * surface that has the tool accepts it in tools/call (see surfaceNaming in the registry).
   */
  seedName?: string;
  /**
   * Listed on every surface whatever its toolsets, read-only and compact mode included (seed 003's
   * mcp.echo, "always registered for protocol testing"). Its toolset is where it is documented.
   */
  everywhere?: true;
  /** Every property must carry `.describe()`; a test enforces it. */
  input: I;
  /** The success payload, without the envelope's `ok`. */
  output: O;
  annotations: ToolAnnotations;
  /**
   * Not read-only, yet a read to its caller: its only write is bookkeeping about the caller
   * (whoami notes when it was last seen). Compact mode's `query` runs it, as `execute` does.
   */
  queryable?: true;
  /**
   * false: tools/list carries no outputSchema (results are still validated here). For composite
   * tools whose result is whatever their ops answer: `describe` gives each op's output schema.
   */
  listOutput?: false;
  /** Fields a failed call may carry beside `error` (ToolError `data`), e.g. a batch's per-op results. */
  errorData?: z.ZodObject;
  /**
   * "derived": a write called without idempotency_key gets a key derived from its content (tool,
   * caller, arguments, run), so a retried call cannot write twice, with or without a session (the
   * work ledger's rule; src/core/idempotency.ts). A rule narrows it: `when` says which calls derive
   * one (a call that is naturally idempotent, like extending one's own lease, must run every time),
   * `keep` which answers are replayed (an empty poll is answered afresh).
   * Absent: only an explicit key makes the write idempotent (log_change mints an event per call).
   */
  idempotency?: "derived" | DerivedRule<z.infer<I>, z.infer<O>>;
  /**
   * The handler's only write is one batch that starts with ctx.keyed.open() (and may carry
   * ctx.keyed.done(answer)): a keyed call then takes its key in that batch instead of in a round
   * trip before the run. A call that finds the key held loses its batch whole and is answered as a
   * reserved key is (the first call's result, or a refusal). The handler runs before the key is
   * known to be held, so every path of it that writes must open; a path that writes nothing may
   * return without, and its answer is kept with the key afterwards.
   */
  keyedBatch?: true;
  /**
   * Secret-shaped text in what a write stores is masked by the registry (a write that stays in
   * this server: not read-only, not open-world) unless the caller passes allow_secrets: true.
   * "handler": the tool deals with secrets itself (feedback refuses them outright).
   */
  secrets?: "handler";
  /**
   * A list tool whose rows are big: the registry adds `fields`, so a caller can ask for only some
   * keys of each item (src/core/fields.ts). Its output must have `items` of objects.
   */
  fields?: true;
  /**
   * The tool may ask the person before acting (it awaits confirmFirst): the registry adds the
   * `confirm` parameter, which confirms where the client cannot be asked.
   */
  confirms?: true;
  /**
   * A call that can cost more than one rate-limit unit (docs/limits.md: Rate limits): a batch write names
   * its array of items, a composite tool says "ops". Such a tool's answer carries `rate_limit`.
   */
  cost?: CallCost;
  /**
   * The call starts long work and answers with its handle (a job id, a session id). To a client
   * that declares the tasks extension on 2026-07-28 the answer is an MCP task instead, which the
   * named driver settles from what `link` takes of the answer (src/server/tasks).
   */
  task?: ToolTask<z.output<O>>;
  /** Top-level parameters that are content, not text, and are never masked (a file's bytes). */
  verbatim?: readonly string[];
  run(ctx: Ctx, input: z.output<I>): Promise<z.input<O>>;
  /** A one-line human summary put before the JSON in the text content. */
  summarize?(result: z.output<O>): string;
  /**
   * The whole text content instead of summary + JSON, for tools whose seed fixes it (the git
   * tools' `format: markdown | json`). structuredContent is unchanged.
   */
  text?(result: z.output<O>, input: z.output<I>): string;
  /**
   * The text content of a failure, for tools whose seed fixes its form (the git tools answer
   * `format: "json"` errors as JSON); undefined keeps the default. `args` are the raw arguments:
   * a call refused for its arguments has no parsed input. structuredContent is the envelope.
   */
  errorText?(error: ErrorBody, args: unknown): string | undefined;
}

/** Identity function that keeps the input/output types of a definition tied together. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}

/** Type-erased form, for lists of tools with different schemas. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDef = ToolDef<any, any>;

export interface DerivedRule<In, Out> {
  when?: (input: In) => boolean;
  keep?: (output: Out) => boolean;
}
