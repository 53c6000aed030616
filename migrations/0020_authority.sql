-- Authority within a tenant. Numbered 0020 because another branch takes 0019.

-- A key's role: `agent` (the default) or `operator`, whose holder may override another actor's
-- task lease (force, with a reason the timeline keeps) and heartbeat or end anyone's run.
ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'agent' CHECK (role IN ('agent', 'operator'));

-- A task's fencing token: raised by every new claim (an extension of a live lease keeps it), so a
-- write that carries the token of an expired or superseded lease can be told apart and refused.
ALTER TABLE tasks ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;

-- The verdict a review handoff was answered with. Reviews answered before verdicts existed keep
-- NULL and unlock nothing: the done gate counts only an approval.
ALTER TABLE handoffs ADD COLUMN verdict TEXT CHECK (verdict IN ('approved', 'changes_requested', 'rejected'));
