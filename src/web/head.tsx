/** The `<head>` every server-rendered page shares: the sign-in pages' and the dashboard's. */
import type { Child } from "hono/jsx";
import { FAVICON_PATH } from "./security";

export function PageHead(props: { title: string; stylesheet: string; children?: Child }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{props.title} · agent-ledger</title>
      <link rel="stylesheet" href={props.stylesheet} />
      <link rel="icon" type="image/svg+xml" href={FAVICON_PATH} />
      {props.children}
    </head>
  );
}
