/** The change ledger's closed vocabularies (seed 000, plus the later revert/reject/supersede). */
export const CHANGE_TYPES = ["add", "remove", "modify", "rename", "retype", "create", "delete", "index_add", "index_remove", "migrate", "revert", "reject", "supersede"] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export const ENTITY_TYPES = ["column", "table", "file", "function", "class", "endpoint", "dependency", "env_var", "index", "schema", "config", "other"] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** Change types that undo an earlier attempt; a supersede re-opens one of them. */
export const REMOVALS: ReadonlySet<string> = new Set(["remove", "delete", "index_remove", "revert", "reject"]);
/** Removals that say outright the attempt was undone, so no proximity guess is needed. */
export const EXPLICIT_REMOVALS: ReadonlySet<string> = new Set(["revert", "reject"]);

/** Tools whose calls on an entity count as "the entity is still in use" for stale_decisions. */
export const QUERY_SIGNAL_TOOLS = ["blame", "change_diff", "prior_attempts"] as const;
