/**
 * Secret-shaped text: what a token, key or password looks like. Tools name what they found and
 * never echo the text; the registry masks it in what a write stores unless the caller passes
 * allow_secrets: true.
 */
// Every quantifier that can fail after a long scan is bounded (a JWT header, a URL scheme), so a
// megabyte of adversarial text ("eyJ-eyJ-…", "a.a.a.…") costs a bounded scan per start, not a quadratic one.
const SECRET_SHAPES: ReadonlyArray<readonly [string, RegExp]> = [
  ["AWS access key", /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
  ["GitHub token", /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/],
  ["Slack token", /\bxox[abposr]-[A-Za-z0-9-]{10,}/],
  ["Stripe key", /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/],
  ["OpenAI key", /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}/],
  ["Google API key", /\bAIza[0-9A-Za-z_-]{35}/],
  ["PEM private key", /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/],
  ["JWT", /\beyJ[A-Za-z0-9_-]{8,256}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/],
  ["Bearer token", /\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*/i],
  ["secret assignment", /\b(?:password|passwd|pwd|secret|api[_-]?key|auth[_-]?token|access[_-]?token|access[_-]?key|private[_-]?key|client[_-]?secret)["']?\s*[:=]\s*["']?[^\s"',;]{8,}/i],
  ["URL with credentials", /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:@/]{1,256}:[^\s/]{1,256}@/i],
];

/** Labels of the secret shapes found in `text` (never the matched text itself). */
export function secretKinds(text: string): string[] {
  return SECRET_SHAPES.filter(([, re]) => re.test(text)).map(([label]) => label);
}

const MASKERS = SECRET_SHAPES.map(([label, re]) => [label, new RegExp(re.source, `${re.flags}g`)] as const);

/** `text` with every secret-shaped match replaced by `[masked: <kind>]`, and the kinds replaced. */
export function maskText(text: string): { text: string; kinds: string[] } {
  const kinds: string[] = [];
  let out = text;
  for (const [label, re] of MASKERS) {
    re.lastIndex = 0;
    if (!re.test(out)) continue;
    re.lastIndex = 0;
    out = out.replace(re, `[masked: ${label}]`);
    kinds.push(label);
  }
  return { text: out, kinds };
}

export interface Masked {
  value: unknown;
  /** "<kind> in '<field>'" for each field that had something masked. */
  found: string[];
}

/** Masks secrets in every string of a value (arguments are already bounded in depth), keys kept. */
export function maskSecrets(value: unknown, path: string, skip: ReadonlySet<string> = new Set()): Masked {
  const found: string[] = [];
  const walk = (v: unknown, at: string): unknown => {
    if (typeof v === "string") {
      const m = maskText(v);
      for (const k of m.kinds) found.push(`${k} in '${at}'`);
      return m.text;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${at}[${i}]`));
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, at === "" && skip.has(k) ? x : walk(x, at ? `${at}.${k}` : k)]));
    }
    return v;
  };
  return { value: walk(value, path), found };
}
