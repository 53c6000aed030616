import type { Env } from "../../src/env";
import type { AiBinding } from "../../src/llm/workers-ai";
import type { VectorizeBinding } from "../../src/search/vector-index";

/** Overrides of an env where AI and VECTORS may be stand-ins. */
export type StandInEnv = Partial<Omit<Env, "AI" | "VECTORS">> & { AI?: AiBinding; VECTORS?: VectorizeBinding };

/**
 * The env with some bindings replaced. Env's AI and VECTORS are the platform's whole Ai and
 * VectorizeIndex types (generated from wrangler.toml); the code needs only the narrow AiBinding and
 * VectorizeBinding, which is all a stand-in implements, so the one cast from narrow to whole lives here.
 */
export function withStandIns(env: Env, over: StandInEnv): Env {
  return { ...env, ...over } as unknown as Env;
}
