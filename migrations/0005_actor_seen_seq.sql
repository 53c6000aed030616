-- whoami's delta counts activity after the last row the actor was shown (by append order),
-- which cannot miss a row written in the same millisecond as the previous whoami.
ALTER TABLE actors ADD COLUMN last_seen_activity_seq INTEGER NOT NULL DEFAULT 0;
