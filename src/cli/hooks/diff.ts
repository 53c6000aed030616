/**
 * A unified diff of a settings file's text before and after a plan (what --dry-run shows).
 * Longest common subsequence on lines, after the common head and tail are set aside; past a bound
 * on the work (a huge rewrite) the changed middle is shown as removed then added, which is still a
 * correct diff, only a longer one.
 */
const CONTEXT = 3;
/** Cells of the LCS table: well above any settings file's changed middle. */
const MAX_CELLS = 4_000_000;

type Op = { kind: " " | "-" | "+"; line: string };

const linesOf = (text: string | null): string[] => {
  if (text === null || text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
};

function middleOps(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_CELLS) return [...a.map((line): Op => ({ kind: "-", line })), ...b.map((line): Op => ({ kind: "+", line }))];
  // lcs[i][j]: the LCS length of a[i..] and b[j..], flattened.
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: " ", line: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!) ops.push({ kind: "-", line: a[i++]! });
    else ops.push({ kind: "+", line: b[j++]! });
  }
  while (i < n) ops.push({ kind: "-", line: a[i++]! });
  while (j < m) ops.push({ kind: "+", line: b[j++]! });
  return ops;
}

/** The unified diff of `before` → `after` under `path`; "" when they are the same. null is an absent file. */
export function renderDiff(path: string, before: string | null, after: string | null): string {
  if (before === after) return "";
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const ops: Op[] = [
    ...a.slice(0, head).map((line): Op => ({ kind: " ", line })),
    ...middleOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((line): Op => ({ kind: " ", line })),
  ];
  // git's a/ and b/ prefixes, without doubling the slash of an absolute path.
  const shown = path.startsWith("/") ? path.slice(1) : path;
  const out = [`--- ${before === null ? "/dev/null" : `a/${shown}`}`, `+++ ${after === null ? "/dev/null" : `b/${shown}`}`];
  let k = 0;
  while (k < ops.length) {
    while (k < ops.length && ops[k]!.kind === " ") k++;
    if (k >= ops.length) break;
    // A hunk: from CONTEXT lines before this change to CONTEXT lines after the last change that
    // follows within 2 × CONTEXT unchanged lines.
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    let quiet = 0;
    for (let x = k; x < ops.length; x++) {
      if (ops[x]!.kind === " ") {
        if (++quiet > 2 * CONTEXT) break;
      } else {
        quiet = 0;
        end = x;
      }
    }
    const stop = Math.min(ops.length, end + 1 + CONTEXT);
    const hunk = ops.slice(start, stop);
    let oldStart = 1;
    let newStart = 1;
    for (const op of ops.slice(0, start)) {
      if (op.kind !== "+") oldStart++;
      if (op.kind !== "-") newStart++;
    }
    const oldLen = hunk.filter((op) => op.kind !== "+").length;
    const newLen = hunk.filter((op) => op.kind !== "-").length;
    out.push(`@@ -${oldLen === 0 ? oldStart - 1 : oldStart},${oldLen} +${newLen === 0 ? newStart - 1 : newStart},${newLen} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
    k = stop;
  }
  return `${out.join("\n")}\n`;
}
