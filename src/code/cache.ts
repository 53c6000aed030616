/**
 * Retrieval answers cached per isolate, keyed by the commits they reflect: an index that moves to
 * another commit (a push, a re-index) misses its old entries by construction, so nothing is ever
 * invalidated by hand. Small and bounded; get_workspace_info reports its hit rate.
 */
const MAX_ENTRIES = 200;

const entries = new Map<string, unknown>();
let hits = 0;
let misses = 0;

/** The answer for `key` within the tenant (the tenant is part of every key, so no answer crosses tenants). */
export async function cached<T>(tenantId: string, parts: readonly unknown[], bypass: boolean, compute: () => Promise<T>): Promise<T> {
  const key = JSON.stringify([tenantId, ...parts]);
  if (!bypass && entries.has(key)) {
    hits++;
    const value = entries.get(key) as T;
    entries.delete(key); // most recently used goes last
    entries.set(key, value);
    return value;
  }
  misses++;
  const value = await compute();
  entries.set(key, value);
  while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  return value;
}

export function cacheStats(): { hit_rate: number; size: number; commit_keyed: boolean } {
  const total = hits + misses;
  return { hit_rate: total === 0 ? 0 : Math.round((hits / total) * 1000) / 1000, size: entries.size, commit_keyed: true };
}
