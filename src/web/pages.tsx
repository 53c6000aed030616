/**
 * The OAuth sign-in and consent pages: server-rendered Hono JSX (which escapes every value, and
 * the client's name and URIs are the client's to choose), plain forms that work without script.
 */
import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import type { Child } from "hono/jsx";
import { SCOPE_READ, SCOPE_WRITE } from "../auth/caller";
import { PageHead } from "./head";
import { STYLESHEET_PATH, CSRF_FIELD } from "./security";

function Layout(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <PageHead title={props.title} stylesheet={STYLESHEET_PATH} />
      <body>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/** Who is asking, as the MCP authorization spec asks a consent page to show it. */
function ClientFacts(props: { client: ConsentDescription }) {
  const { client } = props;
  return (
    <section aria-label="Client">
      <p>
        <strong>{client.clientName}</strong>{" "}
        {client.clientDomain ? (
          <span>
            published by <strong>{client.clientDomain}</strong>
          </span>
        ) : (
          <span class="muted">(registered itself; its name is not verified)</span>
        )}
      </p>
      <p>
        Access will be sent to <strong>{client.redirectHost}</strong>.
      </p>
      {client.redirectIsLoopback ? <p class="warning">This sends access to an app on your computer. Continue only if you just started signing in from it.</p> : null}
    </section>
  );
}

export function SignInPage(props: { client: ConsentDescription; action: string; csrf: string; github: boolean; error?: string }) {
  return (
    <Layout title="Sign in">
      <h1>Sign in to agent-ledger</h1>
      <p>An app wants to connect to agent-ledger on your behalf:</p>
      <ClientFacts client={props.client} />
      {props.error ? (
        <p class="error" role="alert">
          {props.error}
        </p>
      ) : null}
      <form method="post" action={props.action}>
        <input type="hidden" name={CSRF_FIELD} value={props.csrf} />
        <fieldset>
          <legend>With an API key</legend>
          <label for="api_key">
            Paste an agent-ledger API key (<code>alk_…</code>); the app acts as that key's actor.
          </label>
          <input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck={false} />
          <p>
            <button class="primary" type="submit" name="signin" value="key">
              Sign in with the key
            </button>
          </p>
        </fieldset>
        {props.github ? (
          <fieldset>
            <legend>With GitHub</legend>
            <p class="muted">Your GitHub account must be mapped to an actor by an operator.</p>
            <p>
              <button type="submit" name="signin" value="github">
                Sign in with GitHub
              </button>
            </p>
          </fieldset>
        ) : null}
      </form>
    </Layout>
  );
}

export interface ToolsetLine {
  id: string;
  description: string;
  tools: number;
}

export function ConsentPage(props: {
  client: ConsentDescription;
  handle: string;
  actor: string;
  tenant: string;
  operator: boolean;
  /** What the client asked for: the most the page offers (a client that asked only to read is offered only that). */
  access: "full" | "readonly";
  toolsets: { full: ToolsetLine[]; readonly: ToolsetLine[]; optIn: string[] };
}) {
  const list = (lines: ToolsetLine[]) => (
    <ul>
      {lines.map((t) => (
        <li>
          <strong>{t.id}</strong> ({t.tools} tool{t.tools === 1 ? "" : "s"}): <span class="muted">{t.description}</span>
        </li>
      ))}
    </ul>
  );
  return (
    <Layout title="Allow access">
      <h1>Allow {props.client.clientName} to use agent-ledger?</h1>
      <ClientFacts client={props.client} />
      <p>
        It will act as actor <strong>{props.actor}</strong> of tenant <strong>{props.tenant}</strong>
        {props.operator ? " with the operator role" : ""}.
      </p>
      <form method="post" action="/authorize/consent">
        <input type="hidden" name="handle" value={props.handle} />
        <fieldset>
          <legend>Scopes</legend>
          {props.access === "full" ? (
            <label>
              <input type="radio" name="access" value="full" checked /> Read and write (<code>{SCOPE_READ}</code> <code>{SCOPE_WRITE}</code>)
            </label>
          ) : (
            ""
          )}
          <label>
            <input type="radio" name="access" value="readonly" checked={props.access === "readonly"} /> Read only (<code>{SCOPE_READ}</code>): only tools that change nothing
          </label>
        </fieldset>
        <h2>Toolsets it will see</h2>
        {props.access === "full" ? <p class="muted">With read and write:</p> : ""}
        {props.access === "full" ? list(props.toolsets.full) : ""}
        <p class="muted">With read only:</p>
        {list(props.toolsets.readonly)}
        <p class="muted">
          The connector's URL can add {props.toolsets.optIn.join(", ")} with <code>?toolsets=</code>; read-only access stays read-only whatever the URL asks.
        </p>
        <p>
          <button class="primary" type="submit" name="decision" value="allow">
            Allow
          </button>{" "}
          <button type="submit" name="decision" value="deny">
            Deny
          </button>
        </p>
      </form>
    </Layout>
  );
}

export function MessagePage(props: { title: string; message: string; hint?: string }) {
  return (
    <Layout title={props.title}>
      <h1>{props.title}</h1>
      <p class="error" role="alert">
        {props.message}
      </p>
      {props.hint ? <p>{props.hint}</p> : null}
    </Layout>
  );
}
