/**
 * `agent-ledger login`: saves the server and a credential. With a key (`--key-stdin`, `--key` or
 * AGENT_LEDGER_KEY) it checks the key against the server first; without one it signs in through the
 * server's OAuth in a browser (authorization code with PKCE, a loopback redirect on 127.0.0.1),
 * and the SDK refreshes the tokens afterwards.
 */
import { createServer } from "node:http";
import { spawn } from "node:child_process";
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/client";
import { configPath, normalizeUrl, saveConfig, type Config, type OAuthState } from "../config";
import { connect } from "../connection";
import { take, takeBool, takeString, UsageError, type Split } from "../args";
import { EXIT, type Out } from "../output";

/** How long the loopback listener waits for the browser to come back. */
const SIGN_IN_WAIT_MS = 5 * 60 * 1000;

function openBrowser(url: string): void {
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(opener, [url], { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // The URL is printed as well; a machine without a browser opener still signs in by hand.
  }
}

/** Waits on 127.0.0.1 for the authorization server's redirect; resolves with its code. */
async function loopback(): Promise<{ redirectUrl: string; code: Promise<{ code: string; iss?: string }>; close(): void }> {
  let settle!: (v: { code: string; iss?: string }) => void;
  let fail!: (e: Error) => void;
  const code = new Promise<{ code: string; iss?: string }>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const error = url.searchParams.get("error");
    const got = url.searchParams.get("code");
    res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(got ? "Signed in to agent-ledger. You can close this tab." : `Sign-in failed: ${error ?? "no code"}.`);
    if (got) settle({ code: got, iss: url.searchParams.get("iss") ?? undefined });
    else fail(new UsageError(`The server refused the sign-in (${(error ?? "no code").slice(0, 100)}).`, "Run `agent-ledger login` again and allow access."));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const timer = setTimeout(() => fail(new UsageError("Nobody finished the sign-in in the browser within 5 minutes.", "Run `agent-ledger login` again.")), SIGN_IN_WAIT_MS);
  return {
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    code,
    close: () => {
      clearTimeout(timer);
      server.close();
      server.closeAllConnections();
    },
  };
}

async function oauthSignIn(url: string, out: Out, browser: boolean): Promise<OAuthState> {
  const state: OAuthState = {};
  const back = await loopback();
  let verifier = "";
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return back.redirectUrl;
    },
    get clientMetadata() {
      return {
        client_name: "agent-ledger CLI",
        redirect_uris: [back.redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    clientInformation: () => state.client as never,
    saveClientInformation: (info) => {
      state.client = info as Record<string, unknown>;
    },
    tokens: () => state.tokens as never,
    saveTokens: (tokens) => {
      state.tokens = tokens as Record<string, unknown>;
    },
    redirectToAuthorization: (authorizationUrl) => {
      out.stderr(`Sign in to ${url} in your browser:\n  ${authorizationUrl.toString()}`);
      if (browser) openBrowser(authorizationUrl.toString());
    },
    saveCodeVerifier: (v) => {
      verifier = v;
    },
    codeVerifier: () => verifier,
  };
  try {
    const first = await auth(provider, { serverUrl: `${url}/mcp` });
    if (first !== "AUTHORIZED") {
      const { code, iss } = await back.code;
      await auth(provider, { serverUrl: `${url}/mcp`, authorizationCode: code, iss });
    }
  } finally {
    back.close();
  }
  if (!state.tokens) throw new UsageError("The sign-in ended without tokens.", "Run `agent-ledger login` again, or use --key-stdin with an API key.");
  return state;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function login(words: Split, out: Out): Promise<number> {
  const env = process.env;
  const rawUrl = takeString(words, "url") ?? words.positionals.shift() ?? env.AGENT_LEDGER_URL;
  if (!rawUrl) throw new UsageError("login needs the server's URL.", "Run `agent-ledger login --url https://your-ledger.example`.");
  const url = normalizeUrl(rawUrl);
  const fromStdin = takeBool(words, "key-stdin");
  const key = fromStdin ? (await readStdin()).trim() : (takeString(words, "key") ?? env.AGENT_LEDGER_KEY);
  const browser = take(words, "no-browser").length === 0;
  const file = configPath(env);
  const config: Config = key ? { url, key, source: "file", file } : { url, oauth: await oauthSignIn(url, out, browser), source: "file", file };
  // Proves the credential before it is saved: a typo is caught here, not at the first real call.
  const ledger = await connect(config);
  try {
    const { envelope } = await ledger.call("whoami", {});
    if (!envelope.ok) throw new UsageError(`The server answered whoami with ${envelope.error?.code}.`, envelope.error?.hint ?? "Check the key.");
    await saveConfig(file, config);
    const actor = (envelope.actor as { display_name?: string } | undefined)?.display_name ?? "?";
    if (out.json) out.stdout(JSON.stringify({ ok: true, url, actor, config: file, auth: key ? "key" : "oauth" }, null, 2));
    else out.stdout(`Logged in to ${url} as ${actor} (${key ? "API key" : "OAuth"}); saved to ${file} (owner-only).`);
  } finally {
    await ledger.close();
  }
  return EXIT.ok;
}
