/** The dashboard's workerd tests: a browser signed in with an API key, seeding through the MCP tools, a page's text. */
import { expect } from "vitest";
import { connectClient, workerFetch } from "./helpers";
import { Browser, hiddenField } from "./oauth-flow";

export const BASE = "https://ledger.test";
export const send = (url: string, init?: RequestInit) => workerFetch(url, init);

/** A browser signed in to the dashboard with `key`. */
export async function signedIn(key: string, readonly = false): Promise<Browser> {
  const browser = new Browser(send);
  const page = await browser.fetch(`${BASE}/app/signin`);
  const csrf = hiddenField(await page.text(), "csrf")!;
  const res = await browser.postForm(`${BASE}/app/signin`, { csrf, api_key: key, ...(readonly ? { readonly: "1" } : {}) });
  expect(res.status, await res.clone().text()).toBe(303);
  expect(res.headers.get("Location")).toBe("/app");
  return browser;
}

/** A tool's answer, called over MCP as `key`'s holder; a refusal fails the test. */
export async function call(key: string, name: string, args: Record<string, unknown>, path = "/mcp?toolsets=all") {
  const { client } = await connectClient(key, path);
  try {
    const r = await client.callTool({ name, arguments: args });
    expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
    return r.structuredContent as Record<string, unknown>;
  } finally {
    await client.close();
  }
}

/** A page's visible text, tags dropped and whitespace folded. */
export const textOf = (html: string) => html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ");
