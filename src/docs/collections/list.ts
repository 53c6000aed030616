import { z } from "zod";
import { defineOp } from "../shared";
import { listCollections, listSnapshots } from "./model";

const pageParams = z.object({
  limit: z.number().int().min(1).max(1000).default(100).describe("Maximum entries (1–1000, default 100)."),
  offset: z.number().int().min(0).max(1_000_000).default(0).describe("Pagination offset (default 0)."),
});

export const listCollectionsOp = defineOp({
  name: "list_collections",
  category: "query",
  description: "List collections with how many live documents and bytes each holds.",
  params: pageParams,
  async run(ctx, p) {
    const { items, ...rest } = await listCollections(ctx, p);
    return { collections: items, ...rest };
  },
});

export const listSnapshotsOp = defineOp({
  name: "list_snapshots",
  category: "query",
  description: "List snapshots (immutable named sets of document versions), newest first, with their document count and bytes.",
  params: pageParams,
  async run(ctx, p) {
    const { items, ...rest } = await listSnapshots(ctx, p);
    return { snapshots: items, ...rest };
  },
});
