/** guide (seed 001): the static agent manual, also served as ledger://guide resources. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { GUIDE_INDEX, GUIDE_TOPICS, findTopic, renderTopic } from "../../guide/topics";

const TOPIC_IDS = GUIDE_TOPICS.map((t) => t.id) as [string, ...string[]];

export const guideTool = defineTool({
  name: "guide",
  title: "How to use agent-ledger",
  toolset: "identity",
  description: "The agent manual: the topic index, or one topic.",
  input: z.object({ topic: z.enum(TOPIC_IDS).optional().describe("A topic id.") }),
  output: z.object({
    topic: z.string().describe('The topic returned, or "index".'),
    text: z.string().describe("The guide text (markdown)."),
    topics: z.array(z.string()).describe("Every topic id."),
  }),
  annotations: READ_ONLY,
  run: async (_ctx, input) => {
    const topic = input.topic ? findTopic(input.topic)! : null;
    return { topic: topic ? topic.id : "index", text: topic ? renderTopic(topic) : GUIDE_INDEX, topics: TOPIC_IDS };
  },
  summarize: (r) => `Guide: ${r.topic}.`,
});
