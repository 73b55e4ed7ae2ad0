-- Migration 0005: a counter in the leader row that every fenced write of
-- the power manager increments (issue 20, Galera). On one server the shared
-- row lock of the fence was enough; Galera certifies only the rows a
-- transaction writes, so a fenced write must write the leader row to
-- conflict with a takeover made on another database node. New column only;
-- nothing an older client reads changes. Safe to run again.

ALTER TABLE mxq_power_leader
    ADD COLUMN IF NOT EXISTS fence_writes INT8 UNSIGNED NOT NULL DEFAULT 0;  -- fenced writes made under the lease (any epoch)
