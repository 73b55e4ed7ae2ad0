-- Migration 0009: why a job ended without running (issue 12). mxqd writes
-- one line here when it refuses a job (identity check of the row against
-- the node's user database, a planted tmpdir entry); mxqdump shows it.
-- A new column at the end of mxq_job; nothing an older client reads
-- changes. Safe to run again.

ALTER TABLE mxq_job
    ADD COLUMN IF NOT EXISTS job_reason VARCHAR(1000) NOT NULL DEFAULT '';
