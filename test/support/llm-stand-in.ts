/** A Workers AI binding for tests: scripted chat answers, a record of what the model was shown. */
import type { AiChatInput } from "../../src/llm/workers-ai";
import type { Ctx } from "../../src/core/context";
import type { AiBinding } from "../../src/llm/workers-ai";
import { withStandIns } from "./env-stand-ins";

/** The model wrangler.toml names (LLM_MODEL); the stand-in refuses any other, as Workers AI does. */
export const MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

/** The Workers AI binding, answering each chat call from `reply` and recording what it was sent. */
export class ScriptedAi implements AiBinding {
  readonly inputs: AiChatInput[] = [];
  constructor(public reply: (input: AiChatInput) => unknown) {}
  run(model: string, input: { text: string[] } | AiChatInput): Promise<unknown> {
    if (model !== MODEL) return Promise.reject(new Error(`5007: No such model ${model} or task`));
    if (!("messages" in input)) return Promise.reject(new Error("5006: Invalid input"));
    this.inputs.push(structuredClone(input));
    return Promise.resolve({ response: this.reply(input), usage: { prompt_tokens: 900, completion_tokens: 120, total_tokens: 1020 } });
  }
  /** Everything the model was shown, all calls together. */
  get seen(): string {
    return this.inputs.flatMap((i) => i.messages.map((m) => m.content)).join("\n");
  }
}

export const withAi = (ctx: Ctx, ai: AiBinding | undefined): Ctx => ({ ...ctx, env: withStandIns(ctx.env, { AI: ai }) });
