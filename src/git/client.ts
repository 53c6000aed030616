/**
 * The GitHub REST client: one `request` for every JSON call the git tools make, and `stream` for
 * downloads (an archive) read as they arrive. It only ever calls the configured API base, or a
 * download's redirect target once the caller has vetted it; builds paths from validated values,
 * reuses ETags (a 304 costs no rate limit), honours `retry-after` and `x-ratelimit-*` with bounded
 * waits, retries server errors, and turns failures into GitHubError with a stable code for the
 * tools to map onto the seed's codes.
 */
import { cleanText } from "./untrusted";

/** An operation as GitHub's OpenAPI description names it: method, space, path template. */
export type Operation = `${"GET" | "POST" | "PATCH" | "DELETE" | "PUT"} /${string}`;

export type Params = Record<string, string | number | boolean | undefined>;

export interface GitHubResponse<T> {
  status: number;
  data: T;
  headers: Headers;
}

export type GitHubErrorCode =
  "github_not_found" | "github_conflict" | "github_unprocessable" | "github_auth_failed" | "github_forbidden" | "github_rate_limited" | "github_unavailable" | "github_error";

export class GitHubError extends Error {
  constructor(
    readonly code: GitHubErrorCode,
    readonly status: number,
    message: string,
    readonly retryable: boolean,
    /** When a rate limit lifts (ISO), for the hint. */
    readonly resetAt?: string,
  ) {
    super(message);
  }
}

/** Gives the Authorization header's token; throws when nothing is configured. */
export type TokenSource = () => Promise<string>;

export interface ClientOptions {
  /** e.g. https://api.github.com, or https://ghe.example.com/api/v3 for GitHub Enterprise Server. */
  apiBase: string;
  token: TokenSource;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** The longest a request waits for a rate limit or retry before giving up with a retryable error. */
  maxWaitMs?: number;
  etags?: EtagCache;
}

/** Path parameters that are paths themselves (a file path, a ref like heads/feature/x, base...head). */
const SLASHED_PARAMS = new Set(["path", "ref", "basehead"]);
const ATTEMPTS = 3;

interface CachedResponse {
  etag: string;
  data: unknown;
}

/** Per-isolate LRU of GET responses by token and URL: conditional requests answered 304 cost no rate limit. */
export class EtagCache {
  private readonly entries = new Map<string, CachedResponse>();
  constructor(private readonly capacity = 500) {}

  get(key: string): CachedResponse | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: CachedResponse): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

const sharedEtags = new EtagCache();

export class GitHubClient {
  private readonly base: URL;
  private readonly fetchFn: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxWaitMs: number;
  private readonly etags: EtagCache;

  constructor(private readonly opts: ClientOptions) {
    this.base = new URL(opts.apiBase.replace(/\/+$/, ""));
    if (this.base.protocol !== "https:" && !/^(localhost|127\.0\.0\.1|\[::1\])$/.test(this.base.hostname)) {
      throw new Error(`GitHub API base must be https: ${opts.apiBase}`);
    }
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.maxWaitMs = opts.maxWaitMs ?? 10_000;
    this.etags = opts.etags ?? sharedEtags;
  }

  /** The URL for an operation: path parameters substituted (encoded), the rest as query for GET/DELETE. */
  url(op: Operation, params: Params = {}): URL {
    const [method, template] = op.split(" ") as [string, string];
    const used = new Set<string>();
    const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const value = params[name];
      if (value === undefined || value === "") throw new Error(`missing path parameter ${name} for ${op}`);
      used.add(name);
      const text = String(value);
      return SLASHED_PARAMS.has(name) ? text.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(text);
    });
    const url = new URL(`${this.base.pathname.replace(/\/$/, "")}${path}`, this.base);
    if (url.origin !== this.base.origin) throw new Error("refusing a request outside the configured GitHub API");
    if (method === "GET" || method === "DELETE") {
      for (const [k, v] of Object.entries(params)) if (!used.has(k) && v !== undefined) url.searchParams.set(k, String(v));
    }
    return url;
  }

  /** The configured API's origin (scheme and host), for callers that vet where a redirect may go. */
  get origin(): string {
    return this.base.origin;
  }

  async request<T>(op: Operation, params: Params = {}, body?: unknown): Promise<GitHubResponse<T>> {
    const method = op.split(" ")[0]!;
    const url = this.url(op, params);
    const token = await this.opts.token();
    const cacheKey = method === "GET" ? `${await tokenTag(token)} ${url.href}` : "";
    let cached: CachedResponse | undefined;
    const res = await this.exchange({
      method,
      url,
      token,
      body: body === undefined ? undefined : JSON.stringify(body),
      // Looked up per attempt, as a concurrent call may have filled the cache meanwhile.
      headers: (): Record<string, string> => {
        cached = cacheKey ? this.etags.get(cacheKey) : undefined;
        return cached ? { "If-None-Match": cached.etag } : {};
      },
      done: (r) => r.ok || (r.status === 304 && cached !== undefined),
    });
    if (res.status === 304 && cached) {
      await res.body?.cancel();
      return { status: 200, data: cached.data as T, headers: res.headers };
    }
    const data = (res.status === 204 ? null : await res.json()) as T;
    const etag = res.headers.get("etag");
    if (cacheKey && etag) this.etags.set(cacheKey, { etag, data });
    return { status: res.status, data, headers: res.headers };
  }

  /**
   * A GET whose body is handed back unread, for answers too big to parse whole (a repository
   * archive). GitHub answers such downloads with a redirect; `follow` vets the target before
   * anything is sent there (it throws to refuse) and says whether the token goes along. One hop:
   * the target's own answer must be the content. Retries and error mapping are request's.
   */
  async stream(op: Operation, params: Params, follow: (target: URL) => { auth: boolean }): Promise<Response> {
    const url = this.url(op, params);
    const token = await this.opts.token();
    const first = await this.exchange({ method: "GET", url, token, done: (r) => r.ok || isRedirect(r) });
    if (!isRedirect(first)) return first;
    await first.body?.cancel();
    const location = first.headers.get("location");
    if (!location) throw new GitHubError("github_error", first.status, `GitHub answered ${first.status} without a Location`, false);
    const target = new URL(location, url);
    const { auth } = follow(target);
    return this.exchange({ method: "GET", url: target, token: auth ? token : null, done: (r) => r.ok });
  }

  /**
   * One call with the retry policy every request shares: network failures, rate limits and
   * server errors are retried within maxWaitMs; an answer `done` accepts is returned unread, and
   * anything else becomes a GitHubError. A null token sends no Authorization header.
   */
  private async exchange(x: Exchange): Promise<Response> {
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = {
        Accept: "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "agent-ledger",
        ...(x.token === null ? {} : { Authorization: `Bearer ${x.token}` }),
        ...x.headers?.(),
      };
      if (x.body !== undefined) headers["Content-Type"] = "application/json";
      let res: Response;
      try {
        res = await this.fetchFn(x.url.href, { method: x.method, headers, body: x.body, redirect: "manual" });
      } catch (err) {
        if (attempt < ATTEMPTS && waited + 1000 * attempt <= this.maxWaitMs) {
          waited += 1000 * attempt;
          await this.sleep(1000 * attempt);
          continue;
        }
        throw new GitHubError("github_unavailable", 0, `GitHub could not be reached: ${err instanceof Error ? err.message : String(err)}`, true);
      }
      if (x.done(res)) return res;
      const text = await res.text();
      const message = githubMessage(text) || res.statusText;
      const wait = retryWaitMs(res, message, attempt);
      if (wait !== null && attempt < ATTEMPTS && waited + wait <= this.maxWaitMs) {
        waited += wait;
        await this.sleep(wait);
        continue;
      }
      throw toError(res, message);
    }
  }
}

interface Exchange {
  method: string;
  url: URL;
  token: string | null;
  body?: string;
  /** Extra headers, computed per attempt. */
  headers?: () => Record<string, string>;
  /** The answers handed back to the caller; the rest are retried or mapped to a GitHubError. */
  done: (res: Response) => boolean;
}

const isRedirect = (res: Response) => res.status >= 300 && res.status < 400 && res.status !== 304;

/** The cache key keeps one token's responses from being served to another token (another tenant). */
async function tokenTag(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return Array.from(new Uint8Array(digest).slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** GitHub's error words, cleaned: they can quote names and messages that whoever pushed chose. */
function githubMessage(text: string): string {
  return cleanText(rawGithubMessage(text));
}

function rawGithubMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: string; errors?: Array<{ message?: string; code?: string; field?: string }> };
    const details = (body.errors ?? []).map((e) => e.message ?? [e.field, e.code].filter(Boolean).join(" ")).filter(Boolean);
    return [body.message, ...details].filter(Boolean).join(": ");
  } catch {
    return text.slice(0, 200);
  }
}

const isRateLimited = (res: Response, message: string) => res.status === 429 || (res.status === 403 && (res.headers.get("x-ratelimit-remaining") === "0" || /rate limit/i.test(message)));

/** How long to wait before retrying, or null when retrying cannot help. */
function retryWaitMs(res: Response, message: string, attempt: number): number | null {
  if (isRateLimited(res, message)) {
    const after = Number(res.headers.get("retry-after"));
    if (after > 0) return after * 1000;
    const reset = Number(res.headers.get("x-ratelimit-reset"));
    if (res.headers.get("x-ratelimit-remaining") === "0" && reset > 0) return Math.max(0, reset * 1000 - Date.now()) + 1000;
    // A secondary limit without retry-after: back off exponentially (GitHub asks for at least a minute).
    return 60_000 * attempt;
  }
  if (res.status >= 500) return 500 * 3 ** (attempt - 1);
  return null;
}

function toError(res: Response, message: string): GitHubError {
  if (isRateLimited(res, message)) {
    const reset = Number(res.headers.get("x-ratelimit-reset"));
    const after = Number(res.headers.get("retry-after"));
    const at = after > 0 ? Date.now() + after * 1000 : reset > 0 ? reset * 1000 : Date.now() + 60_000;
    return new GitHubError("github_rate_limited", res.status, `GitHub rate limit: ${message}`, true, new Date(at).toISOString());
  }
  switch (res.status) {
    case 401:
      return new GitHubError("github_auth_failed", 401, `GitHub refused the credentials: ${message}`, false);
    case 403:
      return new GitHubError("github_forbidden", 403, `GitHub refused access: ${message}`, false);
    case 404:
      return new GitHubError("github_not_found", 404, `Not found on GitHub: ${message}`, false);
    case 409:
      return new GitHubError("github_conflict", 409, `GitHub reported a conflict: ${message}`, false);
    case 422:
      return new GitHubError("github_unprocessable", 422, `GitHub refused the request: ${message}`, false);
    default:
      return new GitHubError(res.status >= 500 ? "github_unavailable" : "github_error", res.status, `GitHub answered ${res.status}: ${message}`, res.status >= 500);
  }
}
