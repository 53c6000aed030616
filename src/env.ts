import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";

/**
 * What the Worker reads that wrangler.toml does not declare, so `wrangler types` cannot see it:
 * secrets (`wrangler secret put`, `.dev.vars` locally), optional vars an operator may set, and
 * what the OAuth provider hands on. Bindings and declared vars come from worker-configuration.d.ts
 * (`npm run types`); this is the one hand-kept list, and it names no binding.
 */
export interface Settings {
  /** The least time between a reactive review session's steps, in ms (default 0: each step right after the last; at most an hour). */
  REVIEW_STEP_GAP_MS?: string;
  /** "1" mounts the benchmark-only routes (bench/ sets it on wrangler dev; never in production). */
  BENCH_ROUTES?: string;
  /**
   * "1" serves the MCP conformance suite's reference tools, prompts and resources beside the real
   * ones, for `npm run test:conformance` only. Set anywhere but a loopback `wrangler dev`, the Worker
   * refuses every request (src/server/conformance/setting.ts). Never in production.
   */
  CONFORMANCE_FIXTURES?: string;
  /**
   * "on" serves the server's card at GET /mcp/server-card and an AI Catalog pointing to it at
   * GET /.well-known/ai-catalog.json (the experimental Server Card extension; src/http/server-card.ts).
   */
  SERVER_CARD?: string;
  /** "off" disables semantic ranking: searches are lexical and nothing is embedded. */
  SEMANTIC_SEARCH?: string;
  /**
   * The language model of the review (and plan) tools (src/llm/index.ts): an OpenAI-compatible
   * endpoint when LLM_API_KEY and LLM_BASE_URL are both set, else Workers AI through the AI
   * binding, else none (LLM paths answer llm_not_configured). LLM_MODEL (wrangler.toml) names the model.
   */
  LLM_API_KEY?: string;
  /** The OpenAI-compatible API's base (e.g. https://api.openai.com/v1); /chat/completions is appended. */
  LLM_BASE_URL?: string;
  /** "off" turns every language-model path off, whatever is bound or set. */
  LLM_PROVIDER?: string;
  /** GitHub REST base URL (default https://api.github.com; GitHub Enterprise: https://HOST/api/v3). */
  GITHUB_API_URL?: string;
  /** Secret: encrypts the per-tenant GitHub tokens stored in D1 (docs/git.md: Connecting a tenant). */
  GITHUB_CREDENTIALS_KEY?: string;
  /** Seals input_required request state (src/server/request-state-key.ts); 32+ characters. */
  REQUEST_STATE_KEY?: string;
  /** Secrets of a GitHub App, for tenants connected through an installation. */
  GITHUB_APP_ID?: string;
  GITHUB_APP_PRIVATE_KEY?: string;
  /** Secret: signs the GitHub App's webhook deliveries to POST /webhooks/github (docs/git.md: Webhooks). */
  GITHUB_WEBHOOK_SECRET?: string;
  /** Set by the OAuth provider on every request it hands on: the helpers /authorize uses. */
  OAUTH_PROVIDER?: OAuthHelpers;
  /** Access-token lifetime in seconds (default 3600, at least 60). */
  OAUTH_ACCESS_TOKEN_TTL?: string;
  /** Local development only: exact origins (comma-separated) whose metadata documents may be on loopback or a local name. */
  OAUTH_CIMD_LOCAL_ORIGINS?: string;
  /**
   * Development and end-to-end tests only: "1" lets outgoing webhooks (docs/coordination.md: Outgoing webhooks)
   * target http URLs and loopback or private hosts, for a test receiver on 127.0.0.1. Never in production.
   */
  OUTBOUND_HOOKS_ALLOW_PRIVATE?: string;
  /** Secrets of the GitHub OAuth app behind "Sign in with GitHub"; without them the button is not offered. */
  GITHUB_OAUTH_CLIENT_ID?: string;
  GITHUB_OAUTH_CLIENT_SECRET?: string;
  /** Where GitHub's sign-in pages live (default https://github.com; GitHub Enterprise: https://HOST). */
  GITHUB_OAUTH_URL?: string;
}

// Merged into the generated Cloudflare.Env so the Worker and `cloudflare:test`'s env are one type.
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Cloudflare {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Env extends Settings {}
  }
}

/** Bindings, vars and settings the Worker receives: wrangler.toml (generated) plus Settings. */
export type Env = Cloudflare.Env;
