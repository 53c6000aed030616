/**
 * The command line's one way to the server: the MCP SDK's own client over Streamable HTTP, with the
 * API key as a bearer header or the OAuth tokens `login` saved (refreshed by the SDK and written
 * back). Every tool answers the envelope of DESIGN.md; a transport or protocol failure becomes the
 * same shape, so every command prints and exits one way.
 */
import { Client, StreamableHTTPClientTransport, type OAuthClientProvider, type Tool } from "@modelcontextprotocol/client";
import { saveConfig, type Config } from "./config";
import { CLI_VERSION } from "./version";

/** The protocol revision the command line speaks (the server's current one). */
export const PROTOCOL_REVISION = "2026-07-28";

export interface Envelope {
  ok: boolean;
  error?: { code: string; message: string; hint?: string; retryable?: boolean };
  [key: string]: unknown;
}

export interface CallResult {
  envelope: Envelope;
  /** The tool's own text rendering (its summary or Markdown), without the JSON copy of the envelope. */
  text: string;
}

/** Asks the person a yes/no question (a confirmation the server asks for); false when nobody can answer. */
export type Asker = (message: string) => Promise<boolean>;

export interface Ledger {
  readonly url: string;
  call(name: string, args: Record<string, unknown>): Promise<CallResult>;
  listTools(): Promise<Tool[]>;
  readResource(uri: string): Promise<string>;
  protocolVersion(): string | undefined;
  close(): Promise<void>;
}

export class LedgerError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** Tools end their text with the envelope as one line of JSON, for clients that read no structured content. */
function withoutJsonCopy(text: string): string {
  const cut = text.lastIndexOf("\n");
  const last = text.slice(cut + 1);
  return last.startsWith("{") ? text.slice(0, Math.max(cut, 0)) : text;
}

/** OAuth state lives in the config file; the SDK refreshes tokens through this and we persist them. */
function oauthProvider(config: Config): OAuthClientProvider {
  const state = (config.oauth ??= {});
  const persist = () => saveConfig(config.file, { url: config.url, oauth: state });
  return {
    get redirectUrl() {
      return undefined;
    },
    get clientMetadata() {
      return { client_name: "agent-ledger CLI", redirect_uris: [], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "none" };
    },
    clientInformation: () => state.client as never,
    saveClientInformation: async (info) => {
      state.client = info as Record<string, unknown>;
      await persist();
    },
    tokens: () => state.tokens as never,
    saveTokens: async (tokens) => {
      state.tokens = tokens as Record<string, unknown>;
      await persist();
    },
    redirectToAuthorization: () => {
      throw new LedgerError("unauthorized", "The saved sign-in has expired.", "Run `agent-ledger login` again.");
    },
    saveCodeVerifier: () => undefined,
    codeVerifier: () => "",
  };
}

function describeFailure(err: unknown, url: string): LedgerError {
  if (err instanceof LedgerError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
  if (/\b401\b|unauthorized|invalid_token/i.test(message))
    return new LedgerError("unauthorized", `The server at ${url} refused the credential.`, "Check AGENT_LEDGER_KEY, or run `agent-ledger login` again.");
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|fetch failed|ECONNRESET|ETIMEDOUT|network/i.test(`${message} ${cause}`))
    return new LedgerError("unreachable", `Cannot reach ${url} (${cause || message}).`, "Is the server running? Check the URL with `agent-ledger doctor`.");
  return new LedgerError("transport_error", message.slice(0, 500), "Run `agent-ledger doctor` to check the connection.");
}

export interface ConnectOptions {
  /** `?toolsets=` of the MCP URL; the command line sees every tool by default. */
  toolsets?: string;
  ask?: Asker;
  fetch?: typeof fetch;
}

export async function connect(config: Config, options: ConnectOptions = {}): Promise<Ledger> {
  const endpoint = new URL(`${config.url}/mcp`);
  endpoint.searchParams.set("toolsets", options.toolsets ?? "all");
  const headers: Record<string, string> = {};
  if (config.key) headers.Authorization = `Bearer ${config.key}`;
  const transport = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers },
    ...(config.key || !config.oauth?.tokens ? {} : { authProvider: oauthProvider(config) }),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const client = new Client(
    { name: "agent-ledger-cli", version: CLI_VERSION },
    { versionNegotiation: { mode: { pin: PROTOCOL_REVISION } }, capabilities: options.ask ? { elicitation: { form: {} } } : {} },
  );
  if (options.ask) {
    const ask = options.ask;
    client.setRequestHandler("elicitation/create", async (request) => {
      const yes = await ask(request.params.message);
      return yes ? { action: "accept", content: { confirm: true } } : { action: "decline" };
    });
  }
  try {
    await client.connect(transport);
  } catch (err) {
    throw describeFailure(err, config.url);
  }
  return {
    url: config.url,
    async call(name, args) {
      let result;
      try {
        result = await client.callTool({ name, arguments: args });
      } catch (err) {
        throw describeFailure(err, config.url);
      }
      const texts = (result.content ?? []).filter((c): c is { type: "text"; text: string } => c.type === "text").map((c) => withoutJsonCopy(c.text));
      const text = texts.filter(Boolean).join("\n");
      const structured = result.structuredContent as Envelope | undefined;
      const envelope: Envelope = structured && typeof structured.ok === "boolean" ? structured : result.isError ? { ok: false, error: { code: "tool_error", message: text } } : { ok: true, text };
      return { envelope, text };
    },
    async listTools() {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      try {
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined);
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
      } catch (err) {
        throw describeFailure(err, config.url);
      }
      return tools;
    },
    async readResource(uri) {
      try {
        const res = await client.readResource({ uri });
        return res.contents.map((c) => ("text" in c ? c.text : "")).join("\n");
      } catch (err) {
        throw describeFailure(err, config.url);
      }
    },
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    close: () => client.close().catch(() => undefined),
  };
}
