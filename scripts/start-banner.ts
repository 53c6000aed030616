/** What `npm start` prints once the server is on its way: where it is, the key, and how to connect and stop. */

/** The MCP Inspector, pinned: 2.x takes the URL and headers on its command line, and needs Node 22.19+ (npx in this folder runs it on the project's Node 24). */
export const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";

export const inspectorCommand = (url: string, key: string) => `npx -y ${INSPECTOR} --transport http --server-url ${url} --header "Authorization: Bearer ${key}"`;

export function startBanner(port: number, key: string): string {
  const url = `http://127.0.0.1:${port}/mcp`;
  return `
agent-ledger is starting on ${url}   (another port: npm start -- --port <n>, or PORT=<n> npm start)
Dashboard: http://127.0.0.1:${port}/app   (sign in with the key below)
Development API key (tenant 'local', actor 'dev'):

  ${key}

Connect Claude Code:
  claude mcp add --transport http agent-ledger ${url} --header "Authorization: Bearer ${key}"
From a terminal: printf '%s\\n' "${key}" | npx agent-ledger login --url http://127.0.0.1:${port} --key-stdin
GitHub tools (toolset git): printf %s "$GITHUB_TOKEN" | npm run github -- set-token --tenant local
Connect the MCP Inspector (from this folder):
  ${inspectorCommand(url, key)}
Stop the server with Ctrl-C (or SIGTERM): wrangler and workerd stop with it.
`;
}
