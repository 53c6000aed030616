/** mcp.echo, the seed's protocol check, listed with the document store's tools. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";

export const mcpEcho = defineTool({
  name: "mcp.echo",
  title: "Echo",
  description: "Echoes the message back (a protocol check).",
  toolset: "docs",
  everywhere: true,
  // On every surface, so it costs each listing as little as it can: the answer is the message.
  listOutput: false,
  input: z.object({ message: z.string().max(10_000).describe("Text to echo back.") }),
  output: z.object({ message: z.string().describe("The same text.") }),
  annotations: READ_ONLY,
  async run(_ctx, input) {
    return { message: input.message };
  },
  summarize: (r) => r.message,
});
