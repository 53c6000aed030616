/**
 * Reads the schema changes out of a SQL migration: Postgres, MySQL and SQLite DDL as migration
 * tools write it. The text is tokenized once (sql-tokens.ts), cut into statements at top-level
 * semicolons, and each statement is read by its leading keywords. A statement that changes no
 * table, column, index or schema it knows (DML, functions, triggers, views, grants, types) is
 * skipped and counted, never an error.
 *
 * What becomes what (change types of the change ledger):
 * - CREATE TABLE t (…): `t` table create, then `t.c` column add per column. CREATE TABLE … AS and
 *   … PARTITION OF give the table alone. Temporary tables are scratch space, not schema: skipped.
 * - DROP TABLE t: table delete. ALTER TABLE t RENAME TO u / RENAME TABLE t TO u: rename of `u` from `t`.
 * - ALTER TABLE t ADD [COLUMN] c: column add; DROP [COLUMN] c: column remove; RENAME [COLUMN] a TO b
 *   and MySQL's CHANGE a b …: rename of `t.b` from `t.a`; ALTER [COLUMN] c TYPE / SET DATA TYPE:
 *   retype; any other ALTER COLUMN and MySQL's MODIFY: modify. Constraints added, dropped or renamed
 *   (keys, checks, foreign keys): one table modify. Several actions separated by commas each count.
 * - CREATE [UNIQUE] INDEX i ON t: index add of `t.i` (the index under its table, so a table's
 *   history shows its indexes); an unnamed Postgres index gets the name Postgres gives it,
 *   `t_col1_col2_idx`. MySQL's inline KEY/INDEX/UNIQUE KEY in CREATE TABLE and ADD INDEX likewise.
 *   DROP INDEX i: index remove of `t.i`, the table taken from `ON t` (MySQL) or from the CREATE
 *   INDEX read earlier in the folder; plain `i` when neither says. ALTER INDEX i RENAME TO j: rename.
 * - CREATE SCHEMA s / DROP SCHEMA s: schema create / delete of `s`.
 *
 * Names are kept as written (no case folding: the dialect decides that and a migration folder does
 * not say its dialect). A schema qualifier is dropped: `public.users.email` and `users.email` are one
 * entity, and a qualifier kept in the path would read as a table to the ledger's dotted-prefix
 * queries; the quoted statement in the reasoning still shows it.
 */
import { clip } from "../../../core/text";
import { usableName, type Change, type FileReading, type ReadState } from "./model";
import { SqlScanner, type Token } from "./sql-tokens";

/** Characters of a statement kept for its quote (the reasoning clips again). */
const QUOTE_SOURCE = 1_000;

interface Statement {
  tokens: Token[];
  start: number;
  end: number;
  /** Why the statement is not read (too long, too deep), if it is not. */
  refused?: string;
}

/**
 * The changes of one SQL file. `statementBase` prefixes the statement indexes of the changes (an
 * Alembic op.execute passes its call's index), `label` names the file in warnings.
 */
export function readSql(text: string, label: string, state: ReadState, statementBase = ""): FileReading {
  const limits = state.limits;
  let body = text;
  const cut = body.length > limits.fileBytes;
  if (cut) {
    body = body.slice(0, limits.fileBytes);
    state.warnings.add(`${label}: only the first ${limits.fileBytes} characters were read`);
  }
  const scanner = new SqlScanner(body, { mysql: looksMysql(body) });
  const changes: Change[] = [];
  let skipped = 0;
  let index = 0;
  const finish = (st: Statement): void => {
    const key = statementBase === "" ? String(index) : `${statementBase}.${index}`;
    index++;
    if (st.refused) {
      state.warnings.add(`${label}: statement ${key} skipped: ${st.refused}`);
      skipped++;
      return;
    }
    const found = readStatement(st, body, key, state);
    if (found.length === 0) skipped++;
    changes.push(...found);
  };
  const splitter = new StatementSplitter(limits.tokensPerStatement, limits.parenDepth);
  for (let tok = scanner.next(); tok !== null; tok = scanner.next()) {
    const st = splitter.push(tok);
    if (!st) continue;
    if (index >= limits.statementsPerFile) {
      state.warnings.add(`${label}: only the first ${limits.statementsPerFile} statements were read`);
      return { changes, skipped };
    }
    finish(st);
  }
  if (scanner.unterminated) state.warnings.add(`${label}: unterminated ${scanner.unterminated}; the text after it was not read`);
  const last = splitter.rest();
  // A statement the cut or an unterminated string broke off is not read: half a CREATE TABLE would claim half its columns.
  if (!last || cut || scanner.unterminated) return { changes, skipped };
  if (index >= limits.statementsPerFile) state.warnings.add(`${label}: only the first ${limits.statementsPerFile} statements were read`);
  else finish(last);
  return { changes, skipped };
}

/** Backticks or MySQL's table options mean MySQL's lexical rules (# comments, backslash escapes). */
function looksMysql(text: string): boolean {
  return text.includes("`") || /\bENGINE\s*=\s*InnoDB\b/i.test(text.slice(0, 64 * 1024));
}

/**
 * Cuts tokens into statements at semicolons outside BEGIN … END bodies (SQLite and MySQL
 * triggers, SQL-standard function bodies), counting the nesting rather than recursing.
 */
class StatementSplitter {
  private tokens: Token[] = [];
  private depth = 0;
  private blocks = 0;
  private hasBody = false;
  private refused: string | undefined;

  constructor(
    private readonly maxTokens: number,
    private readonly maxDepth: number,
  ) {}

  push(tok: Token): Statement | null {
    if (tok.kind === "punct" && tok.text === ";" && this.blocks === 0) return this.take(tok.end);
    if (tok.kind === "punct") {
      if (tok.text === "(") {
        this.depth++;
        if (this.depth > this.maxDepth) this.refused ??= `parentheses nested deeper than ${this.maxDepth}`;
      } else if (tok.text === ")") this.depth = Math.max(0, this.depth - 1);
    } else if (tok.kind === "word") {
      if (this.tokens.length < 8 && (tok.up === "TRIGGER" || tok.up === "FUNCTION" || tok.up === "PROCEDURE") && this.tokens[0]?.up === "CREATE") this.hasBody = true;
      if (this.hasBody) {
        if (tok.up === "BEGIN" || tok.up === "CASE") this.blocks++;
        else if (tok.up === "END" && this.blocks > 0) this.blocks--;
      }
    }
    if (this.refused) return null;
    if (this.tokens.length >= this.maxTokens) {
      this.refused = `longer than ${this.maxTokens} tokens`;
      this.tokens = [];
      return null;
    }
    this.tokens.push(tok);
    return null;
  }

  /** The statement still open at the end of the text, if any. */
  rest(): Statement | null {
    return this.tokens.length > 0 || this.refused ? this.take(this.tokens.at(-1)?.end ?? 0) : null;
  }

  private take(end: number): Statement | null {
    const tokens = this.tokens;
    const refused = this.refused;
    this.tokens = [];
    this.depth = 0;
    this.blocks = 0;
    this.hasBody = false;
    this.refused = undefined;
    if (tokens.length === 0 && !refused) return null;
    return { tokens: refused ? [] : tokens, start: tokens[0]?.start ?? end, end, refused };
  }
}

/** A cursor over one statement's tokens. */
class Cursor {
  i = 0;
  constructor(readonly ts: Token[]) {}

  peek(k = 0): Token | undefined {
    return this.ts[this.i + k];
  }

  /** True (and moves past them) when the next tokens are these keywords. */
  accept(...words: string[]): boolean {
    for (let k = 0; k < words.length; k++) if (this.ts[this.i + k]?.up !== words[k]) return false;
    this.i += words.length;
    return true;
  }

  isWord(word: string, k = 0): boolean {
    return this.ts[this.i + k]?.up === word;
  }

  isPunct(p: string, k = 0): boolean {
    const t = this.ts[this.i + k];
    return t?.kind === "punct" && t.text === p;
  }

  done(): boolean {
    return this.i >= this.ts.length;
  }

  /** A possibly qualified name (`s.t`, `"s"."t"`, `:SCHEMA.t`): its last part, or null when none is there or it is not a usable name. */
  name(): string | null {
    let last: string | null = null;
    for (;;) {
      const t = this.peek();
      if (!t || (t.kind !== "word" && t.kind !== "quoted")) return last === null ? null : usableName(last);
      last = t.text;
      this.i++;
      if (!this.isPunct(".")) return usableName(last);
      this.i++;
    }
  }
}

/** The top-level comma-separated parts of tokens[from, to), each a list of tokens. */
function splitTop(ts: Token[], from: number, to: number): Token[][] {
  const parts: Token[][] = [];
  let cur: Token[] = [];
  let depth = 0;
  for (let k = from; k < to; k++) {
    const t = ts[k]!;
    if (t.kind === "punct") {
      if (t.text === "(") depth++;
      else if (t.text === ")") depth--;
      else if (t.text === "," && depth === 0) {
        parts.push(cur);
        cur = [];
        continue;
      }
    }
    cur.push(t);
  }
  if (cur.length > 0) parts.push(cur);
  return parts;
}

/** The index of the ")" that closes the "(" at `open`, or ts.length when none does. */
function closing(ts: Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < ts.length; k++) {
    const t = ts[k]!;
    if (t.kind !== "punct") continue;
    if (t.text === "(") depth++;
    else if (t.text === ")" && --depth === 0) return k;
  }
  return ts.length;
}

function quoteOf(body: string, start: number, end: number): string {
  return clip(
    body
      .slice(start, Math.min(end, start + QUOTE_SOURCE))
      .replace(/\s+/g, " ")
      .trim(),
    QUOTE_SOURCE,
  );
}

/** Words that start a table constraint rather than a column in CREATE TABLE and ALTER TABLE … ADD. */
const CONSTRAINT_WORDS = new Set(["CONSTRAINT", "PRIMARY", "FOREIGN", "CHECK", "EXCLUDE", "LIKE", "PERIOD"]);
/** MySQL's inline index words. */
const INDEX_WORDS = new Set(["KEY", "INDEX", "FULLTEXT", "SPATIAL"]);
/**
 * Types written with a size in parentheses: `key varchar(255)` is a column named key, while
 * `KEY idx (col)` is MySQL's inline index. Without this list the two look alike.
 */
const SIZED_TYPES = new Set([
  "VARCHAR",
  "CHAR",
  "CHARACTER",
  "NVARCHAR",
  "NCHAR",
  "VARCHAR2",
  "NUMERIC",
  "DECIMAL",
  "NUMBER",
  "BIT",
  "VARBIT",
  "BINARY",
  "VARBINARY",
  "FLOAT",
  "DOUBLE",
  "REAL",
  "INT",
  "INTEGER",
  "TINYINT",
  "SMALLINT",
  "MEDIUMINT",
  "BIGINT",
  "TIME",
  "TIMESTAMP",
  "TIMESTAMPTZ",
  "DATETIME",
  "INTERVAL",
  "ENUM",
  "SET",
  "VECTOR",
  "TEXT",
  "BLOB",
  "GEOMETRY",
  "STRING",
]);

/** Reads one statement. */
function readStatement(st: Statement, body: string, key: string, state: ReadState): Change[] {
  const c = new Cursor(st.tokens);
  const quote = quoteOf(body, st.start, st.end);
  const out = new Out(key, quote);
  if (c.accept("CREATE")) {
    c.accept("OR", "REPLACE");
    if (!c.accept("GLOBAL")) c.accept("LOCAL");
    if (c.isWord("TEMP") || c.isWord("TEMPORARY")) return [];
    if (!c.accept("UNLOGGED")) c.accept("VIRTUAL");
    if (c.isWord("TABLE")) createTable(c, out, body);
    else if (c.accept("UNIQUE") || c.accept("FULLTEXT") || c.accept("SPATIAL") || c.accept("CLUSTERED") || c.accept("NONCLUSTERED") || c.isWord("INDEX")) createIndex(c, out, state);
    else if (c.accept("SCHEMA")) schemaChange(c, out, "create");
  } else if (c.accept("ALTER")) {
    if (c.accept("TABLE")) alterTable(c, out, body, state);
    else if (c.accept("INDEX")) alterIndex(c, out, state);
  } else if (c.accept("DROP")) {
    if (c.accept("TABLE")) dropTables(c, out, state);
    else if (c.accept("INDEX")) dropIndexes(c, out, state);
    else if (c.accept("SCHEMA")) schemaChange(c, out, "delete");
  } else if (c.accept("RENAME", "TABLE")) {
    renameTables(c, out);
  }
  return out.changes;
}

/** Collects one statement's changes, each path once per change type. */
class Out {
  readonly changes: Change[] = [];
  private readonly seen = new Set<string>();
  constructor(
    private readonly key: string,
    private readonly quote: string,
  ) {}

  add(entity_type: Change["entity_type"], entity_path: string, change_type: Change["change_type"], extra: { rename_from?: string; quote?: string } = {}): void {
    const id = `${change_type} ${entity_path}`;
    if (this.seen.has(id)) return;
    this.seen.add(id);
    const change: Change = { entity_path, entity_type, change_type, statement: this.key, quote: extra.quote ?? this.quote };
    if (extra.rename_from !== undefined) change.rename_from = extra.rename_from;
    this.changes.push(change);
  }
}

function createTable(c: Cursor, out: Out, body: string): void {
  c.accept("TABLE");
  c.accept("IF", "NOT", "EXISTS");
  const table = c.name();
  if (!table) return;
  out.add("table", table, "create");
  if (!c.isPunct("(")) return;
  const open = c.i;
  const close = closing(c.ts, open);
  const head = quoteOf(body, c.ts[0]!.start, c.ts[open]!.end);
  for (const el of splitTop(c.ts, open + 1, close)) {
    const quote = el.length > 0 ? `${head} … ${quoteOf(body, el[0]!.start, el.at(-1)!.end)}` : "";
    const index = inlineIndex(el);
    if (index !== undefined) {
      if (index) out.add("index", `${table}.${index}`, "index_add", { quote });
      continue;
    }
    const first = el[0];
    if (!first || (first.kind === "word" && (CONSTRAINT_WORDS.has(first.up) || first.up === "UNIQUE"))) continue;
    if (first.kind !== "word" && first.kind !== "quoted") continue;
    const col = usableName(first.text);
    if (col) out.add("column", `${table}.${col}`, "add", { quote });
  }
}

/**
 * MySQL's inline index in a table body (`KEY idx (a)`, `UNIQUE KEY idx (a)`, `INDEX (a)`): its
 * name, null when it has none, undefined when the element is no such index.
 */
function inlineIndex(el: Token[]): string | null | undefined {
  let k = 0;
  if (el[0]?.kind === "word" && el[0].up === "UNIQUE") {
    if (el[1]?.up !== "KEY" && el[1]?.up !== "INDEX") return undefined;
    k = 1;
  } else if (el[0]?.kind !== "word" || !INDEX_WORDS.has(el[0].up)) return undefined;
  if (el[k]?.up === "FULLTEXT" || el[k]?.up === "SPATIAL") {
    if (el[k + 1]?.up === "KEY" || el[k + 1]?.up === "INDEX") k++;
  }
  const next = el[k + 1];
  if (!next) return undefined;
  if (next.kind === "punct" && next.text === "(") return null;
  const after = el[k + 2];
  const opensList = after?.kind === "punct" && after.text === "(";
  const using = after?.up === "USING";
  if ((next.kind === "word" || next.kind === "quoted") && (opensList || using) && !(next.kind === "word" && SIZED_TYPES.has(next.up) && k === 0)) return usableName(next.text);
  return undefined;
}

function createIndex(c: Cursor, out: Out, state: ReadState): void {
  if (!c.accept("INDEX")) return;
  c.accept("CONCURRENTLY");
  c.accept("IF", "NOT", "EXISTS");
  let index: string | null = null;
  if (!c.isWord("ON")) {
    index = c.name();
    if (!index) return;
  }
  if (!c.accept("ON")) return;
  c.accept("ONLY");
  const table = c.name();
  if (!table) return;
  if (!index) {
    if (c.accept("USING")) c.name();
    if (!c.isPunct("(")) return;
    index = defaultIndexName(table, c.ts, c.i);
  }
  state.indexTables.set(index, table);
  out.add("index", `${table}.${index}`, "index_add");
}

/**
 * The name Postgres gives an unnamed index: the table, the indexed columns (`expr` for an
 * expression) and `idx`, joined by "_". Postgres also cuts it to 63 bytes; that cut is not copied.
 */
function defaultIndexName(table: string, ts: Token[], open: number): string {
  const cols = splitTop(ts, open + 1, closing(ts, open)).map((el) => {
    const first = el[0];
    return first && (first.kind === "word" || first.kind === "quoted") && !(el[1]?.kind === "punct" && el[1].text === "(") ? first.text : "expr";
  });
  return [table, ...cols, "idx"].join("_");
}

function dropIndexes(c: Cursor, out: Out, state: ReadState): void {
  c.accept("CONCURRENTLY");
  c.accept("IF", "EXISTS");
  const names: string[] = [];
  for (;;) {
    const name = c.name();
    if (!name) break;
    names.push(name);
    if (!c.isPunct(",")) break;
    c.i++;
  }
  while (!c.done() && !c.isWord("ON")) c.i++;
  const on = c.accept("ON") ? c.name() : null;
  for (const index of names) {
    const table = on ?? state.indexTables.get(index);
    state.indexTables.delete(index);
    out.add("index", table ? `${table}.${index}` : index, "index_remove");
  }
}

function alterIndex(c: Cursor, out: Out, state: ReadState): void {
  c.accept("IF", "EXISTS");
  const from = c.name();
  if (!from || !c.accept("RENAME", "TO")) return;
  const to = c.name();
  if (!to) return;
  const table = state.indexTables.get(from);
  state.indexTables.delete(from);
  if (table) state.indexTables.set(to, table);
  const prefix = table ? `${table}.` : "";
  out.add("index", `${prefix}${to}`, "rename", { rename_from: `${prefix}${from}` });
}

function dropTables(c: Cursor, out: Out, state: ReadState): void {
  c.accept("IF", "EXISTS");
  for (;;) {
    const table = c.name();
    if (!table) return;
    for (const [index, t] of state.indexTables) if (t === table) state.indexTables.delete(index);
    out.add("table", table, "delete");
    if (!c.isPunct(",")) return;
    c.i++;
  }
}

function renameTables(c: Cursor, out: Out): void {
  for (;;) {
    const from = c.name();
    if (!from || !c.accept("TO")) return;
    const to = c.name();
    if (!to) return;
    out.add("table", to, "rename", { rename_from: from });
    if (!c.isPunct(",")) return;
    c.i++;
  }
}

function schemaChange(c: Cursor, out: Out, change: "create" | "delete"): void {
  if (change === "create") c.accept("IF", "NOT", "EXISTS");
  else c.accept("IF", "EXISTS");
  for (;;) {
    const schema = c.name();
    if (!schema) return;
    out.add("schema", schema, change);
    if (change === "create" || !c.isPunct(",")) return;
    c.i++;
  }
}

function alterTable(c: Cursor, out: Out, body: string, state: ReadState): void {
  c.accept("IF", "EXISTS");
  c.accept("ONLY");
  let table = c.name();
  if (!table) return;
  if (c.isPunct("*")) c.i++;
  const actions = splitTop(c.ts, c.i, c.ts.length);
  const head = quoteOf(body, c.ts[0]!.start, c.ts[c.i - 1]!.end);
  for (const action of actions) {
    if (action.length === 0) continue;
    const a = new Cursor(action);
    // Of several actions, each event quotes its own.
    const quote = actions.length > 1 ? `${head} … ${quoteOf(body, action[0]!.start, action.at(-1)!.end)}` : undefined;
    const renamed = alterAction(a, table, out, body, state, quote);
    if (renamed) table = renamed;
  }
}

/** One ALTER TABLE action; returns the table's new name when the action renames it. */
function alterAction(a: Cursor, table: string, out: Out, body: string, state: ReadState, quote: string | undefined): string | void {
  const extra = quote === undefined ? {} : { quote };
  const column = (name: string | null, change: Change["change_type"]): void => {
    if (name) out.add("column", `${table}.${name}`, change, extra);
  };
  if (a.accept("ADD")) {
    if (a.accept("COLUMN")) {
      a.accept("IF", "NOT", "EXISTS");
      return column(a.name(), "add");
    }
    const index = inlineIndex(a.ts.slice(a.i));
    if (index !== undefined) {
      if (index) {
        state.indexTables.set(index, table);
        out.add("index", `${table}.${index}`, "index_add", extra);
      } else out.add("table", table, "modify", extra);
      return;
    }
    const first = a.peek();
    if (first?.kind === "word" && (CONSTRAINT_WORDS.has(first.up) || first.up === "UNIQUE")) return out.add("table", table, "modify", extra);
    if (a.isPunct("(")) {
      // MySQL's ADD (a int, b int): several columns at once.
      for (const el of splitTop(a.ts, a.i + 1, closing(a.ts, a.i))) {
        const name = el[0] && (el[0].kind === "word" || el[0].kind === "quoted") ? usableName(el[0].text) : null;
        if (name) out.add("column", `${table}.${name}`, "add", { quote: `${quoteOf(body, a.ts[0]!.start, a.ts[a.i]!.end)} … ${quoteOf(body, el[0]!.start, el.at(-1)!.end)}` });
      }
      return;
    }
    a.accept("IF", "NOT", "EXISTS");
    return column(a.name(), "add");
  }
  if (a.accept("DROP")) {
    if (a.accept("COLUMN")) {
      a.accept("IF", "EXISTS");
      return column(a.name(), "remove");
    }
    if (a.accept("INDEX") || a.accept("KEY")) {
      const index = a.name();
      if (index) {
        state.indexTables.delete(index);
        out.add("index", `${table}.${index}`, "index_remove", extra);
      }
      return;
    }
    if (a.isWord("CONSTRAINT") || a.isWord("PRIMARY") || a.isWord("FOREIGN") || a.isWord("CHECK") || a.isWord("UNIQUE")) return out.add("table", table, "modify", extra);
    a.accept("IF", "EXISTS");
    return column(a.name(), "remove");
  }
  if (a.accept("RENAME")) {
    if (a.accept("TO") || a.accept("AS")) {
      const to = a.name();
      if (!to) return;
      out.add("table", to, "rename", { ...extra, rename_from: table });
      return to;
    }
    if (a.accept("CONSTRAINT")) return out.add("table", table, "modify", extra);
    if (a.accept("INDEX") || a.accept("KEY")) {
      const from = a.name();
      const to = from && a.accept("TO") ? a.name() : null;
      if (from && to) {
        state.indexTables.delete(from);
        state.indexTables.set(to, table);
        out.add("index", `${table}.${to}`, "rename", { ...extra, rename_from: `${table}.${from}` });
      }
      return;
    }
    a.accept("COLUMN");
    const from = a.name();
    const to = from && a.accept("TO") ? a.name() : null;
    if (from && to) out.add("column", `${table}.${to}`, "rename", { ...extra, rename_from: `${table}.${from}` });
    return;
  }
  if (a.accept("ALTER")) {
    if (a.accept("CONSTRAINT")) return out.add("table", table, "modify", extra);
    a.accept("COLUMN");
    const name = a.name();
    const retype = a.isWord("TYPE") || (a.isWord("SET") && a.isWord("DATA", 1) && a.isWord("TYPE", 2));
    return column(name, retype ? "retype" : "modify");
  }
  if (a.accept("MODIFY")) {
    a.accept("COLUMN");
    return column(a.name(), "modify");
  }
  if (a.accept("CHANGE")) {
    a.accept("COLUMN");
    const from = a.name();
    const to = from ? a.name() : null;
    if (!from || !to) return;
    if (from === to) return column(to, "modify");
    out.add("column", `${table}.${to}`, "rename", { ...extra, rename_from: `${table}.${from}` });
  }
}
