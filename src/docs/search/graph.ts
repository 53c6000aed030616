import { z } from "zod";
import { invalidInput } from "../../core/errors";
import { GRAPH_LIMIT_MAX, GRAPH_TARGET_HINT, GRAPH_TARGET_REQUIRED, NODE_TYPES, queryGraph, RELATIONS } from "../graph/graph";
import { defineOp } from "../shared";
import { MAX_PATH_CHARS } from "../store/store";

const NODE_KEY_MAX = 1400;

export const graphOp = defineOp({
  name: "graph",
  category: "query",
  description: `Query the knowledge graph built when documents are added: document nodes, ${RELATIONS.join(" / ")} edges to documents, modules, symbols and URLs. From one node (hash, name, node_key) → { root, nodes (documents first per depth, each document with hash and path), edges, total_nodes, truncated }; reverse walks incoming edges (who imports or links to it). list_types → node types with counts; list_type → the nodes of one type.`,
  params: z.object({
    hash: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, "hash must be a SHA-256 hex digest (64 hex characters)")
      .max(64)
      .optional()
      .describe("Start from the live document with this content hash."),
    name: z.string().min(1).max(MAX_PATH_CHARS).optional().describe("Start from the document at this path (or with this file name, e.g. 'main.cpp')."),
    node_key: z.string().min(1).max(NODE_KEY_MAX).optional().describe("Start from this node, as graph results name it: 'doc:<path>', 'module:js:react', 'symbol:<path>#<name>', 'url:…'."),
    node_id: z.string().min(1).max(NODE_KEY_MAX).optional().describe("Same as node_key: this store's node ids are their keys."),
    list_types: z.boolean().optional().describe("List the node types with their counts instead of traversing."),
    list_type: z
      .enum(NODE_TYPES)
      .optional()
      .describe(`List the nodes of one type (${NODE_TYPES.join(", ")}) instead of traversing.`),
    relation: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(`Follow only edges of this relation (${RELATIONS.join(", ")}).`),
    depth: z.number().int().min(1).max(5).default(1).describe("How many hops to traverse (1–5, default 1)."),
    limit: z.number().int().min(1).max(GRAPH_LIMIT_MAX).default(100).describe(`Maximum nodes returned besides the root (1–${GRAPH_LIMIT_MAX}, default 100).`),
    reverse: z.boolean().default(false).describe("Traverse incoming edges instead: who links to, imports or defines this node."),
  }),
  normalize(params) {
    // Refused before validation with the seed's own text, whichever spelling the caller used.
    const has = (...keys: string[]) => keys.some((k) => params[k] !== undefined && params[k] !== null);
    const listing = params.list_types === true || params.listTypes === true || has("list_type", "listType");
    if (!has("hash", "name", "node_key", "nodeKey", "node_id", "nodeId") && !listing) {
      throw invalidInput(GRAPH_TARGET_REQUIRED, GRAPH_TARGET_HINT);
    }
    return params;
  },
  run: (ctx, params) => queryGraph(ctx, params),
});
