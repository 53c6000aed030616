/**
 * A small in-memory git repository behind a FakeGitHub: blobs, trees (kept flat, path → blob),
 * commits and branches, answering the Git Data, refs, commits, compare, merges and contents endpoints with
 * GitHub-shaped bodies (GitHub's own examples with the fields that matter overridden, so the
 * fake's schema validation still applies). The merges API does a file-level three-way merge:
 * both sides changing a path differently is a 409, which is all the tools rely on.
 */
import { errorBody, example, type FakeGitHub, type FakeRequest, type FakeReply } from "./fake";

type Flat = Map<string, string>;

interface Commit {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
}

/** A deterministic 40-hex digest (content addressing only; not SHA-1). */
export function digest(text: string): string {
  let out = "";
  for (let seed = 0; seed < 5; seed++) {
    let h = (0x811c9dc5 ^ (seed * 0x9e3779b1)) >>> 0;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, "0");
  }
  return out;
}

const AUTHOR = { name: "Monalisa Octocat", email: "octocat@github.com", date: "2026-06-01T12:00:00Z" };

export class FakeRepo {
  readonly blobs = new Map<string, string>();
  readonly trees = new Map<string, Flat>();
  /** Per tree, the paths whose mode is not 100644 (executables, symlinks). */
  readonly modes = new Map<string, Map<string, string>>();
  readonly commits = new Map<string, Commit>();
  readonly refs = new Map<string, string>();
  /** Runs before each request is answered (e.g. to move a branch mid-call); a reply it returns is the answer. */
  before: ((req: FakeRequest) => FakeReply | void) | null = null;
  private clock = 0;

  constructor(
    readonly gh: FakeGitHub,
    readonly defaultBranch = "main",
  ) {
    this.register();
  }

  blob(content: string): string {
    const sha = digest(`blob ${content}`);
    this.blobs.set(sha, content);
    return sha;
  }

  tree(flat: Flat, modes: Map<string, string> = new Map()): string {
    const sorted = (m: Map<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));
    const sha = digest(`tree ${JSON.stringify([sorted(flat), sorted(modes)])}`);
    this.trees.set(sha, new Map(flat));
    this.modes.set(sha, new Map(modes));
    return sha;
  }

  modeOf(treeSha: string, path: string): string {
    return this.modes.get(treeSha)?.get(path) ?? "100644";
  }

  commit(tree: string, parents: string[], message: string): string {
    const sha = digest(`commit ${tree} ${parents.join(",")} ${message} ${this.clock++}`);
    this.commits.set(sha, { sha, tree, parents, message });
    return sha;
  }

  /** Test setup: a commit on `branch` writing `files` (null deletes) on top of its head. */
  write(branch: string, files: Record<string, string | null>, message = `change ${Object.keys(files).join(", ")}`, from?: string): string {
    const parent = from ?? this.refs.get(branch);
    const flat = new Map(parent ? this.trees.get(this.commits.get(parent)!.tree)! : []);
    for (const [p, c] of Object.entries(files)) {
      if (c === null) flat.delete(p);
      else flat.set(p, this.blob(c));
    }
    const sha = this.commit(this.tree(flat), parent ? [parent] : [], message);
    this.refs.set(branch, sha);
    return sha;
  }

  /** Branches left by the tools' temporary-branch machinery (must always be none). */
  tempRefs(): string[] {
    return [...this.refs.keys()].filter((r) => r.startsWith("agent-ledger-tmp/"));
  }

  /** The files at a branch or commit, as text. */
  files(refOrSha: string): Record<string, string> {
    const sha = this.refs.get(refOrSha) ?? refOrSha;
    const flat = this.trees.get(this.commits.get(sha)!.tree)!;
    return Object.fromEntries([...flat].map(([p, b]) => [p, this.blobs.get(b)!]));
  }

  ancestors(sha: string): Set<string> {
    const seen = new Set<string>();
    const stack = [sha];
    while (stack.length) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      stack.push(...this.commits.get(s)!.parents);
    }
    return seen;
  }

  /** Commits reachable from head and not from base, oldest first. */
  private only(head: string, base: string): Commit[] {
    const exclude = this.ancestors(base);
    const inc = [...this.ancestors(head)].filter((s) => !exclude.has(s)).map((s) => this.commits.get(s)!);
    const depth = (c: Commit): number => (c.parents.length ? 1 + Math.max(...c.parents.map((p) => (exclude.has(p) ? 0 : depth(this.commits.get(p)!)))) : 0);
    return inc.sort((a, b) => depth(a) - depth(b));
  }

  mergeBase(a: string, b: string): string | null {
    const common = this.ancestors(a);
    const candidates = [...this.ancestors(b)].filter((s) => common.has(s));
    // The best common ancestor: one no other candidate descends from.
    return candidates.find((c) => !candidates.some((o) => o !== c && this.ancestors(o).has(c))) ?? null;
  }

  private resolve(ref: string): string | null {
    if (this.refs.has(ref)) return this.refs.get(ref)!;
    if (/^[0-9a-f]{7,40}$/.test(ref)) return [...this.commits.keys()].find((s) => s.startsWith(ref)) ?? null;
    return null;
  }

  private gitCommitBody(c: Commit) {
    return {
      sha: c.sha,
      message: c.message,
      tree: { sha: c.tree, url: `https://api.github.test/t/${c.tree}` },
      parents: c.parents.map((p) => ({ sha: p, url: `https://api.github.test/c/${p}`, html_url: `https://github.test/c/${p}` })),
      author: AUTHOR,
      committer: AUTHOR,
    };
  }

  private commitBody(op: string, c: Commit, status = "200") {
    return example(
      op,
      {
        sha: c.sha,
        commit: { message: c.message, tree: { sha: c.tree } },
        parents: c.parents.map((p) => ({ sha: p, url: `https://api.github.test/c/${p}`, html_url: `https://github.test/c/${p}` })),
        files: [],
      },
      status,
    );
  }

  private refBody(op: string, name: string, sha: string, status = "200") {
    return example(op, { ref: `refs/heads/${name}`, object: { type: "commit", sha } }, status);
  }

  /** File-level three-way merge; null on conflict. */
  private threeWay(base: Flat, ours: Flat, theirs: Flat): Flat | null {
    const out = new Map<string, string>();
    for (const p of new Set([...base.keys(), ...ours.keys(), ...theirs.keys()])) {
      const b = base.get(p),
        o = ours.get(p),
        t = theirs.get(p);
      let r: string | undefined;
      if (o === t) r = o;
      else if (o === b) r = t;
      else if (t === b) r = o;
      else return null;
      if (r !== undefined) out.set(p, r);
    }
    return out;
  }

  private on(op: string, fn: (req: FakeRequest) => FakeReply) {
    this.gh.on(op, (req) => {
      return this.before?.(req) ?? fn(req);
    });
  }

  private register(): void {
    const notFound = { status: 404, body: errorBody("Not Found") };
    this.on("GET /repos/{owner}/{repo}", () => ({
      body: example("GET /repos/{owner}/{repo}", { default_branch: this.defaultBranch, language: "TypeScript", source: { language: "TypeScript" } }),
    }));
    this.on("GET /repos/{owner}/{repo}/git/ref/{ref}", (req) => {
      const name = req.path.ref!.replace(/^heads\//, "");
      const sha = this.refs.get(name);
      return sha ? { body: this.refBody("GET /repos/{owner}/{repo}/git/ref/{ref}", name, sha) } : notFound;
    });
    this.on("POST /repos/{owner}/{repo}/git/refs", (req) => {
      const name = String(req.body!.ref).replace(/^refs\/heads\//, "");
      const sha = String(req.body!.sha);
      if (this.refs.has(name)) return { status: 422, body: errorBody("Reference already exists") };
      if (!this.commits.has(sha)) return { status: 422, body: errorBody("Object does not exist") };
      this.refs.set(name, sha);
      return { status: 201, body: this.refBody("POST /repos/{owner}/{repo}/git/refs", name, sha, "201") };
    });
    this.on("PATCH /repos/{owner}/{repo}/git/refs/{ref}", (req) => {
      const name = req.path.ref!.replace(/^heads\//, "");
      const sha = String(req.body!.sha);
      const cur = this.refs.get(name);
      if (!cur) return { status: 422, body: errorBody("Reference does not exist") };
      if (!this.commits.has(sha)) return { status: 422, body: errorBody("Object does not exist") };
      if (req.body!.force !== true && !this.ancestors(sha).has(cur)) return { status: 422, body: errorBody("Update is not a fast forward") };
      this.refs.set(name, sha);
      return { body: this.refBody("PATCH /repos/{owner}/{repo}/git/refs/{ref}", name, sha) };
    });
    this.on("DELETE /repos/{owner}/{repo}/git/refs/{ref}", (req) => {
      const name = req.path.ref!.replace(/^heads\//, "");
      if (!this.refs.delete(name)) return { status: 422, body: errorBody("Reference does not exist") };
      return { status: 204 };
    });
    this.on("GET /repos/{owner}/{repo}/git/commits/{commit_sha}", (req) => {
      const c = this.commits.get(req.path.commit_sha!);
      return c ? { body: example("GET /repos/{owner}/{repo}/git/commits/{commit_sha}", this.gitCommitBody(c)) } : notFound;
    });
    this.on("POST /repos/{owner}/{repo}/git/commits", (req) => {
      const b = req.body as { message: string; tree: string; parents?: string[] };
      if (!this.trees.has(b.tree) || (b.parents ?? []).some((p) => !this.commits.has(p))) return { status: 422, body: errorBody("Object does not exist") };
      const c = this.commits.get(this.commit(b.tree, b.parents ?? [], b.message))!;
      return { status: 201, body: example("POST /repos/{owner}/{repo}/git/commits", this.gitCommitBody(c), "201") };
    });
    this.on("POST /repos/{owner}/{repo}/git/blobs", (req) => {
      const b = req.body as { content: string; encoding?: string };
      const text = b.encoding === "base64" ? atob(b.content) : b.content;
      return { status: 201, body: example("POST /repos/{owner}/{repo}/git/blobs", { sha: this.blob(text) }, "201") };
    });
    this.on("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", (req) => {
      const flat = this.trees.get(req.path.tree_sha!);
      if (!flat) return notFound;
      const dirs = new Set(
        [...flat.keys()].flatMap((p) =>
          p
            .split("/")
            .slice(0, -1)
            .map((_, i, parts) => parts.slice(0, i + 1).join("/")),
        ),
      );
      const tree = [
        ...[...dirs].map((path) => ({ path, mode: "040000", type: "tree", sha: digest(`dir ${path}`), url: `https://api.github.test/t/${path}` })),
        ...[...flat].map(([path, sha]) => ({ path, mode: this.modeOf(req.path.tree_sha!, path), type: "blob", sha, size: this.blobs.get(sha)!.length, url: `https://api.github.test/b/${sha}` })),
      ];
      return { body: example("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", { sha: req.path.tree_sha, tree, truncated: false }) };
    });
    this.on("POST /repos/{owner}/{repo}/git/trees", (req) => {
      const b = req.body as { base_tree?: string; tree: { path: string; mode?: string; sha?: string | null; content?: string }[] };
      const flat = new Map(b.base_tree ? this.trees.get(b.base_tree) : []);
      const modes = new Map(b.base_tree ? this.modes.get(b.base_tree) : []);
      for (const e of b.tree) {
        modes.delete(e.path);
        if (e.content !== undefined) flat.set(e.path, this.blob(e.content));
        else if (e.sha === null) {
          if (!flat.delete(e.path)) return { status: 422, body: errorBody(`GitRPC::BadObjectState: ${e.path} does not exist`) };
          continue;
        } else flat.set(e.path, e.sha!);
        if (e.mode && e.mode !== "100644") modes.set(e.path, e.mode);
      }
      const sha = this.tree(flat, modes);
      const tree = [...flat].map(([path, s]) => ({ path, mode: modes.get(path) ?? "100644", type: "blob", sha: s, size: 1, url: `https://api.github.test/b/${s}` }));
      return { status: 201, body: example("POST /repos/{owner}/{repo}/git/trees", { sha, tree, truncated: false }, "201") };
    });
    this.on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => {
      const sha = this.resolve(req.path.ref!);
      if (!sha) return { status: 422, body: errorBody(`No commit found for SHA: ${req.path.ref}`) };
      return { body: this.commitBody("GET /repos/{owner}/{repo}/commits/{ref}", this.commits.get(sha)!) };
    });
    this.on("GET /repos/{owner}/{repo}/compare/{basehead}", (req) => {
      const [baseRef, headRef] = req.path.basehead!.split("...") as [string, string];
      const base = this.resolve(baseRef),
        head = this.resolve(headRef);
      if (!base || !head) return notFound;
      const mb = this.mergeBase(base, head);
      if (!mb) return { status: 404, body: errorBody(`No common ancestor between ${baseRef} and ${headRef}.`) };
      const ahead = this.only(head, base),
        behind = this.only(base, head);
      const status = ahead.length && behind.length ? "diverged" : ahead.length ? "ahead" : behind.length ? "behind" : "identical";
      const perPage = Number(req.query.per_page ?? 250);
      const op = "GET /repos/{owner}/{repo}/compare/{basehead}";
      const proto = example<{ commits: Proto[]; merge_base_commit: Proto; base_commit: Proto }>(op);
      const item = (base: Proto, c: Commit) => ({
        ...base,
        sha: c.sha,
        commit: { ...base.commit, message: c.message, tree: { ...base.commit.tree, sha: c.tree } },
        parents: c.parents.map((p) => ({ sha: p, url: `https://api.github.test/c/${p}`, html_url: `https://github.test/c/${p}` })),
      });
      return {
        body: example(op, {
          status,
          ahead_by: ahead.length,
          behind_by: behind.length,
          total_commits: ahead.length,
          merge_base_commit: item(proto.merge_base_commit, this.commits.get(mb)!),
          base_commit: item(proto.base_commit, this.commits.get(base)!),
          commits: ahead.slice(0, perPage).map((c) => item(proto.commits[0]!, c)),
          files: [],
        }),
      };
    });
    // The reads git_status and git_log make, so one repository serves both kinds of tool.
    this.on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => {
      const sha = this.refs.get(req.path.branch!);
      if (!sha) return { status: 404, body: errorBody("Branch not found") };
      const op = "GET /repos/{owner}/{repo}/branches/{branch}";
      const c = this.commits.get(sha)!;
      return {
        body: example(op, {
          name: req.path.branch,
          protected: req.path.branch === this.defaultBranch,
          commit: {
            sha: c.sha,
            commit: { message: c.message, tree: { sha: c.tree } },
            parents: c.parents.map((p) => ({ sha: p, url: `https://api.github.test/c/${p}`, html_url: `https://github.test/c/${p}` })),
          },
        }),
      };
    });
    this.on("GET /repos/{owner}/{repo}/commits", (req) => {
      const start = this.resolve(req.query.sha ?? this.defaultBranch);
      if (!start) return { status: 404, body: errorBody("No commit found") };
      const history: Commit[] = [];
      for (let c = this.commits.get(start); c; c = c.parents[0] ? this.commits.get(c.parents[0]) : undefined) history.push(c);
      const perPage = Number(req.query.per_page ?? 30),
        page = Number(req.query.page ?? 1);
      const op = "GET /repos/{owner}/{repo}/commits";
      const proto = example<Proto[]>(op)[0]!;
      return {
        body: history.slice((page - 1) * perPage, page * perPage).map((c) => ({
          ...proto,
          sha: c.sha,
          commit: { ...proto.commit, message: c.message, tree: { ...proto.commit.tree, sha: c.tree } },
          parents: c.parents.map((p) => ({ sha: p, url: `https://api.github.test/c/${p}`, html_url: `https://github.test/c/${p}` })),
        })),
      };
    });
    this.on("GET /repos/{owner}/{repo}/commits/{ref}/status", (req) => ({
      body: example("GET /repos/{owner}/{repo}/commits/{ref}/status", { state: "success", sha: this.resolve(req.path.ref!) ?? req.path.ref, total_count: 0, statuses: [] }),
    }));
    this.on("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", () => ({
      body: example("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", { total_count: 0, check_runs: [] }),
    }));
    this.on("GET /repos/{owner}/{repo}/pulls", () => ({ body: [] }));
    this.on("GET /repos/{owner}/{repo}/contents/{path}", (req) => {
      const sha = this.resolve(req.query.ref ?? this.defaultBranch);
      if (!sha) return { status: 404, body: errorBody(`No commit found for the ref ${req.query.ref}`) };
      const path = req.path.path!;
      const flat = this.trees.get(this.commits.get(sha)!.tree)!;
      const blob = flat.get(path);
      const op = "GET /repos/{owner}/{repo}/contents/{path}";
      if (blob === undefined) {
        if (![...flat.keys()].some((p) => p.startsWith(`${path}/`))) return notFound;
        return { body: [] };
      }
      const bytes = new TextEncoder().encode(this.blobs.get(blob)!);
      // GitHub wraps the base64 at 60 characters.
      const content = btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join("")).replace(/.{60}/g, "$&\n");
      const name = path.split("/").pop()!;
      return { body: example(op, { type: "file", encoding: "base64", size: bytes.length, name, path, content, sha: blob }) };
    });
    this.on("POST /repos/{owner}/{repo}/merges", (req) => {
      const b = req.body as { base: string; head: string; commit_message?: string };
      const base = this.refs.get(b.base);
      const head = this.resolve(b.head);
      if (!base || !head) return { status: 404, body: errorBody("Base or head does not exist") };
      if (this.ancestors(base).has(head)) return { status: 204 };
      const mb = this.mergeBase(base, head);
      if (!mb) return { status: 422, body: errorBody("No common ancestor") };
      const flat = (s: string) => this.trees.get(this.commits.get(s)!.tree)!;
      const merged = this.threeWay(flat(mb), flat(base), flat(head));
      if (!merged) return { status: 409, body: errorBody("Merge conflict") };
      const sha = this.commit(this.tree(merged), [base, head], b.commit_message ?? `Merge ${b.head} into ${b.base}`);
      this.refs.set(b.base, sha);
      return { status: 201, body: this.commitBody("POST /repos/{owner}/{repo}/merges", this.commits.get(sha)!, "201") };
    });
  }
}

interface Proto {
  commit: { tree: Record<string, unknown> } & Record<string, unknown>;
  [k: string]: unknown;
}
