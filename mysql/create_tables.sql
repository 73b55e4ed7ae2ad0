-- MXQ schema for a NEW database (current version).
--
-- An existing MXQ database is upgraded with `mxqadmin db upgrade`, which
-- applies mysql/migrations/NNNN_*.sql in order; this file and the
-- migrations must describe the same end state (tests/test_schema.sh
-- compares both paths column by column).
--
-- Column names and status codes are those of upstream MXQ; columns added
-- here all have defaults, so clients that know only the 2016 columns keep
-- working. Paths and argv are TEXT (upstream used long latin1 VARCHARs,
-- which do not fit InnoDB's row size in utf8mb4).
--
-- Power management tables (end of file, migration 0002): see mxq_power(5).
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

-- Node power state (one row per managed host). Written by the power
-- manager leader (every write carries its epoch in writer_epoch and is
-- fenced by the lease), by each node's mxqd for its own row (registration,
-- drain acknowledgement, last job end) and by mxqadmin. See mxq_power(5).
CREATE TABLE IF NOT EXISTS mxq_power (
    hostname          VARCHAR(64)   NOT NULL,
    state             VARCHAR(16)   NOT NULL DEFAULT 'UNKNOWN',  -- ON DRAINING POWERING_OFF OFF POWERING_ON FAILED UNKNOWN
    state_since       TIMESTAMP(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    desired_state     VARCHAR(16)   NOT NULL DEFAULT 'ON',       -- ON or OFF; OFF closes the job claim
    reason            VARCHAR(1000) NOT NULL DEFAULT '',         -- why the last decision was taken
    admin_off         TINYINT(1)    NOT NULL DEFAULT 0,          -- powered off by an admin: never woken automatically
    excluded          TINYINT(1)    NOT NULL DEFAULT 0,          -- left alone by the power manager
    failure_count     INT UNSIGNED  NOT NULL DEFAULT 0,
    failure_reason    VARCHAR(1000) NOT NULL DEFAULT '',
    node_class        VARCHAR(64)   NOT NULL DEFAULT '',
    efficiency_rank   INT           NOT NULL DEFAULT 100,        -- lower: woken first, suspended last
    transport_on      VARCHAR(16)   NOT NULL DEFAULT 'exec',     -- how to power on: exec ipmi wol
    transport_off     VARCHAR(16)   NOT NULL DEFAULT 'self',     -- how to power off: self exec ipmi ssh
    bmc_address       VARCHAR(255)  NOT NULL DEFAULT '',         -- host[:port] of the BMC (ipmi)
    mac_address       VARCHAR(17)   NOT NULL DEFAULT '',         -- for Wake-on-LAN
    broadcast_address VARCHAR(64)   NOT NULL DEFAULT '',         -- Wake-on-LAN target address
    admin_request     VARCHAR(16)   NOT NULL DEFAULT '',         -- ON or OFF, set by mxqadmin, carried out by the leader
    admin_request_reason VARCHAR(1000) NOT NULL DEFAULT '',
    explanation       VARCHAR(2000) NOT NULL DEFAULT '',         -- the leader's last word on this node (mxqadmin power explain)
    node_ack          VARCHAR(16)   NOT NULL DEFAULT '',         -- node's answer to a drain: IDLE or BUSY
    node_ack_at       TIMESTAMP(3)  NULL DEFAULT NULL,
    node_seen_at      TIMESTAMP(3)  NULL DEFAULT NULL,           -- last registration of the node's mxqd
    last_job_end      TIMESTAMP(3)  NULL DEFAULT NULL,
    current_watts     DOUBLE        NOT NULL DEFAULT 0,
    energy_joules     DOUBLE        NOT NULL DEFAULT 0,          -- cumulative, as measured by the node
    boot_count        INT UNSIGNED  NOT NULL DEFAULT 0,
    cycles_today      INT UNSIGNED  NOT NULL DEFAULT 0,
    cycles_day        DATE          NULL DEFAULT NULL,           -- the day cycles_today counts
    last_boot_ok_at   TIMESTAMP(3)  NULL DEFAULT NULL,
    writer_epoch      INT8 UNSIGNED NOT NULL DEFAULT 0,          -- leader epoch of the last leader write
    mtime             TIMESTAMP(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    PRIMARY KEY (hostname),
    INDEX (state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The power manager's lease: exactly one row (id 1). A candidate takes it
-- over when lease_expires has passed on the database clock; every takeover
-- increments epoch.
CREATE TABLE IF NOT EXISTS mxq_power_leader (
    id              TINYINT UNSIGNED NOT NULL,
    epoch           INT8 UNSIGNED NOT NULL DEFAULT 0,
    holder          VARCHAR(255)  NOT NULL DEFAULT '',   -- host/daemon[pid]
    lease_expires   TIMESTAMP(3)  NOT NULL DEFAULT '1970-01-01 00:00:01.000',
    acquired_at     TIMESTAMP(3)  NULL DEFAULT NULL,
    renewed_at      TIMESTAMP(3)  NULL DEFAULT NULL,
    last_tick_at    TIMESTAMP(3)  NULL DEFAULT NULL,
    config_hash     VARCHAR(16)   NOT NULL DEFAULT '',
    dry_run         TINYINT(1)    NOT NULL DEFAULT 0,
    tick_summary    VARCHAR(1000) NOT NULL DEFAULT '',
    policy_state    VARCHAR(1000) NOT NULL DEFAULT '',   -- rate-limit buckets and breaker, carried across takeovers
    PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Append-only audit of every power state transition.
CREATE TABLE IF NOT EXISTS mxq_power_event (
    event_id    INT8 UNSIGNED NOT NULL AUTO_INCREMENT,
    event_time  TIMESTAMP(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    hostname    VARCHAR(64)   NOT NULL,
    from_state  VARCHAR(16)   NOT NULL,
    to_state    VARCHAR(16)   NOT NULL,
    reason      VARCHAR(1000) NOT NULL DEFAULT '',
    epoch       INT8 UNSIGNED NOT NULL DEFAULT 0,     -- leader epoch (0 for admin and node events)
    actor       VARCHAR(16)   NOT NULL,               -- leader, admin, node
    PRIMARY KEY (event_id),
    INDEX (hostname, event_time),
    INDEX (event_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
