/**
 * Knowledge, skills and documents: one GET search form over the three, each ranked by its own tool
 * (knowledge_search, skill_list, docs_query), and one document's text. Rendering only; data comes
 * from the tools.
 */
import { Choice, FilterForm, plainOptions } from "./fields";
import type { Note } from "../../work/knowledge/model";
import type { Skill } from "../../work/skills/model";
import { AppLayout, type Viewer } from "./layout";
import { relative } from "./overview";

export const KNOWLEDGE_PATH = "/app/knowledge";
export const DOCUMENTS_PATH = "/app/documents";
export const documentHref = (hash: string) => `${DOCUMENTS_PATH}/${encodeURIComponent(hash)}`;
export const noteHref = (id: string) => `${KNOWLEDGE_PATH}/notes/${encodeURIComponent(id)}`;

export type FoundNote = Note & { snippet: string; similarity: number | null };

export interface DocView {
  hash: string;
  path: string;
  title?: string;
  snippet?: string;
  size?: number;
  modified?: string;
  tags?: string[];
}

export interface KnowledgeData {
  now: Date;
  q: string;
  kind: string;
  kinds: readonly string[];
  lexical: boolean;
  /** knowledge_search's answer: ranked with words, the newest notes without. */
  notes: { items: FoundNote[]; mode: string; match: string; note: string };
  skills: Skill[];
  /** Actors' names by id, where the page knows them. */
  names: Map<string, string>;
  documents: { items: DocView[]; total: number; searched: boolean; warnings: string[] };
}

function Tags(props: { tags?: string[] }) {
  if (!props.tags?.length) return null;
  return (
    <>
      {props.tags.map((t) => (
        <>
          {" "}
          <span class="pill">{t}</span>
        </>
      ))}
    </>
  );
}

function Notes(props: { data: KnowledgeData }) {
  const { notes, now } = props.data;
  const listed = notes.mode === "list";
  return (
    <>
      <p class="muted" aria-live="polite">
        {listed ? (
          `The ${notes.items.length} newest note(s). Type words above to search them all, ranked by words and meaning as knowledge_search ranks them.`
        ) : (
          <>
            {notes.items.length} note(s), best match first ({notes.mode}
            {notes.match !== "none" ? `, ${notes.match}` : ""}).{notes.note ? ` ${notes.note}` : ""}
          </>
        )}
      </p>
      {notes.items.length ? (
        <ul class="plain" id="notes">
          {notes.items.map((n) => (
            <li>
              <span class="pill">{n.kind}</span> <a href={noteHref(n.id)}>{n.title}</a>
              <Tags tags={n.tags} />
              {n.stale ? <span class="pill warn"> stale since {relative(n.stale.at, now)}</span> : null}
              <p class="prose">{n.snippet}</p>
              <span class="muted">
                v{n.version} · updated {relative(n.updated_at, now)} by {props.data.names.get(n.updated_by) ?? n.updated_by}
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <p>{listed ? "No notes yet." : "No notes match."}</p>
      )}
    </>
  );
}

function Skills(props: { skills: Skill[]; q: string }) {
  if (!props.skills.length) return <p>{props.q ? "No skills match." : "No skills yet."}</p>;
  return (
    <ul class="plain" id="skills">
      {props.skills.map((s) => (
        <li>
          <strong>{s.name}</strong> <code>{s.slug}</code> <span class="muted">v{s.version}</span>
          <Tags tags={s.tags} />
          <br />
          {s.description}
        </li>
      ))}
    </ul>
  );
}

function Documents(props: { documents: KnowledgeData["documents"]; now: Date }) {
  const { documents } = props;
  return (
    <>
      <p class="muted">
        {documents.searched ? `${documents.items.length} of ${documents.total} matching document(s), best match first.` : `${documents.items.length} of ${documents.total} document(s), newest first.`}
        {documents.warnings.map((w) => ` ${w}`)}
      </p>
      {documents.items.length ? (
        <ul class="plain" id="documents">
          {documents.items.map((d) => (
            <li>
              <a href={documentHref(d.hash)}>{d.title || d.path}</a> <code>{d.path}</code>
              <Tags tags={d.tags} />
              {d.snippet ? <p class="prose">{d.snippet}</p> : null}
              {d.modified ? <span class="muted">modified {relative(d.modified, props.now)}</span> : null}
            </li>
          ))}
        </ul>
      ) : (
        <p>{documents.searched ? "No documents match." : "No documents yet."}</p>
      )}
    </>
  );
}

export function KnowledgePage(props: { viewer: Viewer; data: KnowledgeData }) {
  const { data } = props;
  return (
    <AppLayout title="Knowledge" viewer={props.viewer} current={KNOWLEDGE_PATH}>
      <h1>Knowledge, skills and documents</h1>
      <FilterForm action={KNOWLEDGE_PATH} label="Search knowledge, skills and documents" button="Search">
        <label>
          Words
          <input type="text" name="q" value={data.q} maxlength={500} />
        </label>
        <Choice name="kind" label="Note kind" any="Any kind" value={data.kind} options={plainOptions(data.kinds)} />
        <label class="inline">
          <input type="checkbox" name="lexical" value="1" checked={data.lexical} /> Skip ranking by meaning (words alone)
        </label>
      </FilterForm>
      <section aria-labelledby="notes-h">
        <h2 id="notes-h">Notes</h2>
        <Notes data={data} />
      </section>
      <section aria-labelledby="skills-h">
        <h2 id="skills-h">Skills</h2>
        <Skills skills={data.skills} q={data.q} />
      </section>
      <section aria-labelledby="documents-h">
        <h2 id="documents-h">Documents</h2>
        <Documents documents={data.documents} now={data.now} />
      </section>
    </AppLayout>
  );
}

export interface DocumentData {
  now: Date;
  path: string;
  hash: string;
  size: number;
  mime_type: string;
  modified: string;
  tags: string[];
  /** The text, cut at the page's bound; absent for a document that is not text. */
  content?: string;
  truncated: boolean;
}

export function DocumentPage(props: { viewer: Viewer; data: DocumentData }) {
  const d = props.data;
  return (
    <AppLayout title={d.path} viewer={props.viewer} current={KNOWLEDGE_PATH}>
      <p>
        <a href={KNOWLEDGE_PATH}>Knowledge, skills and documents</a>
      </p>
      <h1>
        <code>{d.path}</code>
      </h1>
      <dl class="facts">
        <dt>Hash</dt>
        <dd>
          <code>{d.hash}</code>
        </dd>
        <dt>Type</dt>
        <dd>
          {d.mime_type} · {d.size} bytes
        </dd>
        <dt>Modified</dt>
        <dd>{relative(d.modified, d.now)}</dd>
        {d.tags.length ? (
          <>
            <dt>Tags</dt>
            <dd>
              <Tags tags={d.tags} />
            </dd>
          </>
        ) : null}
      </dl>
      {d.content === undefined ? (
        <p class="muted">This document is not text; the document store keeps its bytes (docs_query get with include_content returns them).</p>
      ) : (
        <>
          {d.truncated ? <p class="muted warn">Only the first part is shown; docs_query get returns the rest.</p> : null}
          <pre id="document-text">{d.content}</pre>
        </>
      )}
    </AppLayout>
  );
}

export interface NoteData {
  now: Date;
  note: Note;
  names: Map<string, string>;
  project?: { key: string; title: string };
}

/** One note, whole: its body, kind, tags, versions and whether a push made it stale. */
export function NotePage(props: { viewer: Viewer; data: NoteData }) {
  const { note: n, now, names, project } = props.data;
  const who = (id: string) => names.get(id) ?? id;
  return (
    <AppLayout title={n.title} viewer={props.viewer} current={KNOWLEDGE_PATH}>
      <p>
        <a href={KNOWLEDGE_PATH}>Knowledge, skills and documents</a>
      </p>
      <h1>{n.title}</h1>
      <p>
        <span class="pill">{n.kind}</span>
        <Tags tags={n.tags} />
        {n.stale ? (
          <span class="pill warn" title={`${n.stale.path} changed in ${n.stale.commit}`}>
            {" "}
            stale since {relative(n.stale.at, now)}
          </span>
        ) : null}
      </p>
      <dl class="facts">
        <dt>Project</dt>
        <dd>{project ? <a href={`/app/projects/${encodeURIComponent(project.key)}`}>{project.key}</a> : "Tenant-wide"}</dd>
        <dt>Version</dt>
        <dd>v{n.version}</dd>
        <dt>Written</dt>
        <dd>
          {relative(n.created_at, now)} by {who(n.created_by)}
        </dd>
        <dt>Updated</dt>
        <dd>
          {relative(n.updated_at, now)} by {who(n.updated_by)}
        </dd>
        <dt>Id</dt>
        <dd>
          <code>{n.id}</code>
        </dd>
      </dl>
      {n.stale ? (
        <p class="card warn">
          A push changed <code>{n.stale.path}</code> ({n.stale.commit.slice(0, 12)}) after this note was written or confirmed; knowledge_update confirms or corrects it.
        </p>
      ) : null}
      <article class="card">
        <p class="prose" id="note-body">
          {n.body}
        </p>
      </article>
    </AppLayout>
  );
}
