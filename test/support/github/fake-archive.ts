/**
 * Repository tarballs behind a FakeGitHub, as GitHub serves them: `GET …/tarball/{ref}` answers
 * 302 with a Location carrying a short-lived token (on codeload.github.com for api.github.com, on
 * the Enterprise host itself otherwise), and that URL serves a real gzipped tar shaped like
 * `git archive`'s: a pax global header whose comment is the commit id, then everything under
 * `owner-repo-<short sha>/`, directories before their files. The body is served in small chunks
 * and each download records how much was pulled and whether it was cancelled, so a test can
 * tell a read that stopped early from one that went to the end.
 */
import { packTar, type TarEntry } from "modern-tar";
import { errorBody, type FakeGitHub } from "./fake";
import { digest } from "./fake-repo";

/** A file's content, or a symlink to a target. */
export type ArchiveTree = Record<string, string | Uint8Array | { symlink: string }>;

export interface ServedDownload {
  url: string;
  /** The gzipped archive's length. */
  total: number;
  /** Bytes handed to the reader so far. */
  served: number;
  cancelled: boolean;
}

const TARBALL = "GET /repos/{owner}/{repo}/tarball/{ref}";
const LINK_TOKEN = "codeload-link-token";

export class FakeArchives {
  readonly served: ServedDownload[] = [];
  /** When set, the tarball request redirects here instead (a foreign host, for the refusal). */
  redirectTo: string | null = null;
  /** Bytes per chunk of a download. */
  chunkBytes = 4096;
  /** How names over 100 bytes are written: pax `path` records (what git archive does) or GNU `././@LongLink` entries. */
  longNames: "pax" | "gnu" = "pax";
  /** Writes git archive's pax global header (the commit id); off, the reader has only the top directory's name. */
  globalHeader = true;
  /**
   * Cuts every download short: the gzip stream after `at` bytes (a connection dropped mid-transfer),
   * or the tar before it is compressed (an archive cut off inside a well-formed gzip stream).
   */
  cut: { layer: "gzip" | "tar"; at: number } | null = null;
  /** The last tar built, uncompressed, for tests that check its shape. */
  lastTar: Uint8Array | null = null;
  /** Where downloads are served: codeload for api.github.com, the API's own host for Enterprise. */
  readonly downloadBase: string;
  private readonly commits = new Map<string, { sha: string; tree: ArchiveTree }>();

  constructor(readonly gh: FakeGitHub) {
    const api = new URL(gh.apiBase);
    this.downloadBase = api.host === "api.github.com" ? "https://codeload.github.com" : `${api.origin}/_codeload`;
    gh.on(TARBALL, (req) => {
      const { owner, repo, ref } = req.path as { owner: string; repo: string; ref: string };
      if (!this.commits.has(key(owner, repo, ref))) return { status: 404, body: errorBody("Not Found") };
      const location = this.redirectTo ?? `${this.downloadBase}/${owner}/${repo}/legacy.tar.gz/${ref}?token=${LINK_TOKEN}`;
      return { status: 302, headers: { location } };
    });
    gh.serveDownloads(`${this.downloadBase}/`, (req) => this.download(req));
  }

  /** Registers `tree` as the repository's files at `ref` (and at its commit); returns the commit id. */
  add(owner: string, repo: string, ref: string, tree: ArchiveTree): string {
    const sha = digest(`archive ${owner}/${repo} ${ref} ${JSON.stringify(Object.keys(tree))}`);
    this.commits.set(key(owner, repo, ref), { sha, tree });
    this.commits.set(key(owner, repo, sha), { sha, tree });
    return sha;
  }

  private async download(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const m = /^\/(?:_codeload\/)?([^/]+)\/([^/]+)\/legacy\.tar\.gz\/(.+)$/.exec(url.pathname);
    const commit = m ? this.commits.get(key(m[1]!, m[2]!, decodeURIComponent(m[3]!))) : undefined;
    // The link's own token is what codeload checks; the Enterprise host also wants the API token.
    const enterprise = !this.downloadBase.startsWith("https://codeload.github.com");
    if (url.searchParams.get("token") !== LINK_TOKEN || (enterprise && !req.headers.get("authorization")?.startsWith("Bearer "))) {
      return new Response("Unauthorized", { status: 401 });
    }
    if (!m || !commit) return new Response("Not Found", { status: 404 });
    const tar = await packTar(this.entries(`${m[1]}-${m[2]}-${commit.sha.slice(0, 7)}`, commit.sha, commit.tree));
    this.lastTar = this.cut?.layer === "tar" ? tar.slice(0, this.cut.at) : tar;
    const whole = new Uint8Array(await new Response(new Blob([this.lastTar]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
    const gz = this.cut?.layer === "gzip" ? whole.slice(0, this.cut.at) : whole;
    const record: ServedDownload = { url: req.url, total: gz.length, served: 0, cancelled: false };
    this.served.push(record);
    const chunk = this.chunkBytes;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (record.served >= gz.length) return controller.close();
          const next = gz.slice(record.served, record.served + chunk);
          record.served += next.length;
          controller.enqueue(next);
        },
        cancel() {
          record.cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { headers: { "content-type": "application/x-gzip" } });
  }

  /** The archive's entries in git archive's order: global header, top directory, then each directory before its contents. */
  private entries(top: string, sha: string, tree: ArchiveTree): TarEntry[] {
    const comment = `comment=${sha}\n`;
    const record = `${comment.length + 3} ${comment}`; // "52 comment=<40 hex>\n": the length counts itself
    const out: TarEntry[] = [
      ...(this.globalHeader ? [{ header: { name: "pax_global_header", type: "pax-global-header" as const, size: record.length }, body: record }] : []),
      { header: { name: `${top}/`, type: "directory", size: 0 } },
    ];
    const dirs = new Set<string>();
    for (const path of Object.keys(tree).sort()) {
      const parts = path.split("/");
      for (let i = 1; i < parts.length; i++) {
        const dir = parts.slice(0, i).join("/");
        if (!dirs.has(dir)) {
          dirs.add(dir);
          out.push({ header: { name: `${top}/${dir}/`, type: "directory", size: 0 } });
        }
      }
      const content = tree[path]!;
      const name = `${top}/${path}`;
      if (typeof content === "object" && !(content instanceof Uint8Array)) {
        out.push({ header: { name, type: "symlink", linkname: content.symlink, size: 0 } });
        continue;
      }
      const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
      out.push(...this.named(name, (n) => ({ header: { name: n, size: bytes.length }, body: bytes })));
    }
    return out;
  }

  /** An entry under a long name, GNU style when asked: a `././@LongLink` entry holding the name, then the entry with it cut to 100. */
  private named(name: string, entry: (name: string) => TarEntry): TarEntry[] {
    const bytes = new TextEncoder().encode(name);
    if (this.longNames === "pax" || bytes.length <= 100) return [entry(name)];
    const longLink = new Uint8Array([...bytes, 0]);
    return [{ header: { name: "././@LongLink", type: "gnu-long-name", size: longLink.length }, body: longLink }, entry(new TextDecoder().decode(bytes.slice(0, 100)))];
  }
}

const key = (owner: string, repo: string, ref: string) => `${owner}/${repo}@${ref}`;
