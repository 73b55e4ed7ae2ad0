-- Migration 0008: a superset of both upstream MXQ 0.22 schemas.
--
-- Upstream 0.22.3 (mxq_daemon.daemon_time) and upstream-master
-- (daemon_maxtime) tools and daemons must keep working on this database
-- while a site migrates node by node (README.md, "Mixed clusters"). So
-- every upstream column exists here, with upstream's default: the group
-- statistics old tools read, group dependencies, and BOTH daemon time
-- columns. Upstream's latin1 tables become utf8mb4 with TEXT for paths and
-- argv (upstream's long VARCHARs do not fit a utf8mb4 row); integer
-- columns are widened to the wider of the two definitions, never narrowed;
-- upstream's redundant single-column indexes are replaced by ours.
--
-- On a new database the same statements bring create_tables.sql's state
-- here, so new and upgraded databases end up identical (test_schema.sh).
-- Every statement is idempotent: an interrupted upgrade is run again.

ALTER TABLE mxq_group
    ADD COLUMN IF NOT EXISTS group_sum_starttime            INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS stats_wait_sec                 INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS stats_run_sec                  INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS stats_idle_sec                 INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS stats_total_utime_sec_finished INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS stats_total_stime_sec_finished INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS stats_total_real_sec_finished  INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS stats_total_wait_sec_finished  INT8 UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS depends_on_group               INT8 UNSIGNED NULL DEFAULT NULL,
    ADD COLUMN IF NOT EXISTS dependency_of_group            INT8 UNSIGNED NULL DEFAULT NULL,
    DROP INDEX IF EXISTS group_id,
    MODIFY group_mtime TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    CONVERT TO CHARACTER SET utf8mb4;

-- upstream's full-column indexes would outgrow the key limit when their
-- columns widen: drop them in a statement of their own first
ALTER TABLE mxq_job
    DROP INDEX IF EXISTS job_id,
    DROP INDEX IF EXISTS job_priority,
    DROP INDEX IF EXISTS host_id,
    DROP INDEX IF EXISTS host_hostname,
    DROP INDEX IF EXISTS server_id,
    DROP INDEX IF EXISTS mxq_job_host;

ALTER TABLE mxq_job
    MODIFY job_workdir  TEXT          NOT NULL,
    MODIFY job_argc     INT4 UNSIGNED NOT NULL,
    MODIFY job_argv     TEXT          NOT NULL,
    MODIFY job_stdout   TEXT          NOT NULL DEFAULT '/dev/null',
    MODIFY job_stderr   TEXT          NOT NULL DEFAULT '/dev/null',
    MODIFY job_umask    INT4 UNSIGNED NOT NULL,
    MODIFY host_id      VARCHAR(1024) NOT NULL DEFAULT '',
    MODIFY server_id    VARCHAR(1024) NOT NULL DEFAULT '',
    MODIFY host_cpu_set TEXT          NOT NULL DEFAULT '',
    MODIFY job_callback TEXT          NOT NULL DEFAULT '',
    ADD INDEX IF NOT EXISTS daemon_id (daemon_id),
    ADD INDEX IF NOT EXISTS mxq_job_host (host_hostname, server_id(64), job_status),
    CONVERT TO CHARACTER SET utf8mb4;

-- upstream's mtime may be NULL; ours is NOT NULL like every other timestamp
UPDATE mxq_daemon SET mtime = daemon_start WHERE mtime IS NULL;

ALTER TABLE mxq_daemon
    ADD COLUMN IF NOT EXISTS daemon_time    INT4 UNSIGNED NOT NULL DEFAULT 0 AFTER daemon_memory,
    ADD COLUMN IF NOT EXISTS daemon_maxtime INT8 UNSIGNED NOT NULL DEFAULT 0 AFTER daemon_time,
    MODIFY daemon_name   VARCHAR(64)   NOT NULL DEFAULT 'main',
    MODIFY hostname      VARCHAR(64)   NOT NULL DEFAULT '',
    MODIFY mxq_version   VARCHAR(32)   NOT NULL DEFAULT '',
    MODIFY boot_id       VARCHAR(36)   NOT NULL DEFAULT '',
    MODIFY pid_starttime INT8 UNSIGNED NOT NULL DEFAULT 0,
    MODIFY daemon_pid    INT4 UNSIGNED NOT NULL DEFAULT 0,
    MODIFY mtime         TIMESTAMP     NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    MODIFY daemon_start  TIMESTAMP     NOT NULL DEFAULT CURRENT_TIMESTAMP,
    DROP INDEX IF EXISTS daemon_name,
    DROP INDEX IF EXISTS hostname,
    ADD INDEX hostname (hostname, daemon_name),
    CONVERT TO CHARACTER SET utf8mb4;

-- the time limit an upstream daemon of either variant reads (minutes)
UPDATE mxq_daemon SET daemon_maxtime = daemon_time, mtime = mtime WHERE daemon_maxtime = 0 AND daemon_time <> 0;
UPDATE mxq_daemon SET daemon_time = LEAST(daemon_maxtime, 4294967295), mtime = mtime WHERE daemon_time = 0 AND daemon_maxtime <> 0;

-- group_sum_starttime of the jobs running now, from their rows
UPDATE mxq_group g
LEFT JOIN (
    SELECT group_id, SUM(UNIX_TIMESTAMP(date_start) * host_slots) AS s
    FROM mxq_job WHERE job_status IN (100,150,200,250,300,350,399,989) AND date_start <> 0
    GROUP BY group_id
) r ON r.group_id = g.group_id
SET g.group_sum_starttime = COALESCE(r.s, 0), g.group_mtime = g.group_mtime;

-- groups upstream mxqsub and daemons must leave alone, and their queued
-- jobs (see create_triggers.sql: group_flags CLOSED | NEW_ONLY, server_id)
UPDATE mxq_group SET group_flags = group_flags | 3, group_mtime = group_mtime
WHERE (tags <> '' OR prerequisites <> '' OR job_gpu > 0 OR group_whitelist <> ''
       OR group_blacklist <> '' OR job_tmpdir_size > 0) AND (group_flags & 3) <> 3;

UPDATE mxq_job j JOIN mxq_group g ON g.group_id = j.group_id
SET j.server_id = 'mxq-needs-0.9'
WHERE j.job_status = 0 AND j.server_id = '' AND j.daemon_id = 0 AND (g.group_flags & 2) <> 0;
