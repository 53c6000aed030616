declare namespace Cloudflare {
  interface Env {
    DB: D1Database;
    SESSIONS: DurableObjectNamespace<import("../src/durable/session").SessionDO>;
    CLAIMS: DurableObjectNamespace<import("../src/durable/claims").ClaimsDO>;
    RATE_LIMITS: DurableObjectNamespace<import("../src/durable/rate-limit").RateLimitDO>;
    DOC_SESSIONS: DurableObjectNamespace<import("../src/durable/doc-sessions").DocSessionDO>;
    REVIEWS: DurableObjectNamespace<import("../src/durable/review-sessions").ReviewSessionDO>;
    REVIEW_STEP_GAP_MS?: string;
    RATE_LIMIT_KEY_PER_MIN?: string;
    RATE_LIMIT_TENANT_PER_MIN?: string;
    BLOBS: R2Bucket;
    CODE_INDEX: Workflow<import("../src/code/indexer").IndexJob>;
    DOC_INDEX: Queue<import("../src/docs/index-queue").DocIndexMessage>;
    ALLOWED_ORIGINS?: string;
    GITHUB_API_URL?: string;
    LLM_MODEL?: string;
    LLM_API_KEY?: string;
    LLM_BASE_URL?: string;
    LLM_PROVIDER?: string;
    GITHUB_CREDENTIALS_KEY?: string;
    OAUTH_KV: KVNamespace;
    OAUTH_ACCESS_TOKEN_TTL?: string;
    GITHUB_OAUTH_CLIENT_ID?: string;
    GITHUB_OAUTH_CLIENT_SECRET?: string;
    GITHUB_OAUTH_URL?: string;
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}

declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../src/index");
    durableNamespaces: "SessionDO" | "ClaimsDO" | "RateLimitDO" | "DocSessionDO" | "ReviewSessionDO";
  }
}
