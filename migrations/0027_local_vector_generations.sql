-- The local vector index's change counter, one per namespace (tenant). An isolate keeps a
-- namespace's decoded vectors in memory and reloads them from local_vectors only when this
-- counter has moved; every upsert and delete bumps it in the same batch as its rows.
CREATE TABLE local_vector_generations (
  namespace TEXT PRIMARY KEY,
  generation INTEGER NOT NULL
) WITHOUT ROWID;
