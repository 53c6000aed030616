-- Content-derived idempotency keys (seed 001) replay a retry only while it is one: a key remembers
-- the run it was derived in (so another session's calls never free it) and the span of the
-- activity feed its call wrote (activity.seq after activity_from, up to activity_to), so a later
-- write by anyone to an object that call touched makes an identical call a new one.
ALTER TABLE idempotency_keys ADD COLUMN run TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN activity_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN activity_to INTEGER NOT NULL DEFAULT 0;
