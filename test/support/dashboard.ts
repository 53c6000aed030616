/** The dashboard's workerd tests: a browser signed in with a key, and seeding through the MCP tools. */
import { expect, vi } from "vitest";
import { connectClient, workerFetch } from "./helpers";
import { Browser, hiddenField } from "./oauth-flow";

// A dashboard page runs several tools and each test seeds through MCP clients: more than the default 5 s on a busy machine.
vi.setConfig({ testTimeout: 20_000 });

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

/** A tool call through MCP as `key`, expected to succeed. */
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

export const textOf = (html: string) => html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ");

/** A tool call through MCP as `key` that may fail: its structured answer, error envelope included. */
export async function attempt(key: string, name: string, args: Record<string, unknown>, path = "/mcp?toolsets=all") {
  const { client } = await connectClient(key, path);
  try {
    return (await client.callTool({ name, arguments: args })).structuredContent as Record<string, unknown>;
  } finally {
    await client.close();
  }
}
