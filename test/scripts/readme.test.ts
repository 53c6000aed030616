/** What the README and docs/operations.md tell a newcomer match what the scripts do. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { INSPECTOR, inspectorCommand, startBanner } from "../../scripts/start-banner";
import { ROOT } from "../../scripts/wrangler";

const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
const operations = readFileSync(path.join(ROOT, "docs", "operations.md"), "utf8");

it("the MCP Inspector command is pinned to one version and passes the key as a header, in the README and in npm start's banner", () => {
  expect(INSPECTOR).toMatch(/^@modelcontextprotocol\/inspector@\d+\.\d+\.\d+$/);
  const mentions = [...readme.matchAll(/@modelcontextprotocol\/inspector(@[\w.-]+)?/g)].map((m) => m[0]);
  expect(mentions.length).toBeGreaterThan(0);
  expect(new Set(mentions)).toEqual(new Set([INSPECTOR]));
  expect(readme).toContain(`npx -y ${INSPECTOR} --transport http --server-url http://127.0.0.1:8787/mcp \\\n  --header "Authorization: Bearer `);
  expect(startBanner(8790, "alk_x")).toContain(inspectorCommand("http://127.0.0.1:8790/mcp", "alk_x"));
});

it("the README says how to change the port and how to stop the server, and docs/operations.md how to deploy from a fresh account", () => {
  expect(readme).toContain("npm start -- --port 8788");
  expect(readme).toMatch(/\*\*Stopping\.\*\* Ctrl-C/);
  expect(operations).toContain("npm start -- --port 8788");
  expect(operations).toContain("npx wrangler login");
  expect(operations).toContain("npm run setup:cloud -- --dry-run");
  expect(startBanner(8790, "alk_x")).toContain("Stop the server with Ctrl-C");
});
