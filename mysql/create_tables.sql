-- MXQ core schema for a NEW database: the state after migration 0001.
--
-- `mxqadmin db upgrade` runs this file on an empty database and then every
-- migration after 0001 (mysql/migrations/NNNN_*.sql), exactly as it
-- upgrades an existing database; so later features (power management,
-- energy accounting) live only in their migration. An upstream MXQ
-- database (version 0) gets 0001, which must reach the same state as this
-- file (tests/test_schema.sh compares both paths column by column).
--
-- Column names and status codes are those of upstream MXQ; columns added
-- here all have defaults, so clients that know only the 2016 columns keep
-- working. Paths and argv are TEXT (upstream used long latin1 VARCHARs,
-- which do not fit InnoDB's row size in utf8mb4).
--
-- Power management tables: migration 0002, see mxq_power(5).
--
-- Job status codes: INQ 0, ASSIGNED 100, LOADED 150, RUNNING 200,
-- UNKNOWN_RUN 250, EXTRUNNING 300, STOPPED 350, KILLING 399, KILLED 400,
-- FAILED 750, UNKNOWN_PRE 755, CANCELLING 989, CANCELLED 990, UNKNOWN 999,
-- FINISHED 1000, EXIT 1024.
-- Group counters are kept by the triggers of create_triggers.sql; every
-- status belongs to exactly one counter:
--   group_jobs_inq       INQ
--   group_jobs_running   ASSIGNED LOADED RUNNING UNKNOWN_RUN EXTRUNNING
--                        STOPPED KILLING CANCELLING
--   group_jobs_finished  FINISHED
--   group_jobs_failed    KILLED FAILED EXIT
--   group_jobs_cancelled CANCELLED
--   group_jobs_unknown   UNKNOWN_PRE UNKNOWN
-- group_slots_running is the sum of host_slots over the running jobs.

CREATE TABLE IF NOT EXISTS mxq_schema_version (
    version     INT UNSIGNED NOT NULL,
    name        VARCHAR(255) NOT NULL,
    applied_at  TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS mxq_group (
    group_id              INT8 UNSIGNED NOT NULL AUTO_INCREMENT,
    group_name            VARCHAR(128)  NOT NULL DEFAULT 'default',
    group_status          INT1 UNSIGNED NOT NULL DEFAULT 0,
    group_flags           INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_priority        INT2 UNSIGNED NOT NULL DEFAULT 127,

    user_uid              INT4 UNSIGNED NOT NULL,
    user_name             VARCHAR(256)  NOT NULL,
    user_gid              INT4 UNSIGNED NOT NULL,
    user_group            VARCHAR(256)  NOT NULL,

    job_command           VARCHAR(256)  NOT NULL,
    job_threads           INT2 UNSIGNED NOT NULL DEFAULT 1,
    job_memory            INT8 UNSIGNED NOT NULL DEFAULT 1024,
    job_time              INT4 UNSIGNED NOT NULL DEFAULT 15,
    job_max_per_node      INT2 UNSIGNED NOT NULL DEFAULT 0,

    group_jobs            INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_jobs_inq        INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_jobs_running    INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_jobs_finished   INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_jobs_failed     INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_jobs_cancelled  INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_jobs_unknown    INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_jobs_restarted  INT8 UNSIGNED NOT NULL DEFAULT 0,
    group_slots_running   INT8 UNSIGNED NOT NULL DEFAULT 0,

    stats_max_sumrss      INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_max_maxrss      INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_max_utime_sec   INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_max_stime_sec   INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_max_real_sec    INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_total_utime_sec INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_total_stime_sec INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_total_real_sec  INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_total_wait_sec  INT8 UNSIGNED NOT NULL DEFAULT 0,

    group_mtime           TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    group_date_end        TIMESTAMP NOT NULL DEFAULT 0,

    -- added after 2016 (migration 0001)
    job_tmpdir_size       INT4 UNSIGNED NOT NULL DEFAULT 0,   -- GiB
    job_gpu               INT2 UNSIGNED NOT NULL DEFAULT 0,
    tags                  VARCHAR(1000) NOT NULL DEFAULT '',
    prerequisites         VARCHAR(1000) NOT NULL DEFAULT '',
    group_whitelist       VARCHAR(1000) NOT NULL DEFAULT '',
    group_blacklist       VARCHAR(1000) NOT NULL DEFAULT '',

    PRIMARY KEY (group_id),
    INDEX (group_name),
    INDEX (user_uid),
    INDEX mxq_group_active (group_status, group_jobs_inq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS mxq_job (
    job_id            INT8 UNSIGNED NOT NULL AUTO_INCREMENT,
    job_status        INT2 UNSIGNED NOT NULL DEFAULT 0,
    job_flags         INT8 UNSIGNED NOT NULL DEFAULT 0,
    job_priority      INT2 UNSIGNED NOT NULL DEFAULT 127,

    group_id          INT8 UNSIGNED NOT NULL,

    job_workdir       TEXT          NOT NULL,
    job_argc          INT2 UNSIGNED NOT NULL,
    job_argv          TEXT          NOT NULL,
    job_stdout        TEXT          NOT NULL DEFAULT '/dev/null',
    job_stderr        TEXT          NOT NULL DEFAULT '/dev/null',
    job_umask         INT4 UNSIGNED NOT NULL,

    host_submit       VARCHAR(64)   NOT NULL DEFAULT 'localhost',
    host_id           VARCHAR(1024) NOT NULL DEFAULT '',
    daemon_id         INT4 UNSIGNED NOT NULL DEFAULT 0,
    server_id         VARCHAR(1024) NOT NULL DEFAULT '',
    host_hostname     VARCHAR(64)   NOT NULL DEFAULT '',
    host_pid          INT4 UNSIGNED NOT NULL DEFAULT 0,
    host_slots        INT4 UNSIGNED NOT NULL DEFAULT 0,
    host_cpu_set      TEXT          NOT NULL DEFAULT '',

    date_submit       TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    date_start        TIMESTAMP NOT NULL DEFAULT 0,
    date_end          TIMESTAMP NOT NULL DEFAULT 0,

    job_id_new        INT8 UNSIGNED NULL DEFAULT NULL,
    job_id_old        INT8 UNSIGNED NULL DEFAULT NULL,
    job_id_first      INT8 UNSIGNED NULL DEFAULT NULL,

    stats_max_sumrss  INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_status      INT4 UNSIGNED NOT NULL DEFAULT 0,
    stats_utime_sec   INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_utime_usec  INT4 UNSIGNED NOT NULL DEFAULT 0,
    stats_stime_sec   INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_stime_usec  INT4 UNSIGNED NOT NULL DEFAULT 0,
    stats_real_sec    INT8 UNSIGNED NOT NULL DEFAULT 0,
    stats_real_usec   INT4 UNSIGNED NOT NULL DEFAULT 0,
    stats_maxrss      INT8 NOT NULL DEFAULT 0,
    stats_minflt      INT8 NOT NULL DEFAULT 0,
    stats_majflt      INT8 NOT NULL DEFAULT 0,
    stats_nswap       INT8 NOT NULL DEFAULT 0,
    stats_inblock     INT8 NOT NULL DEFAULT 0,
    stats_oublock     INT8 NOT NULL DEFAULT 0,
    stats_nvcsw       INT8 NOT NULL DEFAULT 0,
    stats_nivcsw      INT8 NOT NULL DEFAULT 0,

    -- added after 2016 (migration 0001)
    job_callback      TEXT          NOT NULL DEFAULT '',

    PRIMARY KEY (job_id),
    INDEX (job_status),
    INDEX (group_id),
    INDEX mxq_job_claim (group_id, job_status, job_priority, job_id),
    INDEX mxq_job_host (host_hostname, server_id(64), job_status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS mxq_daemon (
    daemon_id                     INT4 UNSIGNED NOT NULL AUTO_INCREMENT,
    daemon_name                   VARCHAR(64)   NOT NULL DEFAULT 'main',
    status                        INT1 UNSIGNED NOT NULL DEFAULT 0,
    hostname                      VARCHAR(64)   NOT NULL,
    mxq_version                   VARCHAR(16)   NOT NULL,
    boot_id                       VARCHAR(36)   NOT NULL,
    pid_starttime                 INT8 UNSIGNED NOT NULL,
    daemon_pid                    INT4 UNSIGNED NOT NULL,
    daemon_slots                  INT4 UNSIGNED NOT NULL DEFAULT 0,
    daemon_memory                 INT8 UNSIGNED NOT NULL DEFAULT 0,
    daemon_maxtime                INT8 UNSIGNED NOT NULL DEFAULT 0,
    daemon_memory_limit_slot_soft INT8 UNSIGNED NOT NULL DEFAULT 0,
    daemon_memory_limit_slot_hard INT8 UNSIGNED NOT NULL DEFAULT 0,
    daemon_jobs_running           INT4 UNSIGNED NOT NULL DEFAULT 0,
    daemon_slots_running          INT4 UNSIGNED NOT NULL DEFAULT 0,
    daemon_threads_running        INT4 UNSIGNED NOT NULL DEFAULT 0,
    daemon_memory_used            INT8 UNSIGNED NOT NULL DEFAULT 0,
    mtime                         TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    daemon_start                  TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    daemon_stop                   TIMESTAMP NOT NULL DEFAULT 0,

    -- added after 2016 (migration 0001)
    tags                          VARCHAR(1000) NOT NULL DEFAULT '',
    prerequisites                 VARCHAR(1000) NOT NULL DEFAULT '',
    daemon_gpus_max               INT2 UNSIGNED NOT NULL DEFAULT 0,
    daemon_gpus_used              INT2 UNSIGNED NOT NULL DEFAULT 0,
    daemon_tmpdir_total_bytes     INT8 UNSIGNED NOT NULL DEFAULT 0,
    daemon_tmpdir_free_bytes      INT8 UNSIGNED NOT NULL DEFAULT 0,

    PRIMARY KEY (daemon_id),
    INDEX (hostname, daemon_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

