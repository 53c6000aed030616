/**
 * The document store's composite tools (seed 003): docs_query (a read pipeline), docs_execute
 * (a write batch), docs_session, and the seed's mcp.echo. They run the ops of the other rooms
 * (listed in ./surface) through the shared pipeline engine.
 */
import { docsExecute } from "./execute";
import { mcpEcho } from "./echo";
import { docsQuery } from "./query";
import { docsSession } from "./session";

export const docsTools = [docsQuery, docsExecute, docsSession, mcpEcho];
