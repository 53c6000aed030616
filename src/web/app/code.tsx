/**
 * Code: each repository's index (phase, progress, indexed commit, freshness as last checked), the
 * reactive review sessions newest first, and one session with its findings. Data comes from the tools.
 */
import { FilterForm, HeadRow, OlderLink } from "./fields";
import { AppLayout, type Viewer } from "./layout";
import { relative } from "./overview";

export const CODE_PATH = "/app/code";

type Row = Record<string, unknown>;
const text = (v: unknown) => (v === null || v === undefined ? "" : String(v));

export interface CodeData {
  now: Date;
  indexes: Row[];
  session: string;
  /** list_review_sessions' page, newest first, and the query string of the next (older) one. */
  sessions: Row[];
  olderSessions?: string;
  /** get_review_status's answer for the session asked about. */
  review?: { session: Row; progress: Row; findings_count: number; result?: { summary: string; risk_score: number; findings: Row[] } };
}

const PHASE_CLASS: Record<string, string> = { complete: "pill good", failed: "pill bad" };

function Fresh(props: { fresh: unknown }) {
  if (props.fresh === true) return <span class="good">at the head</span>;
  if (props.fresh === false) return <span class="warn">behind the head</span>;
  return <span class="muted">not checked</span>;
}

const sessionHref = (id: unknown) => `${CODE_PATH}?session=${encodeURIComponent(text(id))}#review-heading`;

function Sessions(props: { sessions: Row[]; older?: string; now: Date }) {
  if (!props.sessions.length) return <p class="muted">No review session yet: reactive_review_pr, or a pull-request webhook, starts one.</p>;
  return (
    <>
      <div class="scroll">
        <table id="review-sessions">
          <HeadRow cols={["Pull request", "Status", "Steps", "Findings", "Started"]} />
          <tbody>
            {props.sessions.map((s) => {
              const p = (s.progress ?? {}) as Row;
              return (
                <tr>
                  <th scope="row">
                    <a href={sessionHref(s.session_id)}>
                      {text(s.repo)}
                      {s.pull_number ? ` #${text(s.pull_number)}` : ""}
                    </a>{" "}
                    <code>{text(s.commit_hash).slice(0, 12)}</code>
                  </th>
                  <td>
                    <span class={s.status === "failed" ? "pill bad" : s.status === "completed" ? "pill good" : "pill"}>{text(s.status)}</span>
                    {s.error ? <span class="bad"> {text(s.error)}</span> : null}
                  </td>
                  <td>
                    {text(p.completed_steps)}/{text(p.total_steps)}
                  </td>
                  <td>{text(s.findings_count)}</td>
                  <td>
                    {relative(text(s.created_at), props.now)} <span class="muted">({text(s.source)})</span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <OlderLink path={CODE_PATH} query={props.older} label="Older review sessions" />
    </>
  );
}

function Review(props: { review: NonNullable<CodeData["review"]>; now: Date }) {
  const { session: s, progress: p, result } = props.review;
  return (
    <section class="card" aria-labelledby="review-heading">
      <h2 id="review-heading">
        {text(s.repo)}
        {s.pull_number ? ` #${text(s.pull_number)}` : ""} {text(s.title)}
      </h2>
      <p>
        <span class={s.status === "failed" ? "pill bad" : s.status === "completed" ? "pill good" : "pill"}>{text(s.status)}</span> {text(p.completed_steps)}/{text(p.total_steps)} steps ·{" "}
        {props.review.findings_count} finding(s) · commit <code>{text(s.commit_hash).slice(0, 12)}</code> · started {relative(text(s.created_at), props.now)}
      </p>
      {s.error ? <p class="error">{text(s.error)}</p> : null}
      {s.review_url ? (
        <p>
          <a href={text(s.review_url)}>The published review</a>
        </p>
      ) : null}
      {result ? (
        <>
          <p class="prose">
            Risk {result.risk_score}/5. {result.summary}
          </p>
          <div class="scroll">
            <table>
              <HeadRow cols={["Severity", "Finding", "Where"]} />
              <tbody>
                {result.findings.map((f) => {
                  const at = (f.location ?? {}) as Row;
                  return (
                    <tr>
                      <td>{text(f.severity)}</td>
                      <td>
                        {text(f.title)}
                        <br />
                        <span class="muted">{text(f.recommendation)}</span>
                      </td>
                      <td>
                        <code>
                          {text(at.file)}
                          {at.startLine ? `:${text(at.startLine)}` : ""}
                        </code>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </section>
  );
}

export function CodePage(props: { viewer: Viewer; data: CodeData }) {
  const { data } = props;
  return (
    <AppLayout title="Code" viewer={props.viewer} current={CODE_PATH}>
      <h1>Code</h1>
      <h2>Indexes</h2>
      {data.indexes.length ? (
        <div class="scroll">
          <table id="indexes">
            <HeadRow cols={["Repository", "Phase", "Files", "Indexed commit", "Fresh"]} />
            <tbody>
              {data.indexes.map((i) => (
                <tr>
                  <th scope="row">
                    {text(i.repo)}@{text(i.ref)}
                  </th>
                  <td>
                    <span class={PHASE_CLASS[text(i.phase)] ?? "pill"}>{text(i.phase)}</span>
                    {(i.errors as string[] | undefined)?.length ? <span class="bad"> {(i.errors as string[])[0]}</span> : null}
                  </td>
                  <td>
                    {text(i.files_done)}/{text(i.files_total)}
                  </td>
                  <td>{i.indexed_commit ? <code>{text(i.indexed_commit).slice(0, 12)}</code> : <span class="muted">none yet</span>}</td>
                  <td>
                    <Fresh fresh={i.fresh} />
                    {i.last_indexed_at ? <span class="muted"> · indexed {relative(text(i.last_indexed_at), data.now)}</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p>No repository is indexed yet (index_workspace starts one).</p>
      )}
      <h2>Reactive reviews</h2>
      <Sessions sessions={data.sessions} older={data.olderSessions} now={data.now} />
      <FilterForm action={CODE_PATH} label="Find a review session" button="Show">
        <label>
          Review session id
          <input type="text" name="session" value={data.session} maxlength={128} />
        </label>
      </FilterForm>
      {data.review ? <Review review={data.review} now={data.now} /> : <p class="muted">Pick a session above, or enter its id, to see its progress and findings.</p>}
    </AppLayout>
  );
}
