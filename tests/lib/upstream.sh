# tests/lib/upstream.sh - upstream MXQ 0.22 databases and counter checks for
# schema and compatibility tests.
#
# Source after tests/lib/mariadb.sh (and mxq_db_start):
#
#   upstream_db NAME VARIANT
#       Create database NAME WITH CHARACTER SET latin1 (as upstream's SQL
#       needs), grant it to the test user, write $MXQ_TEST_DIR/NAME.cnf and
#       load tests/fixtures/upstream-0.22.sql for VARIANT:
#         0.22.3   upstream master (mxq_daemon.daemon_time)
#         master   upstream-master (mxq_daemon.daemon_maxtime)
#       Returns non-zero when the server refuses any of it.
#   upstream_variants       the VARIANTs above, space-separated
#   counter_mismatches DB   groups whose counters differ from their job rows
#                           (empty when all agree)
#
# Lines of the fixture tagged "-- only:V" belong to variant V only.

upstream_variants="0.22.3 master"

upstream_db() {
	case $2 in
	0.22.3) _other=master ;;
	master) _other=0.22.3 ;;
	*) echo "upstream_db: unknown variant '$2' (0.22.3 or master)" >&2; return 2 ;;
	esac
	mxq_db_add "$1" || return 1
	mxq_sql "ALTER DATABASE $1 CHARACTER SET latin1" || return 1
	grep -v -- "-- only:$_other\$" "$MXQ_SRC_DIR/tests/fixtures/upstream-0.22.sql" |
		mxq_sql_db "$1"
}

# Groups whose counters differ from their job rows. The categories are
# written out here on purpose, independent of the triggers and migration:
#   inq INQ; running ASSIGNED LOADED RUNNING UNKNOWN_RUN EXTRUNNING STOPPED
#   KILLING CANCELLING; finished FINISHED; failed KILLED FAILED EXIT;
#   cancelled CANCELLED; unknown UNKNOWN_PRE UNKNOWN.
counter_mismatches() {
	mxq_sql_db "$1" "SELECT g.group_id,
		CONCAT_WS(' ', g.group_jobs, g.group_jobs_inq, g.group_jobs_running,
			g.group_jobs_finished, g.group_jobs_failed, g.group_jobs_cancelled,
			g.group_jobs_unknown, g.group_slots_running) AS have,
		CONCAT_WS(' ', COALESCE(c.n, 0), COALESCE(c.inq, 0), COALESCE(c.run, 0),
			COALESCE(c.fin, 0), COALESCE(c.fail, 0), COALESCE(c.canc, 0),
			COALESCE(c.unk, 0), COALESCE(c.slots, 0)) AS want
		FROM mxq_group g LEFT JOIN (
			SELECT group_id, COUNT(*) AS n,
				SUM(job_status = 0) AS inq,
				SUM(job_status IN (100, 150, 200, 250, 300, 350, 399, 989)) AS run,
				SUM(job_status = 1000) AS fin,
				SUM(job_status IN (400, 750, 1024)) AS fail,
				SUM(job_status = 990) AS canc,
				SUM(job_status IN (755, 999)) AS unk,
				SUM(CASE WHEN job_status IN (100, 150, 200, 250, 300, 350, 399, 989)
					THEN host_slots ELSE 0 END) AS slots
			FROM mxq_job GROUP BY group_id) c ON c.group_id = g.group_id
		HAVING have <> want ORDER BY g.group_id"
}

