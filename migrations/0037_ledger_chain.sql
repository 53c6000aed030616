-- Seed 000's tamper-evident log: one hash chain per tenant over change events and work-ledger
-- decisions. Entry `pos` holds sha256(previous entry's hash, the row's kind and canonical content).
-- (tenant_id, pos) is the primary key, so two writers that read the same head cannot both append:
-- the second batch fails whole (its row with it) and retries on the new head.
CREATE TABLE ledger_chain (
  tenant_id TEXT NOT NULL,
  pos INTEGER NOT NULL,
  kind TEXT NOT NULL,          -- event | decision
  row_id TEXT NOT NULL,
  hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, pos)
);
CREATE UNIQUE INDEX ledger_chain_row_idx ON ledger_chain (tenant_id, kind, row_id);

-- Rows written before this migration have no entry yet: the nightly chain sweep appends them,
-- oldest first (README: Tamper-evident log). A row after these marks without an entry was
-- written around the ledger, and verify reports it.
CREATE TABLE ledger_chain_start (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  events_seq INTEGER NOT NULL,
  decisions_seq INTEGER NOT NULL
);
INSERT INTO ledger_chain_start (id, events_seq, decisions_seq)
  VALUES (1, (SELECT COALESCE(MAX(seq), 0) FROM events), (SELECT COALESCE(MAX(seq), 0) FROM decisions));
