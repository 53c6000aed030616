import { InMemoryTransport, type ClientCapabilities, type McpServer } from "@modelcontextprotocol/server";

/**
 * Gives a per-request server of a 2025-era session what its initialize told the session's first
 * server: the SDK keeps the client's capabilities on the instance that answered initialize, and
 * sends a server-to-client request (elicitation/create) only to a client that declared it. The
 * session's own initialize is replayed in memory, through the SDK's handler, before the server
 * meets the real request.
 */
export async function replayInitialize(mcp: McpServer, protocolVersion: string, capabilities: ClientCapabilities): Promise<void> {
  const [client, server] = InMemoryTransport.createLinkedPair();
  const answered = new Promise<void>((resolve, reject) => {
    client.onmessage = (message) => ("error" in message ? reject(new Error(`initialize replay refused: ${message.error.message}`)) : resolve());
  });
  await mcp.connect(server);
  await client.send({
    jsonrpc: "2.0",
    id: "replayed-initialize",
    method: "initialize",
    params: { protocolVersion, capabilities, clientInfo: { name: "replayed", version: "0" } },
  });
  try {
    await answered;
  } finally {
    await mcp.close();
  }
}
