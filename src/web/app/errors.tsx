/** The page a dashboard route answers when a tool refused: what went wrong and how to go on. */
import { AppLayout, type Viewer } from "./layout";

export function ErrorPage(props: { viewer?: Viewer; title: string; message: string; hint?: string }) {
  return (
    <AppLayout title={props.title} viewer={props.viewer}>
      <h1>{props.title}</h1>
      <div class="error" role="alert">
        <p>{props.message}</p>
        {props.hint ? <p class="muted">{props.hint}</p> : null}
      </div>
      <p>
        <a href="/app">Back to the overview</a>
      </p>
    </AppLayout>
  );
}
