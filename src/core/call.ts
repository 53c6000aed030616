import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Ctx, KeyedWrite } from "./context";
import type { AnyToolDef } from "./define-tool";
import { checkArgShape } from "./bounds";
import { InputNeeded } from "./confirm";
import { type ErrorBody, toErrorBody, ToolError } from "./errors";
import { derivedKey, runIdempotent } from "./idempotency";
import { normalizeArgs, parseArgs } from "./inputs";
import { maskSecrets } from "./secrets";
import { unitsOf } from "./meter";
import { checkFields, project } from "./fields";
import { capResponse, MAX_RESPONSE_CHARS } from "./response-cap";
import { compile, masksSecrets } from "./listing";
import { addTiming, timed } from "./timing";

// The one call pipeline every tool call goes through, from a surface or from another tool. It takes
// the definition it runs: it never imports the catalog, so a tool module may be loaded first.

export function render(structured: Record<string, unknown>, summary: string): CallToolResult {
  const json = JSON.stringify(structured);
  return {
    content: [{ type: "text", text: summary ? `${summary}\n${json}` : json }],
    structuredContent: structured,
  };
}

/**
 * A write inside a session is attributed to the session's run, minted on its first write;
 * reads never mint one. Inside the idempotent section, so a replayed write touches no run.
 */
async function attributed(def: AnyToolDef, ctx: Ctx): Promise<Ctx> {
  if (def.annotations.readOnly || !ctx.ensureRun) return ctx;
  return { ...ctx, runId: await ctx.ensureRun() };
}

/**
 * Charges what this call costs beyond what was already paid for it (docs/limits.md: Rate limits), before
 * anything of it runs, and returns the ctx its handler runs with: tools the handler runs in turn
 * are charged only for work beyond what this call paid.
 */
async function pay(def: AnyToolDef, ctx: Ctx, args: Record<string, unknown>): Promise<Ctx> {
  const units = unitsOf(def.cost, args);
  const paid = ctx.paid ?? 1;
  if (units > paid) await ctx.meter?.charge(units - paid, { what: def.name, units });
  return { ...ctx, paid: Math.max(units, paid) };
}

/** A costed tool's answer says what the request counted (absent outside /mcp, where nothing is counted). */
const metered = (def: AnyToolDef, ctx: Ctx) => (def.cost && ctx.meter ? { rate_limit: ctx.meter.report() } : {});

/**
 * Runs a tool from inside another, as a tools/call would: its validation, aliases, bounds, lease
 * rules and error mapping are that tool's own; its payload (without `ok`) is returned, and its
 * refusal is thrown on unchanged as a ToolError.
 */
export async function runTool<T>(def: AnyToolDef, ctx: Ctx, args: Record<string, unknown>): Promise<T> {
  const result = await callTool(def, ctx, Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined)));
  const { ok: _ok, error, ...data } = (result.structuredContent ?? {}) as Record<string, unknown> & { error?: ErrorBody };
  if (result.isError && error) throw new ToolError(error.code, error.message, { hint: error.hint, retryable: error.retryable });
  // The registry has validated the answer against the tool's own output schema.
  return data as T;
}

/** The refusal a call's arguments earn before anything runs (the answer callTool would give), or undefined when they are valid. */
export function argumentsRefusal(def: AnyToolDef, rawArgs: unknown): CallToolResult | undefined {
  try {
    const { input } = compile(def);
    checkArgShape(rawArgs);
    const parsed = parseArgs(input, normalizeArgs(rawArgs, input), def.name) as { fields?: string[] };
    if (parsed.fields) checkFields(def, parsed.fields);
    return undefined;
  } catch (err) {
    return failureResult(err, {}, (error) => def.errorText?.(error, rawArgs));
  }
}

/**
 * Runs one tool call through the shared contract. Every failure becomes an `isError` result
 * carrying the envelope, and unexpected errors are logged, not leaked; it throws only InputNeeded
 * (a confirmation to ask first), and only when ctx.confirmer is set.
 */
export async function callTool(def: AnyToolDef, ctx: Ctx, rawArgs: unknown): Promise<CallToolResult> {
  try {
    const validating = performance.now();
    const { input } = compile(def);
    checkArgShape(rawArgs);
    const args = normalizeArgs(rawArgs, input);
    const parsed = parseArgs(input, args, def.name) as Record<string, unknown>;
    const { allow_secrets: allowSecrets, fields, confirm, ...toolArgs } = parsed as Record<string, unknown> & { fields?: string[] };
    if (fields) checkFields(def, fields);
    addTiming("validate", performance.now() - validating);
    // Before anything that writes (a derived key mints the session's run): a refused call does nothing.
    const charged = await timed("pay", () => pay(def, ctx, toolArgs));
    const keying = performance.now();
    const rule = def.idempotency === "derived" ? {} : def.idempotency;
    const derive = parsed.idempotency_key === undefined && rule !== undefined && !def.annotations.readOnly && (rule.when?.(parsed) ?? true);
    const key = derive ? await derivedKey(ctx, args) : (parsed.idempotency_key as string | undefined);
    const masked = masksSecrets(def) && allowSecrets !== true ? maskSecrets(toolArgs, "", new Set(["idempotency_key", ...(def.verbatim ?? [])])) : { value: toolArgs, found: [] };
    let ran = 0;
    // Only this call's own key is handed on: a tool run inside this one must not complete this call's record.
    const run = async (keyed?: KeyedWrite) => {
      const t0 = performance.now();
      try {
        return await def.run({ ...(await attributed(def, confirm === true ? { ...charged, confirmed: true } : charged)), keyed }, masked.value);
      } finally {
        ran += performance.now() - t0;
      }
    };
    const { result, replay } =
      key && !def.annotations.readOnly ? await runIdempotent(ctx, def.name, key, args, run, derive ? rule : undefined, def.keyedBatch === true) : { result: await run(), replay: false };
    // The idempotency record's reads and writes are what the keyed section cost beyond the tool's own run.
    addTiming("run", ran);
    addTiming("idempotency", performance.now() - keying - ran);
    const answering = performance.now();
    const parsedResult = def.output.parse(result) as Record<string, unknown>;
    const { value: payload, truncation } = capResponse(fields ? project(parsedResult, fields) : parsedResult);
    const structured: Record<string, unknown> = { ok: true, ...payload, ...(replay ? { idempotent_replay: true } : {}), ...(truncation ? { truncation } : {}), ...metered(def, ctx) };
    if (masked.found.length > 0) {
      const note = `Secret-shaped text was masked before storing: ${masked.found.slice(0, 10).join(", ")}. Rotate it if it is real; pass allow_secrets: true to store such text verbatim.`;
      structured.warnings = [note, ...((payload.warnings as string[] | undefined) ?? [])];
    }
    if (def.text) {
      const text = def.text(payload, parsed);
      // The text of a capped payload is about its size; this holds it to the cap whatever the rendering.
      const bounded = text.length > MAX_RESPONSE_CHARS ? `${text.slice(0, MAX_RESPONSE_CHARS)}\n…[cut at ${MAX_RESPONSE_CHARS} characters]` : text;
      addTiming("envelope", performance.now() - answering);
      return { content: [{ type: "text", text: bounded }], structuredContent: structured };
    }
    const rendered = render(structured, def.summarize ? def.summarize(payload) : "");
    addTiming("envelope", performance.now() - answering);
    return rendered;
  } catch (err) {
    // A question for the person is not a failure: the server answers it as input_required.
    if (err instanceof InputNeeded) throw err;
    if (!(err instanceof ToolError) || err.code === "internal_error") console.error(`tool ${def.name} failed`, err);
    // Extra failure fields only where the tool declares them, so the envelope matches its schema.
    return failureResult(err, { ...(err instanceof ToolError && err.data && def.errorData ? err.data : {}), ...metered(def, ctx) }, (error) => def.errorText?.(error, rawArgs));
  }
}

/**
 * A failed call's result: isError with the envelope, and its text rendering (a tool's own errorText,
 * e.g. the git tools' JSON under format: json, else the standard one).
 */
export function failureResult(err: unknown, data: Record<string, unknown> = {}, textOf: (error: ErrorBody) => string | undefined = () => undefined): CallToolResult {
  const error = toErrorBody(err);
  const structured = { ...data, ok: false, error };
  const text = textOf(error);
  const result =
    text === undefined
      ? render(structured, `Error [${error.code}]: ${error.message}${error.hint ? `\nHint: ${error.hint}` : ""}`)
      : { content: [{ type: "text" as const, text }], structuredContent: structured };
  return { ...result, isError: true };
}
