/**
 * The page a dashboard route answers when a tool refuses: not found (another tenant's id looks the
 * same as a missing one), or input the tool would not take, with the tool's own message and hint.
 */
import { AppLayout, type Viewer } from "./layout";

export interface ErrorInfo {
  status: number;
  message: string;
  hint?: string;
}

const HEADINGS: Record<number, string> = { 400: "That request is not valid", 403: "Not allowed", 404: "Not found" };

export function ErrorPage(props: { viewer: Viewer; error: ErrorInfo; back?: [string, string] }) {
  const heading = HEADINGS[props.error.status] ?? "Something went wrong";
  return (
    <AppLayout title={heading} viewer={props.viewer}>
      <h1>{heading}</h1>
      <p class="error" role="alert">
        {props.error.message}
      </p>
      {props.error.hint ? <p class="muted">{props.error.hint}</p> : null}
      {props.back ? (
        <p>
          <a href={props.back[0]}>{props.back[1]}</a>
        </p>
      ) : null}
    </AppLayout>
  );
}
