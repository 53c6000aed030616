/**
 * What the command line prints. Readable text by default (the tool's own rendering); `--json` the
 * envelope, one JSON document on stdout. Errors go to stderr with their hint; the exit code says
 * which kind of failure it was, so scripts can branch without parsing.
 */
import type { Envelope } from "./connection";

export const EXIT = {
  ok: 0,
  /** The tool answered with an error envelope. */
  toolError: 1,
  /** The command line was used wrongly (unknown command or flag, bad value). */
  usage: 2,
  /** No configuration, an unreachable server or a refused credential. */
  connection: 3,
} as const;

export interface Out {
  json: boolean;
  stdout(text: string): void;
  stderr(text: string): void;
  /** stdout is a terminal (progress bars, colour-free but redrawn lines). */
  tty: boolean;
}

export function processOut(json: boolean): Out {
  return {
    json,
    stdout: (text) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`),
    stderr: (text) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`),
    tty: Boolean(process.stderr.isTTY),
  };
}

/** A plain rendering of any JSON value: `key: value` lines, nested by indent, lists as `- ` items. */
export function plain(value: unknown, indent = ""): string {
  if (value === null || value === undefined) return `${indent}-`;
  if (typeof value !== "object") return `${indent}${String(value)}`;
  if (Array.isArray(value)) {
    if (!value.length) return `${indent}(none)`;
    return value.map((v) => (v && typeof v === "object" ? `${indent}-\n${plain(v, `${indent}  `)}` : `${indent}- ${String(v)}`)).join("\n");
  }
  const lines: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    // Empty strings and objects are the envelope's "nothing here": a person reads the fields that say something.
    if (v === "" || v === null || (v && typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length)) continue;
    if (v && typeof v === "object") lines.push(`${indent}${k}:`, plain(v, `${indent}  `));
    else lines.push(`${indent}${k}: ${String(v)}`);
  }
  return lines.join("\n");
}

/** A tool's Markdown rendering as it is; a one-line summary followed by the answer's fields. */
export function readable(envelope: Envelope, text: string): string {
  const trimmed = text.trim();
  if (trimmed.includes("\n")) return trimmed;
  const { ok: _ok, ...fields } = envelope;
  const body = plain(fields);
  return trimmed ? `${trimmed}\n${body}` : body;
}

export function printError(out: Out, code: string, message: string, hint?: string): void {
  if (out.json) {
    out.stdout(JSON.stringify({ ok: false, error: { code, message, hint: hint ?? "", retryable: false } }, null, 2));
    return;
  }
  out.stderr(`error: ${code}: ${message}`);
  if (hint) out.stderr(`hint: ${hint}`);
}

/** Prints a tool's answer and returns the exit code it means. */
export function printResult(out: Out, envelope: Envelope, text: string): number {
  if (!envelope.ok) {
    const e = envelope.error ?? { code: "tool_error", message: text };
    if (out.json) out.stdout(JSON.stringify(envelope, null, 2));
    else printError(out, e.code, e.message, e.hint);
    return EXIT.toolError;
  }
  if (out.json) out.stdout(JSON.stringify(envelope, null, 2));
  else out.stdout(readable(envelope, text));
  return EXIT.ok;
}
