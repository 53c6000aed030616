/** The dashboard's sign-in: an API key exchanged for a session cookie; a plain form, no script. */
import { CSRF_FIELD } from "../security";
import { AppLayout } from "./layout";

export function AppSignInPage(props: { csrf: string; error?: string }) {
  return (
    <AppLayout title="Sign in">
      <div class="narrow">
        <h1>Sign in to the dashboard</h1>
        <p>
          Paste an API key of your team's agent-ledger. The key stays on the server; your browser keeps only a session cookie, which ends when you sign out, after 12 hours, or when the key is revoked.
        </p>
        {props.error ? (
          <p class="error" role="alert">
            {props.error}
          </p>
        ) : null}
        <form method="post" action="/app/signin" class="card">
          <input type="hidden" name={CSRF_FIELD} value={props.csrf} />
          <label for="api_key">API key</label>
          <input id="api_key" name="api_key" type="password" autocomplete="off" required maxlength={200} />
          <label>
            <input type="checkbox" name="readonly" value="1" /> Read-only (no forms that change anything)
          </label>
          <p>
            <button class="primary" type="submit">
              Sign in
            </button>
          </p>
        </form>
      </div>
    </AppLayout>
  );
}
