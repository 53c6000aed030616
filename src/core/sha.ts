/**
 * Git commit ids, checked before one is put in a GitHub URL or compared with what is stored. No
 * `g` flag: `test` keeps no state between calls, so one shared pattern is safe everywhere.
 */

/** A full commit id as GitHub sends it in events and API answers: SHA-1 (40 hex) or SHA-256 (64), lowercase. */
export const FULL_COMMIT_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** A commit id as a person writes it: an abbreviated (7 or more) or full SHA-1, either case. */
export const COMMIT_SHA_PREFIX = /^[0-9a-f]{7,40}$/i;
