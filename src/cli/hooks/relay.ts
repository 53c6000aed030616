/**
 * `agent-ledger hook <client>`: the command hook a client runs for each event. It POSTs the event
 * (the client's JSON from stdin, as is) to the server's `/mcp/hooks/<client>` with the caller's key
 * and prints the server's answer, which is already in the client's output format.
 *
 * A hook must never stop an agent for the ledger's own trouble: with no configuration, an
 * unreachable server, a non-2xx answer, a time-out or an answer that is not a JSON object, it
 * prints `{}` (go on, in every client's format) and exits 0, with one line on stderr saying why.
 */
import { baseUrl, HOOK_CLIENTS, type HookClient } from "./clients";

export interface RelayOptions {
  /** The server's base address; empty when the command line has no configuration. */
  url: string;
  /** The caller's API key; empty when none is configured. */
  key: string;
  fetch: typeof fetch;
  timeoutMs: number;
  /** The registered repository (the hook command's --repository), passed on as the endpoint's query. */
  repository?: string;
}

export interface RelayResult {
  stdout: string;
  exitCode: 0;
  /** One line for stderr, or "" when all went well. */
  stderr: string;
}

/** Hook events are small; the server refuses larger bodies anyway. */
const MAX_EVENT_BYTES = 1024 * 1024;
/** An answer larger than this is not one of ours. */
const MAX_ANSWER_BYTES = 256 * 1024;
const GO_ON = "{}";

const goOn = (why: string): RelayResult => ({ stdout: GO_ON, exitCode: 0, stderr: `agent-ledger hook: ${why}; the agent goes on.` });

export async function relayHook(client: HookClient, eventText: string, options: RelayOptions): Promise<RelayResult> {
  if (!(HOOK_CLIENTS as readonly string[]).includes(client)) return goOn(`no hooks for client "${String(client).slice(0, 40)}"`);
  if (!options.url || !options.key) return goOn("no server address or API key configured");
  if (new TextEncoder().encode(eventText).byteLength > MAX_EVENT_BYTES) return goOn("the event is larger than 1 MiB and was not sent");
  const query = options.repository ? `?repository=${encodeURIComponent(options.repository).replaceAll("%2F", "/")}` : "";
  const endpoint = `${baseUrl(options.url)}/mcp/hooks/${client}${query}`;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), options.timeoutMs);
  try {
    const res = await options.fetch(endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${options.key}` },
      body: eventText,
      signal: abort.signal,
    });
    const text = await res.text();
    if (!res.ok) return goOn(`the server answered ${res.status}${res.status === 401 ? " (the key is missing, wrong or revoked)" : ""}`);
    if (text.length > MAX_ANSWER_BYTES) return goOn("the server's answer was too large");
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      return goOn("the server's answer was not JSON");
    }
    if (!answer || typeof answer !== "object" || Array.isArray(answer)) return goOn("the server's answer was not a JSON object");
    return { stdout: JSON.stringify(answer), exitCode: 0, stderr: "" };
  } catch (err) {
    if (abort.signal.aborted) return goOn(`no answer within ${options.timeoutMs} ms`);
    return goOn(`could not reach ${baseUrl(options.url)} (${err instanceof Error ? err.message.slice(0, 200) : "network error"})`);
  } finally {
    clearTimeout(timer);
  }
}
