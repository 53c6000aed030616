-- A decision's identity and tenant are as fixed as its content.
CREATE TRIGGER decisions_identity_locked BEFORE UPDATE OF id, seq, tenant_id ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only: their identity and tenant cannot change'); END;
