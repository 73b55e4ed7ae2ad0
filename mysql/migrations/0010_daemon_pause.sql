-- Migration 0010: why a running mxqd takes no new jobs. mxqd writes the
-- reason with every heartbeat while it is paused (its tmpdir or spool
-- cannot take a job: a full or read-only disk) and '' once it takes jobs
-- again. The power manager counts a paused node as no capacity, so queued
-- work that would have waited for it wakes another node; `mxqadmin power
-- explain` shows the reason. A new column at the end of
-- mxq_daemon; upstream tools read none of it. Safe to run again.

ALTER TABLE mxq_daemon
    ADD COLUMN IF NOT EXISTS daemon_pause_reason VARCHAR(1000) NOT NULL DEFAULT '';
