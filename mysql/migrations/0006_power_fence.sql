-- Migration 0006: a counter in the leader row that every fenced write of
-- the power manager increments (issue 20, Galera). On one server the shared
-- row lock of the fence orders a takeover after the write. On Galera a
-- takeover committed on another database node is applied here as a write
-- set: while our transaction still runs, applying it aborts ours (local
-- lock conflict); but once ours has been certified, which checks only the
-- rows a transaction writes, ours would be replayed after the takeover.
-- Writing the leader row makes the two conflict at certification in every
-- order. New column only; nothing an older client reads changes. Safe to
-- run again.

ALTER TABLE mxq_power_leader
    ADD COLUMN IF NOT EXISTS fence_writes INT8 UNSIGNED NOT NULL DEFAULT 0;  -- fenced writes made under the lease (any epoch)
