import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { ClaimsDO } from "./durable/claims";
import type { DocSessionDO } from "./durable/doc-sessions";
import type { RateLimitDO } from "./durable/rate-limit";
import type { ReviewSessionDO } from "./durable/review-sessions";
import type { SessionDO } from "./durable/session";
import type { IndexJob } from "./code/indexer";
import type { DocIndexMessage } from "./docs/index-queue";
import type { AiBinding } from "./search/embedder";
import type { VectorizeBinding } from "./search/vector-index";

/** Bindings and vars the Worker receives; see wrangler.toml. */
export interface Env {
  DB: D1Database;
  SESSIONS: DurableObjectNamespace<SessionDO>;
  CLAIMS: DurableObjectNamespace<ClaimsDO>;
  /** Document-store sessions and their pins (docs_session), one object per tenant and actor. */
  DOC_SESSIONS: DurableObjectNamespace<DocSessionDO>;
  /** Request counters, one object per API key, tenant and webhook source (docs/limits.md: Rate limits). */
  RATE_LIMITS: DurableObjectNamespace<RateLimitDO>;
  /** Requests per minute per API key; "0" turns the limit off. A tenant's override wins. */
  RATE_LIMIT_KEY_PER_MIN?: string;
  /** Requests per minute per tenant, all keys together (webhook deliveries are counted apart); "0" is off. */
  RATE_LIMIT_TENANT_PER_MIN?: string;
  /** Reactive review sessions (src/review/reactive.ts), one object per tenant and session. */
  REVIEWS: DurableObjectNamespace<ReviewSessionDO>;
  /** The least time between a reactive review session's steps, in ms (default 0: each step right after the last; at most an hour). */
  REVIEW_STEP_GAP_MS?: string;
  /** Code index jobs (src/code/workflow.ts): one instance per job, named by the job id. */
  CODE_INDEX: Workflow<IndexJob>;
  /** Document indexing off the request (src/docs/index-queue.ts): one message per stored version. */
  DOC_INDEX: Queue<DocIndexMessage>;
  /** Attachment blobs, keyed by tenant id and storage path. */
  BLOBS: R2Bucket;
  /** Comma-separated browser origins allowed to call /mcp. */
  ALLOWED_ORIGINS?: string;
  /** How long a running run may go without a heartbeat before the run reaper marks it abandoned (e.g. 2h; default 2h). */
  RUN_ABANDON_AFTER?: string;
  /** "1" mounts the benchmark-only routes (bench/ sets it on wrangler dev; never in production). */
  BENCH_ROUTES?: string;
  /**
   * Production semantic search: Workers AI for embeddings and a Vectorize index for vectors, both
   * or neither (docs/work.md: Knowledge and semantic search). Without them the local embedder and D1 index are used.
   */
  AI?: AiBinding;
  VECTORS?: VectorizeBinding;
  /** Workers AI embedding model; must match the Vectorize index's dimensions. */
  EMBEDDING_MODEL?: string;
  /** "off" disables semantic ranking: searches are lexical and nothing is embedded. */
  SEMANTIC_SEARCH?: string;
  /**
   * The language model of the review (and plan) tools (src/llm/index.ts): an OpenAI-compatible
   * endpoint when LLM_API_KEY and LLM_BASE_URL are both set, else Workers AI through the AI
   * binding, else none (LLM paths answer llm_not_configured). LLM_MODEL names the model for the
   * backend selected (Workers AI: e.g. @cf/meta/llama-3.3-70b-instruct-fp8-fast).
   */
  LLM_MODEL?: string;
  /** Secret: the bearer key of the OpenAI-compatible endpoint. */
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
  /** OAuth grants, tokens and clients (@cloudflare/workers-oauth-provider; docs/operations.md: OAuth in production). */
  OAUTH_KV: KVNamespace;
  /** Set by the OAuth provider on every request it hands on: the helpers /authorize uses. */
  OAUTH_PROVIDER?: OAuthHelpers;
  /** Access-token lifetime in seconds (default 3600, at least 60). */
  OAUTH_ACCESS_TOKEN_TTL?: string;
  /** Dynamic client registrations per minute per source address (default 30; "0" is off). */
  OAUTH_REGISTER_PER_MIN?: string;
  /** Local development only: exact origins (comma-separated) whose metadata documents may be on loopback or a local name. */
  OAUTH_CIMD_LOCAL_ORIGINS?: string;
  /** Secrets of the GitHub OAuth app behind "Sign in with GitHub"; without them the button is not offered. */
  GITHUB_OAUTH_CLIENT_ID?: string;
  GITHUB_OAUTH_CLIENT_SECRET?: string;
  /** Where GitHub's sign-in pages live (default https://github.com; GitHub Enterprise: https://HOST). */
  GITHUB_OAUTH_URL?: string;
}
