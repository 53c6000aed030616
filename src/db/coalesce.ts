/**
 * A request's D1 binding whose reads, issued together, reach D1 together. Each D1 call costs a
 * round trip (and, in local mode, as much CPU as a small query itself), and a tool's answer is
 * often read by several modules side by side (`Promise.all`): the claimed task, the plan step that
 * follows it, the paths of its prior attempts. Each read is held until the code running now yields
 * (one microtask; the branches of a `Promise.all` all start before that), and the reads held by then
 * are sent as one `batch`: one round trip, and one consistent snapshot.
 *
 * Only reads are held: `first()` and `all()` of a statement whose text is a SELECT, and `batch`es
 * made only of such statements. Writes, `raw()` and `run()` go straight through, in the order they
 * are made. A held read is sent at most a microtask later than it would have been, so code that
 * awaits one read before the next behaves as before. If the combined batch fails, each held read is
 * sent again by itself, so an error reaches only the read that caused it.
 */

/** The D1 binding a coalescing binding wraps (what the drizzle instance is cached by). */
const UNDERLYING = Symbol("underlying D1 binding");

/** Reads per combined batch; what is left goes in the next one. */
const MAX_HELD = 50;

const isRead = (query: string) => /^\s*select\b/i.test(query);

interface Held {
  statements: D1PreparedStatement[];
  resolve: (results: D1Result[]) => void;
  reject: (err: unknown) => void;
}

export function coalescingReads(d1: D1Database): D1Database {
  const held: Held[] = [];
  // Each read statement handed out, to the statement under it.
  const reads = new WeakMap<object, D1PreparedStatement>();

  const flush = async () => {
    const now = held.splice(0, MAX_HELD);
    if (held.length > 0) queueMicrotask(() => void flush());
    if (now.length === 1) {
      const only = now[0]!;
      const single = only.statements.length === 1 ? only.statements[0]!.all().then((r) => [r]) : d1.batch(only.statements);
      return single.then(only.resolve, only.reject);
    }
    let results: D1Result[];
    try {
      results = await d1.batch(now.flatMap((h) => h.statements));
    } catch {
      for (const h of now) d1.batch(h.statements).then(h.resolve, h.reject);
      return;
    }
    let at = 0;
    for (const h of now) {
      h.resolve(results.slice(at, at + h.statements.length));
      at += h.statements.length;
    }
  };

  const hold = (statements: D1PreparedStatement[]) =>
    new Promise<D1Result[]>((resolve, reject) => {
      if (held.push({ statements, resolve, reject }) === 1) queueMicrotask(() => void flush());
    });

  const wrap = (statement: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, prop) {
        if (prop === "bind") return (...values: unknown[]) => wrap(target.bind(...values));
        // first(column) is left to D1, which words the error for a column the row lacks.
        if (prop === "first") return (column?: string) => (column === undefined ? hold([target]).then(([r]) => (r!.results[0] as unknown) ?? null) : target.first(column));
        if (prop === "all") return () => hold([target]).then(([r]) => r!);
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    reads.set(proxy, statement);
    return proxy;
  };

  return new Proxy(d1, {
    get(target, prop) {
      if (prop === UNDERLYING) return target;
      if (prop === "prepare") return (query: string) => (isRead(query) ? wrap(target.prepare(query)) : target.prepare(query));
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => (statements.length > 0 && statements.every((s) => reads.has(s)) ? hold(statements.map((s) => reads.get(s)!)) : target.batch(statements));
      }
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The binding under a coalescing one (or the binding itself). */
export const bindingOf = (d1: D1Database): D1Database => (d1 as unknown as Record<symbol, D1Database | undefined>)[UNDERLYING] ?? d1;
