-- Triggers that keep mxq_group's counters equal to its job rows, and the
-- columns upstream MXQ 0.22 tools and daemons read.
--
-- Installed by `mxqadmin db upgrade` after the migrations, every time
-- (DROP + CREATE), so a database always runs the current version; upstream
-- MXQ's own triggers are dropped (migration 0001 and here). Every job status
-- belongs to exactly one counter (see create_tables.sql). GREATEST(..., 0)
-- keeps a counter that was already wrong before the upgrade from making a
-- statement fail. Between dropping and creating the triggers (all under
-- LOCK TABLES, see mxqadmin_db.c install_triggers()) the counters are
-- reconciled with the job rows and the hiding below is reapplied: an
-- upgrade that stopped half way left a database without triggers that
-- upstream mxqsub may have written to meanwhile.
--
-- Mixed clusters (README.md): upstream daemons move jobs INQ -> ASSIGNED ->
-- LOADED -> RUNNING, ours INQ -> ASSIGNED -> RUNNING; both paths keep
--   date_start            set when a job starts running (LOADED or RUNNING)
--   group_sum_starttime   sum of UNIX_TIMESTAMP(date_start) * host_slots of
--                         the running jobs
--   stats_max_*, stats_total_*(_finished)   rusage of ended jobs, as upstream
--   stats_wait/run/idle_sec, group_mtime, group_date_end   on group updates
--   daemon_jobs_running/daemon_slots_running   of the job's daemon (our mxqd
--                         and upstream-master's overwrite them with their
--                         own count at each heartbeat; 0.22.3 relies on this)
-- Jobs of groups that need what upstream daemons do not know (tags,
-- prerequisites, GPUs, white/blacklists, tmpdir) carry server_id
-- 'mxq-needs-0.9' while INQ: upstream's claim statement only takes INQ jobs
-- with server_id = '', so an old daemon can never start them. Ours claims
-- INQ jobs whatever their server_id (mxqd_job.c claim_one()); requeued
-- jobs (server_id reset to '') are marked again by the BEFORE UPDATE
-- trigger. A job with a callback (mxqsub --callback) is marked too: an
-- upstream daemon would run it and never run the callback. Such groups also carry group_flags CLOSED | NEW_ONLY (3): upstream
-- mxqsub joins only groups without CLOSED, ours treats CLOSED together with
-- NEW_ONLY as open (mxq_status.h).

-- upstream MXQ's triggers on mxq_group did part of the same bookkeeping
DROP TRIGGER IF EXISTS mxq_add_group;
DROP TRIGGER IF EXISTS mxq_update_group;
DROP TRIGGER IF EXISTS mxq_add_job;
DROP TRIGGER IF EXISTS mxq_update_job;
DROP TRIGGER IF EXISTS mxq_job_after_insert;
DROP TRIGGER IF EXISTS mxq_job_after_update;
DROP TRIGGER IF EXISTS mxq_job_after_delete;
DROP TRIGGER IF EXISTS mxq_job_before_insert;
DROP TRIGGER IF EXISTS mxq_job_before_update;
DROP TRIGGER IF EXISTS mxq_group_before_insert;
DROP TRIGGER IF EXISTS mxq_group_before_update;

-- reconcile, with no trigger in place to rewrite group_mtime or the stats
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
    g.group_mtime          = g.group_mtime
WHERE g.group_jobs <> COALESCE(c.jobs, 0) OR g.group_jobs_inq <> COALESCE(c.inq, 0)
   OR g.group_jobs_running <> COALESCE(c.running, 0)
   OR g.group_jobs_finished <> COALESCE(c.finished, 0)
   OR g.group_jobs_failed <> COALESCE(c.failed, 0)
   OR g.group_jobs_cancelled <> COALESCE(c.cancelled, 0)
   OR g.group_jobs_unknown <> COALESCE(c.unknown, 0)
   OR g.group_slots_running <> COALESCE(c.slots_running, 0);

UPDATE mxq_group g SET g.group_flags = g.group_flags | 3, g.group_mtime = g.group_mtime
WHERE (g.tags <> '' OR g.prerequisites <> '' OR g.job_gpu > 0 OR g.group_whitelist <> ''
       OR g.group_blacklist <> '' OR g.job_tmpdir_size > 0) AND (g.group_flags & 3) <> 3;

-- cancelled while queued, without a callback: nothing needs the mark
-- (mxqd looks for the callbacks of such jobs by it)
UPDATE mxq_job j SET j.server_id = ''
WHERE j.host_hostname = '' AND j.server_id = 'mxq-needs-0.9' AND j.job_status = 990
  AND j.job_callback = '';

UPDATE mxq_job j SET j.server_id = 'mxq-needs-0.9'
WHERE j.job_status = 0 AND j.server_id = '' AND j.daemon_id = 0
  AND (j.job_callback <> '' OR EXISTS (SELECT 1 FROM mxq_group g
        WHERE g.group_id = j.group_id AND (g.group_flags & 2) <> 0));

DELIMITER //
CREATE TRIGGER mxq_group_before_insert BEFORE INSERT ON mxq_group FOR EACH ROW
BEGIN
    SET NEW.group_mtime = NOW();
    -- CLOSED | NEW_ONLY: upstream mxqsub joins only groups without CLOSED;
    -- NEW_ONLY (2) is what the job triggers below test. The one place that
    -- says which requirements upstream daemons do not know (and the
    -- backfill in migrations/NNNN_upstream_0_22.sql).
    IF NEW.tags <> '' OR NEW.prerequisites <> '' OR NEW.job_gpu > 0
       OR NEW.group_whitelist <> '' OR NEW.group_blacklist <> '' OR NEW.job_tmpdir_size > 0 THEN
        SET NEW.group_flags = NEW.group_flags | 3;
    END IF;
    IF NEW.group_jobs_inq = 0 AND NEW.group_jobs_running = 0 THEN
        SET NEW.group_date_end = NEW.group_mtime;
    END IF;
END//

CREATE TRIGGER mxq_group_before_update BEFORE UPDATE ON mxq_group FOR EACH ROW
BEGIN
    DECLARE since BIGINT;
    SET NEW.group_mtime = NOW();
    -- as on INSERT: upstream mxqadmin --reopen clears CLOSED, and upstream
    -- mxqsub would then join a group whose requirements hide its jobs
    IF NEW.tags <> '' OR NEW.prerequisites <> '' OR NEW.job_gpu > 0
       OR NEW.group_whitelist <> '' OR NEW.group_blacklist <> '' OR NEW.job_tmpdir_size > 0 THEN
        SET NEW.group_flags = NEW.group_flags | 3;
    END IF;
    SET since = GREATEST(UNIX_TIMESTAMP(NEW.group_mtime) - UNIX_TIMESTAMP(OLD.group_mtime), 0);
    IF OLD.group_jobs_running > 0 THEN
        SET NEW.stats_run_sec = OLD.stats_run_sec + since;
    ELSEIF OLD.group_jobs_inq > 0 THEN
        SET NEW.stats_wait_sec = OLD.stats_wait_sec + since;
    END IF;
    IF (OLD.group_jobs_inq > 0 OR OLD.group_jobs_running > 0)
       AND NEW.group_jobs_inq = 0 AND NEW.group_jobs_running = 0 THEN
        SET NEW.group_date_end = NEW.group_mtime;
    ELSEIF OLD.group_jobs_inq = 0 AND OLD.group_jobs_running = 0
       AND (NEW.group_jobs_inq > 0 OR NEW.group_jobs_running > 0) THEN
        IF OLD.group_date_end <> 0 THEN
            SET NEW.stats_idle_sec = OLD.stats_idle_sec
                + GREATEST(UNIX_TIMESTAMP(NEW.group_mtime) - UNIX_TIMESTAMP(OLD.group_date_end), 0);
        END IF;
        SET NEW.group_date_end = 0;
    END IF;
END//

CREATE TRIGGER mxq_job_before_insert BEFORE INSERT ON mxq_job FOR EACH ROW
BEGIN
    IF NEW.job_status = 0 AND NEW.server_id = '' AND (NEW.job_callback <> '' OR EXISTS (SELECT 1 FROM mxq_group g
            WHERE g.group_id = NEW.group_id AND (g.group_flags & 2) <> 0)) THEN
        SET NEW.server_id = 'mxq-needs-0.9';
    END IF;
END//

CREATE TRIGGER mxq_job_before_update BEFORE UPDATE ON mxq_job FOR EACH ROW
BEGIN
    IF NEW.job_status IN (100,150,200,250,300,350,399,989) AND OLD.job_status IN (0, 100) AND NEW.job_status NOT IN (100, 989) THEN
        SET NEW.date_start = NOW();
    ELSEIF NEW.job_status = 990 AND OLD.job_status IN (0, 100, 989) THEN
        IF NEW.date_start = 0 THEN
            SET NEW.date_start = NOW();
        END IF;
        IF NEW.date_end = 0 THEN
            SET NEW.date_end = NEW.date_start;
        END IF;
    END IF;
    IF NEW.job_status = 0 AND NEW.server_id = '' AND NEW.daemon_id = 0 AND (NEW.job_callback <> '' OR EXISTS (SELECT 1 FROM mxq_group g
            WHERE g.group_id = NEW.group_id AND (g.group_flags & 2) <> 0)) THEN
        SET NEW.server_id = 'mxq-needs-0.9';
    END IF;
    -- cancelled while queued without a callback: nothing needs the mark
    -- any more (mxqd finds the callbacks of cancelled jobs by it)
    IF NEW.job_status = 990 AND OLD.job_status = 0 AND NEW.job_callback = ''
       AND NEW.server_id = 'mxq-needs-0.9' THEN
        SET NEW.server_id = '';
    END IF;
END//
CREATE TRIGGER mxq_job_after_insert AFTER INSERT ON mxq_job FOR EACH ROW
BEGIN
    UPDATE mxq_group SET
        group_jobs = group_jobs + 1,
        group_jobs_inq = GREATEST(CAST(group_jobs_inq AS SIGNED) + (NEW.job_status IN (0)), 0),
        group_jobs_running = GREATEST(CAST(group_jobs_running AS SIGNED) + (NEW.job_status IN (100,150,200,250,300,350,399,989)), 0),
        group_jobs_finished = GREATEST(CAST(group_jobs_finished AS SIGNED) + (NEW.job_status IN (1000)), 0),
        group_jobs_failed = GREATEST(CAST(group_jobs_failed AS SIGNED) + (NEW.job_status IN (400,750,1024)), 0),
        group_jobs_cancelled = GREATEST(CAST(group_jobs_cancelled AS SIGNED) + (NEW.job_status IN (990)), 0),
        group_jobs_unknown = GREATEST(CAST(group_jobs_unknown AS SIGNED) + (NEW.job_status IN (755,999)), 0),
        group_slots_running = GREATEST(CAST(group_slots_running AS SIGNED) + IF(NEW.job_status IN (100,150,200,250,300,350,399,989), CAST(NEW.host_slots AS SIGNED), 0), 0)
    WHERE group_id = NEW.group_id;
END//

CREATE TRIGGER mxq_job_after_update AFTER UPDATE ON mxq_job FOR EACH ROW
BEGIN
    DECLARE ends, finishes BOOL DEFAULT FALSE;
    IF NEW.group_id <> OLD.group_id THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'mxq_job.group_id cannot change';
    END IF;
    IF NEW.job_status <> OLD.job_status OR NEW.host_slots <> OLD.host_slots THEN
        -- a running job ends (KILLED, FAILED, FINISHED): upstream's totals
        SET ends = OLD.job_status IN (100,150,200,250,300,350,399,989) AND NEW.job_status IN (400, 750, 1000);
        SET finishes = OLD.job_status IN (100,150,200,250,300,350,399,989) AND NEW.job_status = 1000;
        UPDATE mxq_group SET
            group_jobs_inq = GREATEST(CAST(group_jobs_inq AS SIGNED) + (NEW.job_status IN (0)) - (OLD.job_status IN (0)), 0),
            group_jobs_running = GREATEST(CAST(group_jobs_running AS SIGNED) + (NEW.job_status IN (100,150,200,250,300,350,399,989)) - (OLD.job_status IN (100,150,200,250,300,350,399,989)), 0),
            group_jobs_finished = GREATEST(CAST(group_jobs_finished AS SIGNED) + (NEW.job_status IN (1000)) - (OLD.job_status IN (1000)), 0),
            group_jobs_failed = GREATEST(CAST(group_jobs_failed AS SIGNED) + (NEW.job_status IN (400,750,1024)) - (OLD.job_status IN (400,750,1024)), 0),
            group_jobs_cancelled = GREATEST(CAST(group_jobs_cancelled AS SIGNED) + (NEW.job_status IN (990)) - (OLD.job_status IN (990)), 0),
            group_jobs_unknown = GREATEST(CAST(group_jobs_unknown AS SIGNED) + (NEW.job_status IN (755,999)) - (OLD.job_status IN (755,999)), 0),
            group_slots_running = GREATEST(CAST(group_slots_running AS SIGNED) + IF(NEW.job_status IN (100,150,200,250,300,350,399,989), CAST(NEW.host_slots AS SIGNED), 0) - IF(OLD.job_status IN (100,150,200,250,300,350,399,989), CAST(OLD.host_slots AS SIGNED), 0), 0),
            group_sum_starttime = GREATEST(CAST(group_sum_starttime AS SIGNED)
                + IF(NEW.job_status IN (100,150,200,250,300,350,399,989) AND NEW.date_start <> 0, CAST(UNIX_TIMESTAMP(NEW.date_start) AS SIGNED) * CAST(NEW.host_slots AS SIGNED), 0)
                - IF(OLD.job_status IN (100,150,200,250,300,350,399,989) AND OLD.date_start <> 0, CAST(UNIX_TIMESTAMP(OLD.date_start) AS SIGNED) * CAST(OLD.host_slots AS SIGNED), 0), 0),
            stats_max_sumrss = GREATEST(stats_max_sumrss, NEW.stats_max_sumrss),
            stats_max_maxrss = GREATEST(stats_max_maxrss, GREATEST(NEW.stats_maxrss, 0)),
            stats_max_utime_sec = GREATEST(stats_max_utime_sec, NEW.stats_utime_sec),
            stats_max_stime_sec = GREATEST(stats_max_stime_sec, NEW.stats_stime_sec),
            stats_max_real_sec = GREATEST(stats_max_real_sec, NEW.stats_real_sec),
            stats_total_utime_sec = stats_total_utime_sec + IF(ends, NEW.stats_utime_sec, 0),
            stats_total_stime_sec = stats_total_stime_sec + IF(ends, NEW.stats_stime_sec, 0),
            stats_total_real_sec = stats_total_real_sec + IF(ends, NEW.stats_real_sec, 0),
            stats_total_utime_sec_finished = stats_total_utime_sec_finished + IF(finishes, NEW.stats_utime_sec, 0),
            stats_total_stime_sec_finished = stats_total_stime_sec_finished + IF(finishes, NEW.stats_stime_sec, 0),
            stats_total_real_sec_finished = stats_total_real_sec_finished + IF(finishes, NEW.stats_real_sec, 0),
            stats_total_wait_sec = stats_total_wait_sec + IF(OLD.job_status = 0 AND NEW.job_status <> 0 AND NEW.job_status < 400,
                                       GREATEST(TIMESTAMPDIFF(SECOND, NEW.date_submit, NOW()), 0), 0)
        WHERE group_id = NEW.group_id;
        IF OLD.daemon_id <> 0 AND OLD.job_status IN (100,150,200,250,300,350,399,989) THEN
            UPDATE mxq_daemon SET
                daemon_jobs_running = GREATEST(CAST(daemon_jobs_running AS SIGNED) - 1, 0),
                daemon_slots_running = GREATEST(CAST(daemon_slots_running AS SIGNED) - CAST(OLD.host_slots AS SIGNED), 0)
            WHERE daemon_id = OLD.daemon_id;
        END IF;
        IF NEW.daemon_id <> 0 AND NEW.job_status IN (100,150,200,250,300,350,399,989) THEN
            UPDATE mxq_daemon SET
                daemon_jobs_running = daemon_jobs_running + 1,
                daemon_slots_running = daemon_slots_running + NEW.host_slots
            WHERE daemon_id = NEW.daemon_id;
        END IF;
    END IF;
END//

CREATE TRIGGER mxq_job_after_delete AFTER DELETE ON mxq_job FOR EACH ROW
BEGIN
    UPDATE mxq_group SET
        group_jobs = GREATEST(CAST(group_jobs AS SIGNED) - 1, 0),
        group_jobs_inq = GREATEST(CAST(group_jobs_inq AS SIGNED) + - (OLD.job_status IN (0)), 0),
        group_jobs_running = GREATEST(CAST(group_jobs_running AS SIGNED) + - (OLD.job_status IN (100,150,200,250,300,350,399,989)), 0),
        group_jobs_finished = GREATEST(CAST(group_jobs_finished AS SIGNED) + - (OLD.job_status IN (1000)), 0),
        group_jobs_failed = GREATEST(CAST(group_jobs_failed AS SIGNED) + - (OLD.job_status IN (400,750,1024)), 0),
        group_jobs_cancelled = GREATEST(CAST(group_jobs_cancelled AS SIGNED) + - (OLD.job_status IN (990)), 0),
        group_jobs_unknown = GREATEST(CAST(group_jobs_unknown AS SIGNED) + - (OLD.job_status IN (755,999)), 0),
        group_slots_running = GREATEST(CAST(group_slots_running AS SIGNED) + - IF(OLD.job_status IN (100,150,200,250,300,350,399,989), CAST(OLD.host_slots AS SIGNED), 0), 0),
        group_sum_starttime = GREATEST(CAST(group_sum_starttime AS SIGNED)
            - IF(OLD.job_status IN (100,150,200,250,300,350,399,989) AND OLD.date_start <> 0, CAST(UNIX_TIMESTAMP(OLD.date_start) AS SIGNED) * CAST(OLD.host_slots AS SIGNED), 0), 0)
    WHERE group_id = OLD.group_id;
END//
DELIMITER ;
