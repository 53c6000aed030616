import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { actors, apiKeys } from "../db/schema";
import { hashApiKey } from "./provision";

export interface Identity {
  tenantId: string;
  actorId: string;
  actorName: string;
}

/** The tenant and actor a bearer key belongs to, or null for an unknown or revoked key. */
export async function identityForKey(db: Db, key: string): Promise<Identity | null> {
  const hash = await hashApiKey(key);
  const row = await db
    .select({ tenantId: apiKeys.tenantId, actorId: apiKeys.actorId, actorName: actors.name })
    .from(apiKeys)
    .innerJoin(actors, eq(actors.id, apiKeys.actorId))
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .get();
  return row ?? null;
}

/** Extracts the key from `Authorization: Bearer <key>`, or null. */
export function bearerKey(header: string | undefined | null): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m ? m[1]! : null;
}
