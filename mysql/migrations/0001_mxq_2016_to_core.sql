-- Migration 0001: a 2016-era MXQ database -> the core schema of this tree.
--
-- Adds every column that create_tables.sql marks "added after 2016", with
-- the same type and default, the indexes introduced with them, and the
-- schema version table; then recomputes all group counters from the job
-- rows, because old trigger versions let them drift.
--
-- Every statement is safe to run again (IF NOT EXISTS, recomputation), so
-- an upgrade that stopped half way is simply started again. DDL commits
-- implicitly in MariaDB; there is no transaction to roll back.
--
-- Columns are appended in the order of create_tables.sql, so an upgraded
-- table has the same column order as a new one. Stop every mxqd before
-- upgrading: the counters are recomputed before the new triggers exist.

-- Upstream's triggers go first: they would rewrite group_mtime and the
-- statistics during the recomputation below. Ours are installed after the
-- migrations (create_triggers.sql).
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

-- Counters from the job rows, one pass over mxq_job. The status categories
-- are those of create_tables.sql and create_triggers.sql. group_mtime is
-- assigned its own value so that the recomputation does not look like
-- group activity.
UPDATE mxq_group g
LEFT JOIN (
    SELECT group_id,
           COUNT(*)                                                AS jobs,
           SUM(job_status IN (0))                                  AS inq,
           SUM(job_status IN (100,150,200,250,300,350,399,989))    AS running,
           SUM(job_status IN (1000))                               AS finished,
           SUM(job_status IN (400,750,1024))                       AS failed,
           SUM(job_status IN (990))                                AS cancelled,
           SUM(job_status IN (755,999))                            AS unknown,
           SUM(IF(job_status IN (100,150,200,250,300,350,399,989), host_slots, 0))
                                                                   AS slots_running
    FROM mxq_job
    GROUP BY group_id
) c ON c.group_id = g.group_id
SET g.group_jobs           = COALESCE(c.jobs, 0),
    g.group_jobs_inq       = COALESCE(c.inq, 0),
    g.group_jobs_running   = COALESCE(c.running, 0),
    g.group_jobs_finished  = COALESCE(c.finished, 0),
    g.group_jobs_failed    = COALESCE(c.failed, 0),
    g.group_jobs_cancelled = COALESCE(c.cancelled, 0),
    g.group_jobs_unknown   = COALESCE(c.unknown, 0),
    g.group_slots_running  = COALESCE(c.slots_running, 0),
    g.group_mtime          = g.group_mtime;
