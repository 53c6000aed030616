-- Per-repository read limits for the code index (index_workspace `limits`): JSON with any of
-- max_files, max_file_bytes, max_total_bytes; what is absent takes the server's default.
ALTER TABLE code_indexes ADD COLUMN limits TEXT NOT NULL DEFAULT '{}';
