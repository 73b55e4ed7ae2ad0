-- Triggers that keep mxq_group's counters equal to its job rows.
--
-- Installed by `mxqadmin db upgrade` after the migrations, every time
-- (DROP + CREATE), so a database always runs the current version; upstream
-- MXQ's own triggers of the same names are replaced. Every job status
-- belongs to exactly one counter (see create_tables.sql). GREATEST(..., 0)
-- keeps a counter that was already wrong before the upgrade from making a
-- statement fail; the upgrade recomputes all counters once anyway.

-- upstream MXQ's triggers on mxq_group did part of the same bookkeeping
DROP TRIGGER IF EXISTS mxq_add_group;
DROP TRIGGER IF EXISTS mxq_update_group;
DROP TRIGGER IF EXISTS mxq_add_job;
DROP TRIGGER IF EXISTS mxq_update_job;
DROP TRIGGER IF EXISTS mxq_job_after_insert;
DROP TRIGGER IF EXISTS mxq_job_after_update;
DROP TRIGGER IF EXISTS mxq_job_after_delete;

DELIMITER //
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
        group_slots_running = GREATEST(CAST(group_slots_running AS SIGNED) + IF(NEW.job_status IN (100,150,200,250,300,350,399,989), NEW.host_slots, 0), 0)
    WHERE group_id = NEW.group_id;
END//

CREATE TRIGGER mxq_job_after_update AFTER UPDATE ON mxq_job FOR EACH ROW
BEGIN
    IF NEW.group_id <> OLD.group_id THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'mxq_job.group_id cannot change';
    END IF;
    IF NEW.job_status <> OLD.job_status OR NEW.host_slots <> OLD.host_slots THEN
        UPDATE mxq_group SET
            group_jobs_inq = GREATEST(CAST(group_jobs_inq AS SIGNED) + (NEW.job_status IN (0)) - (OLD.job_status IN (0)), 0),
            group_jobs_running = GREATEST(CAST(group_jobs_running AS SIGNED) + (NEW.job_status IN (100,150,200,250,300,350,399,989)) - (OLD.job_status IN (100,150,200,250,300,350,399,989)), 0),
            group_jobs_finished = GREATEST(CAST(group_jobs_finished AS SIGNED) + (NEW.job_status IN (1000)) - (OLD.job_status IN (1000)), 0),
            group_jobs_failed = GREATEST(CAST(group_jobs_failed AS SIGNED) + (NEW.job_status IN (400,750,1024)) - (OLD.job_status IN (400,750,1024)), 0),
            group_jobs_cancelled = GREATEST(CAST(group_jobs_cancelled AS SIGNED) + (NEW.job_status IN (990)) - (OLD.job_status IN (990)), 0),
            group_jobs_unknown = GREATEST(CAST(group_jobs_unknown AS SIGNED) + (NEW.job_status IN (755,999)) - (OLD.job_status IN (755,999)), 0),
            group_slots_running = GREATEST(CAST(group_slots_running AS SIGNED) + IF(NEW.job_status IN (100,150,200,250,300,350,399,989), NEW.host_slots, 0) - IF(OLD.job_status IN (100,150,200,250,300,350,399,989), OLD.host_slots, 0), 0),
            stats_max_sumrss = GREATEST(stats_max_sumrss, NEW.stats_max_sumrss),
            stats_max_maxrss = GREATEST(stats_max_maxrss, GREATEST(NEW.stats_maxrss, 0)),
            stats_max_utime_sec = GREATEST(stats_max_utime_sec, NEW.stats_utime_sec),
            stats_max_stime_sec = GREATEST(stats_max_stime_sec, NEW.stats_stime_sec),
            stats_max_real_sec = GREATEST(stats_max_real_sec, NEW.stats_real_sec),
            stats_total_utime_sec = stats_total_utime_sec + IF(NEW.job_status IN (1000) AND OLD.job_status NOT IN (1000), NEW.stats_utime_sec, 0),
            stats_total_stime_sec = stats_total_stime_sec + IF(NEW.job_status IN (1000) AND OLD.job_status NOT IN (1000), NEW.stats_stime_sec, 0),
            stats_total_real_sec = stats_total_real_sec + IF(NEW.job_status IN (1000) AND OLD.job_status NOT IN (1000), NEW.stats_real_sec, 0),
            stats_total_wait_sec = stats_total_wait_sec + IF(OLD.job_status = 0 AND NEW.job_status <> 0 AND NEW.job_status < 400,
                                       GREATEST(TIMESTAMPDIFF(SECOND, NEW.date_submit, NOW()), 0), 0),
            group_date_end = IF(group_jobs_inq = 0 AND group_jobs_running = 0, NOW(), group_date_end)
        WHERE group_id = NEW.group_id;
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
        group_slots_running = GREATEST(CAST(group_slots_running AS SIGNED) + - IF(OLD.job_status IN (100,150,200,250,300,350,399,989), OLD.host_slots, 0), 0)
    WHERE group_id = OLD.group_id;
END//
DELIMITER ;
