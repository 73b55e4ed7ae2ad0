-- Migration 0003: job energy accounting (mxq_power_job, mxq_power_job_sample,
-- mxq_power_sample) and node energy totals on mxq_power. New tables and new
-- columns at the end of mxq_power only. Safe to run again.
-- Written by each node's mxqd (mxqd_energy.c); read by mxqadmin power
-- usage/job/jobs/metrics and mxqdump. See mxq_energy(7).

-- Node energy totals. energy_joules (migration 0002) is the node's measured
-- total; it is the sum of the four columns below.
ALTER TABLE mxq_power
    ADD COLUMN IF NOT EXISTS energy_jobs_joules     DOUBLE      NOT NULL DEFAULT 0,  -- attributed to jobs
    ADD COLUMN IF NOT EXISTS energy_idle_joules     DOUBLE      NOT NULL DEFAULT 0,  -- idle baseline of free slots, and no jobs
    ADD COLUMN IF NOT EXISTS energy_boot_joules     DOUBLE      NOT NULL DEFAULT 0,  -- overhead: boot until mxqd started
    ADD COLUMN IF NOT EXISTS energy_shutdown_joules DOUBLE      NOT NULL DEFAULT 0,  -- overhead: draining/stopping with no jobs
    ADD COLUMN IF NOT EXISTS energy_method          VARCHAR(16) NOT NULL DEFAULT '', -- counter power model ('' never measured)
    ADD COLUMN IF NOT EXISTS idle_baseline_watts    DOUBLE      NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS energy_updated_at      TIMESTAMP(3) NULL DEFAULT NULL;

-- Energy of one job, written by the mxqd that runs it: every flush interval
-- while it runs (date_end NULL), and once more when it ends.
CREATE TABLE IF NOT EXISTS mxq_power_job (
    job_id              INT8 UNSIGNED NOT NULL,
    hostname            VARCHAR(64)   NOT NULL,
    energy_j            DOUBLE        NOT NULL DEFAULT 0,   -- idle share + active share
    active_energy_j     DOUBLE        NOT NULL DEFAULT 0,   -- share of the energy above the idle baseline
    avg_watts           DOUBLE        NOT NULL DEFAULT 0,
    peak_watts          DOUBLE        NOT NULL DEFAULT 0,
    samples             INT UNSIGNED  NOT NULL DEFAULT 0,   -- measured intervals
    method              VARCHAR(16)   NOT NULL DEFAULT '',  -- counter power model
    completeness        VARCHAR(16)   NOT NULL DEFAULT '',  -- full partial none
    idle_baseline_watts DOUBLE        NOT NULL DEFAULT 0,
    date_start          TIMESTAMP(3)  NULL DEFAULT NULL,
    date_end            TIMESTAMP(3)  NULL DEFAULT NULL,    -- NULL while the job runs
    updated             TIMESTAMP(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    PRIMARY KEY (job_id),
    INDEX (hostname, date_end),
    INDEX (date_start)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Optional per-job time series (mxqd --energy-timeline), pruned after
-- --energy-retention days.
CREATE TABLE IF NOT EXISTS mxq_power_job_sample (
    job_id      INT8 UNSIGNED NOT NULL,
    sample_time TIMESTAMP(3)  NOT NULL,
    energy_j    DOUBLE        NOT NULL,  -- the job's energy so far
    watts       DOUBLE        NOT NULL,  -- average of the job's share since the previous row
    PRIMARY KEY (job_id, sample_time),
    INDEX (sample_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Node samples for energy over any window (mxqadmin power usage), written
-- every flush interval, pruned after --energy-retention days.
CREATE TABLE IF NOT EXISTS mxq_power_sample (
    hostname    VARCHAR(64)   NOT NULL,
    sample_time TIMESTAMP(3)  NOT NULL,
    energy_j    DOUBLE        NOT NULL,  -- cumulative node energy (continues mxq_power.energy_joules)
    watts       DOUBLE        NOT NULL,  -- current power
    PRIMARY KEY (hostname, sample_time),
    INDEX (sample_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
