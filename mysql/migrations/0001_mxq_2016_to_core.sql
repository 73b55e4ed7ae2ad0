-- Migration 0001: a 2016-era MXQ database -> the core schema of this tree.
--
-- Adds every column that create_tables.sql marks "added after 2016", with
-- the same type and default, the indexes introduced with them, and the
-- schema version table.
--
-- Every statement is safe to run again (IF NOT EXISTS), so
-- an upgrade that stopped half way is simply started again. DDL commits
-- implicitly in MariaDB; there is no transaction to roll back.
--
-- Columns are appended in the order of create_tables.sql, so an upgraded
-- table has the same column order as a new one. Stop every mxqd before
-- upgrading: the counters are recomputed before the new triggers exist
-- (create_triggers.sql).

-- Upstream's triggers go first: they would rewrite group_mtime and the
-- statistics during the updates of later migrations. Ours are installed
-- after the migrations (create_triggers.sql).
DROP TRIGGER IF EXISTS mxq_add_group;
DROP TRIGGER IF EXISTS mxq_update_group;
DROP TRIGGER IF EXISTS mxq_add_job;
DROP TRIGGER IF EXISTS mxq_update_job;

CREATE TABLE IF NOT EXISTS mxq_schema_version (
    version     INT UNSIGNED NOT NULL,
    name        VARCHAR(255) NOT NULL,
    applied_at  TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

ALTER TABLE mxq_group
    ADD COLUMN IF NOT EXISTS job_tmpdir_size  INT4 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS job_gpu          INT2 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS tags             VARCHAR(1000) NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS prerequisites    VARCHAR(1000) NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS group_whitelist  VARCHAR(1000) NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS group_blacklist  VARCHAR(1000) NOT NULL DEFAULT '',
    ADD INDEX IF NOT EXISTS user_uid (user_uid),
    ADD INDEX IF NOT EXISTS mxq_group_active (group_status, group_jobs_inq);

ALTER TABLE mxq_job
    ADD COLUMN IF NOT EXISTS job_callback     TEXT          NOT NULL DEFAULT '',
    ADD INDEX IF NOT EXISTS mxq_job_claim (group_id, job_status, job_priority, job_id),
    ADD INDEX IF NOT EXISTS mxq_job_host (host_hostname, server_id(64), job_status);

ALTER TABLE mxq_daemon
    ADD COLUMN IF NOT EXISTS tags                      VARCHAR(1000) NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS prerequisites             VARCHAR(1000) NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS daemon_gpus_max           INT2 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS daemon_gpus_used          INT2 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS daemon_tmpdir_total_bytes INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS daemon_tmpdir_free_bytes  INT8 UNSIGNED NOT NULL DEFAULT 0;

-- The group counters, which old trigger versions let drift, are recomputed
-- from the job rows by create_triggers.sql, which every upgrade runs last.
