/**
 * A pull request's issue comments as GitHub keeps them, behind the fake's comment endpoints, plus the
 * pull request's files: the stand-in the pull request story writes its comment to.
 */
import { errorBody, example, exampleItem, type FakeGitHub } from "./fake";

export class FakeComments {
  readonly bodies = new Map<number, string>();
  /** Comments someone else wrote: these credentials may not edit them. */
  readonly theirs = new Set<number>();
  next = 5001;

  constructor(
    private readonly repo: string,
    private readonly pr: number,
    private readonly web = "https://github.com",
  ) {}

  serve(gh: FakeGitHub, files: string[]): FakeGitHub {
    const url = (id: number) => `${this.web}/${this.repo}/pull/${this.pr}#issuecomment-${id}`;
    const item = (id: number, body: string) => exampleItem("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", { id, body, html_url: url(id) });
    gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", () => ({ body: files.map((filename) => exampleItem("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", { filename })) }));
    // Oldest (lowest id) first, as GitHub lists them.
    gh.on("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", () => ({ body: [...this.bodies].sort(([a], [b]) => a - b).map(([id, body]) => item(id, body)) }));
    gh.on("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", (req) => {
      const id = this.next++;
      this.bodies.set(id, String(req.body!.body));
      return { status: 201, body: example("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { id, body: req.body!.body, html_url: url(id) }, "201") };
    });
    gh.on("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", (req) => {
      const id = Number(req.path.comment_id);
      if (!this.bodies.has(id)) return { status: 404, body: errorBody("Not Found") };
      if (this.theirs.has(id)) return { status: 403, body: errorBody("Resource not accessible by integration") };
      this.bodies.set(id, String(req.body!.body));
      return { body: example("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", { id, body: req.body!.body, html_url: url(id) }) };
    });
    return gh;
  }
}
