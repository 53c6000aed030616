/**
 * Alembic revisions (`versions/*.py`), read without running Python: the module-level `revision`
 * and `down_revision` give the order, the docstring's `Create Date:` line the time (a time without
 * an offset is taken as UTC, as Alembic writes it by default), and the `op.*` calls inside
 * `upgrade()` the changes. `with op.batch_alter_table("t") as batch_op:` blocks are followed (their
 * calls name no table), and `op.execute("…")` runs its SQL text through the SQL reader.
 *
 * Each op call is one statement for the import key, numbered in the order it appears; an
 * op.execute's own statements are numbered under it (`3.0`, `3.1`). Calls it does not know
 * (data migrations, bulk_insert, custom helpers) are skipped and counted.
 */
import { clip } from "../../../core/text";
import { parseIsoInstant } from "../../../core/time";
import { baseName, naturalCompare, usableName, type Change, type FileReading, type Migration, type MigrationFile, type ReadState } from "./model";
import { pythonTokens, type PyToken } from "./python-tokens";
import { readSql } from "./sql";

/** Tokens read from one revision file: far more than any real revision has. */
const MAX_TOKENS = 400_000;
/** Where in a revision the docstring's header lines are looked for. */
const HEADER_CHARS = 8 * 1024;

interface Revision {
  file: MigrationFile;
  id: string;
  parents: string[];
  time?: Date;
}

/** Whether a .py file looks like an Alembic revision (the detector's test, without tokenizing). */
export const isAlembicRevision = (f: MigrationFile): boolean => f.path.endsWith(".py") && f.text.includes("down_revision") && f.text.includes("def upgrade");

/**
 * The revisions in the order Alembic applies them: parents before children (a merge revision
 * after all its parents), ties broken by Create Date and then path. A parent no file has (a
 * partial folder) makes its child a root; revisions caught in a cycle come last, with a warning.
 */
export function alembicMigrations(files: MigrationFile[], warnings: Set<string>): Migration[] {
  const revisions: Revision[] = [];
  const byId = new Map<string, Revision>();
  for (const file of files.filter(isAlembicRevision)) {
    const head = moduleHeader(file.text);
    if (!head.id) {
      warnings.add(`${file.path}: no revision id found; not read`);
      continue;
    }
    if (byId.has(head.id)) {
      warnings.add(`${file.path}: revision ${head.id} is also in ${byId.get(head.id)!.file.path}; not read`);
      continue;
    }
    const rev: Revision = { file, id: head.id, parents: head.parents, time: createDate(file.text) };
    revisions.push(rev);
    byId.set(rev.id, rev);
  }
  const children = new Map<string, Revision[]>();
  const waiting = new Map<Revision, number>();
  for (const rev of revisions) {
    const known = rev.parents.filter((p) => byId.has(p));
    if (known.length < rev.parents.length) warnings.add(`${rev.file.path}: down_revision ${rev.parents.filter((p) => !byId.has(p)).join(", ")} is not in the folder; read as a first revision`);
    waiting.set(rev, known.length);
    for (const p of known) children.set(p, [...(children.get(p) ?? []), rev]);
  }
  const order = (a: Revision, b: Revision): number => (a.time?.getTime() ?? 0) - (b.time?.getTime() ?? 0) || naturalCompare(a.file.path, b.file.path);
  const ready = revisions.filter((r) => waiting.get(r) === 0).sort(order);
  const out: Revision[] = [];
  while (ready.length > 0) {
    const rev = ready.shift()!;
    out.push(rev);
    for (const child of children.get(rev.id) ?? []) {
      const left = waiting.get(child)! - 1;
      waiting.set(child, left);
      if (left === 0) {
        ready.push(child);
        ready.sort(order);
      }
    }
  }
  if (out.length < revisions.length) {
    const rest = revisions.filter((r) => !out.includes(r)).sort(order);
    warnings.add(`revisions in a down_revision cycle, read last: ${rest.map((r) => r.id).join(", ")}`);
    out.push(...rest);
  }
  return out.map((r) => ({ path: r.file.path, name: baseName(r.file.path), time: r.time, mtime: r.file.mtime, text: r.file.text }));
}

/** `revision` and `down_revision` at module level (with or without a type annotation). */
function moduleHeader(text: string): { id: string | null; parents: string[] } {
  const { tokens } = pythonTokens(text, MAX_TOKENS);
  let id: string | null = null;
  let parents: string[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.indent !== 0 || t.kind !== "name" || (t.text !== "revision" && t.text !== "down_revision")) continue;
    let e = k + 1;
    // Skip an annotation (`: Union[str, None]`) up to the "=" of the same logical line.
    while (e < tokens.length && tokens[e]!.indent < 0 && !(tokens[e]!.kind === "op" && tokens[e]!.text === "=")) e++;
    if (tokens[e]?.text !== "=" || tokens[e]?.indent !== -1) continue;
    const values: string[] = [];
    for (let v = e + 1; v < tokens.length && tokens[v]!.indent < 0; v++) if (tokens[v]!.kind === "string") values.push(tokens[v]!.text);
    if (t.text === "revision") id = values[0] ?? null;
    else parents = values;
  }
  return { id, parents };
}

function createDate(text: string): Date | undefined {
  const head = text.slice(0, HEADER_CHARS);
  const at = head.indexOf("Create Date:");
  if (at < 0) return undefined;
  const end = head.indexOf("\n", at);
  return parseIsoInstant(head.slice(at + "Create Date:".length, end < 0 ? undefined : end)) ?? undefined;
}

/** Ops whose first positional argument is a constraint name and second the table: one table modify. */
const CONSTRAINT_OPS = new Set(["create_unique_constraint", "create_foreign_key", "create_primary_key", "create_check_constraint", "drop_constraint", "create_exclude_constraint"]);

interface Call {
  /** "op", or the table a batch_alter_table alias stands for. */
  table: string | null;
  method: string;
  args: PyToken[][];
  start: number;
  end: number;
}

/** The changes of one revision's upgrade(). */
export function readAlembic(m: Migration, state: ReadState): FileReading {
  const { tokens, unterminated } = pythonTokens(m.text.slice(0, state.limits.fileBytes), MAX_TOKENS);
  if (m.text.length > state.limits.fileBytes) state.warnings.add(`${m.path}: only the first ${state.limits.fileBytes} characters were read`);
  if (unterminated) state.warnings.add(`${m.path}: unterminated string; the text after it was not read`);
  if (tokens.length >= MAX_TOKENS) state.warnings.add(`${m.path}: only the first ${MAX_TOKENS} tokens were read`);
  const body = upgradeBody(tokens);
  const changes: Change[] = [];
  let skipped = 0;
  let index = 0;
  for (const call of opCalls(tokens, body.from, body.to)) {
    if (index >= state.limits.statementsPerFile) {
      state.warnings.add(`${m.path}: only the first ${state.limits.statementsPerFile} op calls were read`);
      break;
    }
    const key = String(index++);
    if (call.method === "execute") {
      const sql = stringOf(positional(call.args)[0] ?? keyword(call.args, "sqltext"));
      if (sql === null) {
        skipped++;
        continue;
      }
      const read = readSql(sql, m.path, state, key);
      changes.push(...read.changes);
      skipped += read.skipped;
      continue;
    }
    const found = readCall(call, key, clip(m.text.slice(call.start, Math.min(call.end, call.start + 1_000)).replace(/\s+/g, " "), 1_000), state);
    if (found.length === 0) skipped++;
    changes.push(...found);
  }
  return { changes, skipped };
}

/** Token range of `def upgrade(...)`'s body: from its colon to the next top-level statement. */
function upgradeBody(tokens: PyToken[]): { from: number; to: number } {
  for (let k = 0; k + 1 < tokens.length; k++) {
    if (tokens[k]!.indent !== 0 || tokens[k]!.text !== "def" || tokens[k + 1]!.text !== "upgrade") continue;
    let to = k + 2;
    while (to < tokens.length && tokens[to]!.indent !== 0) to++;
    return { from: k + 2, to };
  }
  return { from: 0, to: 0 };
}

/** The `op.x(...)` and `alias.x(...)` calls in tokens[from, to), batch aliases followed. */
function* opCalls(tokens: PyToken[], from: number, to: number): Generator<Call> {
  const aliases = new Map<string, string>();
  let k = from;
  while (k + 3 < to) {
    const base = tokens[k]!;
    const isCall = base.kind === "name" && (base.text === "op" || aliases.has(base.text)) && tokens[k + 1]!.text === "." && tokens[k + 2]!.kind === "name" && tokens[k + 3]!.text === "(";
    const before = tokens[k - 1];
    if (!isCall || (before?.kind === "op" && before.text === ".")) {
      k++;
      continue;
    }
    const close = closingParen(tokens, k + 3, to);
    const args = splitArgs(tokens, k + 4, close);
    const method = tokens[k + 2]!.text;
    if (base.text === "op" && method === "batch_alter_table") {
      const table = nameOf(positional(args)[0] ?? keyword(args, "table_name"));
      const alias = tokens[close + 1]?.text === "as" ? tokens[close + 2] : undefined;
      if (table && alias?.kind === "name") aliases.set(alias.text, table);
      k = close + 1;
      continue;
    }
    yield { table: base.text === "op" ? null : aliases.get(base.text)!, method, args, start: base.start, end: tokens[close]?.end ?? base.end };
    k = close + 1;
  }
}

function closingParen(tokens: PyToken[], open: number, to: number): number {
  let depth = 0;
  for (let k = open; k < to; k++) {
    const t = tokens[k]!;
    if (t.kind !== "op") continue;
    if (t.text === "(" || t.text === "[" || t.text === "{") depth++;
    else if ((t.text === ")" || t.text === "]" || t.text === "}") && --depth === 0) return k;
  }
  return to;
}

function splitArgs(tokens: PyToken[], from: number, to: number): PyToken[][] {
  const args: PyToken[][] = [];
  let cur: PyToken[] = [];
  let depth = 0;
  for (let k = from; k < to; k++) {
    const t = tokens[k]!;
    if (t.kind === "op") {
      if (t.text === "(" || t.text === "[" || t.text === "{") depth++;
      else if (t.text === ")" || t.text === "]" || t.text === "}") depth--;
      else if (t.text === "," && depth === 0) {
        if (cur.length > 0) args.push(cur);
        cur = [];
        continue;
      }
    }
    cur.push(t);
  }
  if (cur.length > 0) args.push(cur);
  return args;
}

const isKeyword = (arg: PyToken[]): boolean => arg.length > 2 && arg[0]!.kind === "name" && arg[1]!.kind === "op" && arg[1]!.text === "=";
const positional = (args: PyToken[][]): PyToken[][] => args.filter((a) => !isKeyword(a));
const keyword = (args: PyToken[][], name: string): PyToken[] | undefined => args.find((a) => isKeyword(a) && a[0]!.text === name)?.slice(2);

/**
 * A string argument's value: a literal (adjacent literals joined, as Python does) or one wrapped
 * in `op.f(…)`, `sa.text(…)`, `text(…)` or `quoted_name(…)`; null when it is anything else.
 */
function stringOf(arg: PyToken[] | undefined): string | null {
  if (!arg || arg.length === 0) return null;
  if (arg.every((t) => t.kind === "string")) return arg.map((t) => t.text).join("");
  let k = 0;
  while (k + 1 < arg.length && arg[k]!.kind === "name" && arg[k + 1]!.text === ".") k += 2;
  const fn = arg[k];
  if (fn?.kind !== "name" || !["f", "text", "quoted_name"].includes(fn.text) || arg[k + 1]?.text !== "(" || arg.at(-1)?.text !== ")") return null;
  return stringOf(positional(splitArgs(arg, k + 2, arg.length - 1))[0]);
}

const nameOf = (arg: PyToken[] | undefined): string | null => {
  const s = stringOf(arg);
  return s === null ? null : usableName(s);
};

/** The name of a `sa.Column("name", …)` (or `Column(name="…")`) argument. */
function columnName(arg: PyToken[] | undefined): string | null {
  if (!arg) return null;
  let k = 0;
  while (k + 1 < arg.length && arg[k]!.kind === "name" && arg[k + 1]!.text === ".") k += 2;
  if (arg[k]?.text !== "Column" || arg[k + 1]?.text !== "(") return null;
  const inner = splitArgs(arg, k + 2, arg.length - 1);
  return nameOf(positional(inner)[0] ?? keyword(inner, "name"));
}

function readCall(call: Call, key: string, quote: string, state: ReadState): Change[] {
  const out: Change[] = [];
  const add = (entity_type: Change["entity_type"], entity_path: string, change_type: Change["change_type"], rename_from?: string): void => {
    const change: Change = { entity_path, entity_type, change_type, statement: key, quote };
    if (rename_from !== undefined) change.rename_from = rename_from;
    out.push(change);
  };
  const pos = positional(call.args);
  // A batch call names no table: its arguments start one place earlier.
  const batch = call.table !== null;
  const tableArg = (at: number, kw = "table_name"): string | null => (batch ? call.table : nameOf(pos[at] ?? keyword(call.args, kw)));
  const shift = batch ? 1 : 0;
  switch (call.method) {
    case "create_table": {
      const table = nameOf(pos[0] ?? keyword(call.args, "table_name"));
      if (!table) break;
      add("table", table, "create");
      for (const arg of pos.slice(1)) {
        const col = columnName(arg);
        if (col) add("column", `${table}.${col}`, "add");
      }
      break;
    }
    case "drop_table": {
      const table = nameOf(pos[0] ?? keyword(call.args, "table_name"));
      if (table) add("table", table, "delete");
      break;
    }
    case "rename_table": {
      const from = nameOf(pos[0] ?? keyword(call.args, "old_table_name"));
      const to = nameOf(pos[1] ?? keyword(call.args, "new_table_name"));
      if (from && to) add("table", to, "rename", from);
      break;
    }
    case "add_column": {
      const table = tableArg(0);
      const col = columnName(pos[1 - shift] ?? keyword(call.args, "column"));
      if (table && col) add("column", `${table}.${col}`, "add");
      break;
    }
    case "drop_column": {
      const table = tableArg(0);
      const col = nameOf(pos[1 - shift] ?? keyword(call.args, "column_name"));
      if (table && col) add("column", `${table}.${col}`, "remove");
      break;
    }
    case "alter_column": {
      const table = tableArg(0);
      const col = nameOf(pos[1 - shift] ?? keyword(call.args, "column_name"));
      if (!table || !col) break;
      const renamed = nameOf(keyword(call.args, "new_column_name"));
      const path = `${table}.${renamed ?? col}`;
      if (renamed && renamed !== col) add("column", path, "rename", `${table}.${col}`);
      const others = call.args.filter(
        (a) => isKeyword(a) && !["new_column_name", "existing_type", "existing_nullable", "existing_server_default", "existing_comment", "schema", "table_name", "column_name"].includes(a[0]!.text),
      );
      if (keyword(call.args, "type_")) add("column", path, "retype");
      else if (others.length > 0 || !renamed || renamed === col) add("column", path, "modify");
      break;
    }
    case "create_index": {
      const index = nameOf(pos[0] ?? keyword(call.args, "index_name"));
      const table = tableArg(1);
      if (!index || !table) break;
      state.indexTables.set(index, table);
      add("index", `${table}.${index}`, "index_add");
      break;
    }
    case "drop_index": {
      const index = nameOf(pos[0] ?? keyword(call.args, "index_name"));
      if (!index) break;
      const table = tableArg(1) ?? state.indexTables.get(index) ?? null;
      state.indexTables.delete(index);
      add("index", table ? `${table}.${index}` : index, "index_remove");
      break;
    }
    default:
      if (CONSTRAINT_OPS.has(call.method)) {
        const table = tableArg(1, call.method === "create_foreign_key" ? "source_table" : "table_name");
        if (table) add("table", table, "modify");
      }
  }
  return out;
}
