#!/bin/sh
# tests/test_schema.sh - `mxqadmin db upgrade` and `db status` against a
# private MariaDB (tests/lib/mariadb.sh).
#
# One server, several databases:
#   mxq       new database, created by `db upgrade` (mxq_db_start)
#   mxq_old   upstream MXQ 0.22.3 (tests/fixtures/upstream-0.22.sql, via
#             tests/lib/upstream.sh), then upgraded; mxq_old_master the
#             same for upstream-master (daemon_maxtime)
#   others    partial, interrupted, concurrent, dry-run, foreign and
#             too-new cases
# An upgraded upstream database must end up exactly like the new one:
# columns (except their order), indexes, tables and triggers are compared
# through information_schema, and both must match mysql/schema.expected,
# so drift between create_tables.sql and the migrations fails here.
# Counters are checked against an independent COUNT(*) by status category
# after every step of a job life cycle.

. "$(dirname -- "$0")/lib/mariadb.sh"
. "$(dirname -- "$0")/lib/upstream.sh"

mxqadmin=$MXQ_BUILD_DIR/mxqadmin

# ------------------------------------------------------------------ TAP

. "$MXQ_SRC_DIR/tests/lib/tap.sh"

# ------------------------------------------------------------- helpers

# Expected state, from the source tree rather than from the program.
latest=$(ls "$MXQ_SRC_DIR/mysql/migrations" 2>/dev/null |
	sed -n 's/^0*\([0-9][0-9]*\)_.*\.sql$/\1/p' | sort -n | tail -n 1)
latest=${latest:-0}
nmigrations=$(ls "$MXQ_SRC_DIR/mysql/migrations" 2>/dev/null | grep -c '^[0-9]\{4\}_.*\.sql$')
expected_triggers=$(grep -io 'CREATE TRIGGER *[A-Za-z0-9_]*' \
	"$MXQ_SRC_DIR/mysql/create_triggers.sql" | awk '{ print $3 }' | sort)

# mxqadmin with a defaults file; output (stdout+stderr) in $out, status in $rc
admin() {
	_cnf=$1
	shift
	out=$("$mxqadmin" -M "$_cnf" -S mxqclient "$@" 2>&1)
	rc=$?
}

version_of() {
	mxq_sql_db "$1" "SELECT COALESCE(MAX(version), 'none') FROM mxq_schema_version"
}

triggers_of() {
	mxq_sql_db "$1" "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS
		WHERE TRIGGER_SCHEMA = '$1' ORDER BY TRIGGER_NAME"
}

columns_of() {
	mxq_sql_db "$1" "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE,
		IS_NULLABLE, COALESCE(COLUMN_DEFAULT, '(none)'), EXTRA,
		COALESCE(CHARACTER_SET_NAME, '-'), COALESCE(COLLATION_NAME, '-')
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '$1'
		ORDER BY TABLE_NAME, COLUMN_NAME"
}

indexes_of() {
	mxq_sql_db "$1" "SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME,
		COALESCE(SUB_PART, '-'), NON_UNIQUE, INDEX_TYPE
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '$1'
		ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX"
}

tables_of() {
	mxq_sql_db "$1" "SELECT TABLE_NAME, ENGINE, TABLE_COLLATION
		FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$1' ORDER BY TABLE_NAME"
}

trigger_bodies_of() {
	mxq_sql_db "$1" "SELECT TRIGGER_NAME, EVENT_MANIPULATION, EVENT_OBJECT_TABLE,
		ACTION_TIMING, MD5(ACTION_STATEMENT)
		FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '$1'
		ORDER BY TRIGGER_NAME"
}

checksums_of() {
	mxq_sql_db "$1" "CHECKSUM TABLE mxq_group, mxq_job, mxq_daemon, mxq_schema_version EXTENDED"
}

counters_of() {
	mxq_sql_db "$1" "SELECT group_id, group_jobs, group_jobs_inq, group_jobs_running,
		group_jobs_finished, group_jobs_failed, group_jobs_cancelled, group_jobs_unknown,
		group_slots_running, group_jobs_restarted FROM mxq_group ORDER BY group_id"
}

# The 2016 columns of TABLE in DB, comma-separated (read before the upgrade)
old_columns() {
	mxq_sql_db "$1" "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION)
		FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = '$1' AND TABLE_NAME = '$2' $3"
}

# An upstream MXQ 0.22.3 database NAME with the fixture rows.
make_2016_db() {
	upstream_db "$1" 0.22.3
}

# The rows of DB in a form that changes whenever any value does
dump_rows() {
	mariadb-dump --no-defaults --socket="$MXQ_TEST_DB_SOCKET" -uroot --no-create-info \
		--skip-extended-insert --skip-dump-date --skip-comments --skip-triggers "$1"
}

# --------------------------------------------------------------- start

if ! mxq_db_start; then
	not_ok "private MariaDB starts and 'mxqadmin db upgrade' creates a new database"
	exit 1
fi
if [ "$latest" -eq 0 ]; then
	not_ok "mysql/migrations has at least one migration"
	exit 1
fi

# --------------------------------------- (a) new database via db upgrade

is "new database: version is the latest migration ($latest)" "$(version_of mxq)" "$latest"
is "new database: every migration recorded" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_schema_version")" "$nmigrations"
is "new database: counter triggers installed" "$(triggers_of mxq)" "$expected_triggers"
admin "$MXQ_MYSQL_DEFAULT_FILE" db status
contains "new database: db status says triggers installed" "$out" "counter triggers: installed"
contains "new database: db status says nothing pending" "$out" "pending migrations: none"
contains "new database: db status finds no schema difference" "$out" "schema: as expected"
[ "$rc" -eq 0 ] && echo "$out" | grep -q "schema: as expected" ||
	diag "mysql/schema.expected is out of date? regenerate it: make schema-expected"
admin "$MXQ_MYSQL_DEFAULT_FILE" db schema
is "new database: db schema prints exactly mysql/schema.expected" "$out" \
	"$(grep -v '^#' "$MXQ_SRC_DIR/mysql/schema.expected")"

# db status names each difference: a dropped column, a changed default, a
# missing index and a missing trigger, on a copy of the new database
mxq_db_add mxq_drift
admin "$MXQ_TEST_DIR/mxq_drift.cnf" db upgrade
mxq_sql_db mxq_drift "ALTER TABLE mxq_group DROP COLUMN stats_idle_sec;
	ALTER TABLE mxq_job ALTER COLUMN job_stdout SET DEFAULT '/tmp/x', DROP INDEX mxq_job_claim;
	DROP TRIGGER mxq_job_before_update; CREATE TABLE mxq_extra (x INT)"
admin "$MXQ_TEST_DIR/mxq_drift.cnf" db status
contains "db status names a missing column" "$out" "column mxq_group.stats_idle_sec: missing"
contains "db status names a changed default" "$out" "column mxq_job.job_stdout: is text NO '/tmp/x'"
contains "db status names a missing index" "$out" "index mxq_job.mxq_job_claim: missing"
contains "db status names a missing trigger" "$out" "trigger mxq_job_before_update: missing"
contains "db status names an unexpected table" "$out" "table mxq_extra: not expected"
contains "db status counts the differences" "$out" "schema: 6 differences"

# ------------------------------------- (b) 2016-era database, upgraded

make_2016_db mxq_old || { not_ok "load the upstream 0.22.3 fixture"; exit 1; }
old_cnf=$MXQ_TEST_DIR/mxq_old.cnf

group_cols=$(old_columns mxq_old mxq_group \
	"AND COLUMN_NAME NOT LIKE 'group\_jobs%' AND COLUMN_NAME NOT IN
	('group_slots_running', 'group_sum_starttime')")
group_cols="$group_cols,group_jobs_restarted"
job_cols=$(old_columns mxq_old mxq_job)
daemon_cols=$(old_columns mxq_old mxq_daemon)
dump_old_rows() {
	mxq_sql_db mxq_old "SELECT $group_cols FROM mxq_group ORDER BY group_id;
		SELECT $job_cols FROM mxq_job ORDER BY job_id;
		SELECT $daemon_cols FROM mxq_daemon ORDER BY daemon_id"
}
rows_before=$(dump_old_rows)
counts_before=$(mxq_sql_db mxq_old "SELECT (SELECT COUNT(*) FROM mxq_group),
	(SELECT COUNT(*) FROM mxq_job), (SELECT COUNT(*) FROM mxq_daemon)")

check "upstream fixture: counters are wrong before the upgrade" \
	test -n "$(counter_mismatches mxq_old)"
admin "$old_cnf" db status
contains "upstream fixture: db status reports version 0" "$out" "version 0 (2016-era"
contains "upstream fixture: db status lists the pending migration" "$out" "0001_mxq_2016_to_core"
contains "upstream fixture: db status names upstream's triggers" "$out" \
	"other triggers: mxq_add_group, mxq_add_job, mxq_update_group, mxq_update_job"
contains "upstream fixture: db status names the missing daemon_maxtime" "$out" \
	"column mxq_daemon.daemon_maxtime: missing"
contains "upstream fixture: db status names latin1 paths" "$out" \
	"column mxq_job.job_workdir: is varchar(4096) NO (none) - latin1"

# --dry-run first: must change nothing
cols_before_dry=$(columns_of mxq_old)
admin "$old_cnf" db upgrade --dry-run
is "dry run exits 0" "$rc" 0
contains "dry run says what it would apply" "$out" "would apply migration 0001_mxq_2016_to_core"
is "dry run changes no column" "$(columns_of mxq_old)" "$cols_before_dry"
is "dry run creates no version table" \
	"$(mxq_sql_db mxq_old "SELECT COUNT(*) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = 'mxq_old' AND TABLE_NAME = 'mxq_schema_version'")" 0
is "dry run changes no trigger (upstream's stay)" "$(triggers_of mxq_old)" \
	"$(printf 'mxq_add_group\nmxq_add_job\nmxq_update_group\nmxq_update_job')"

admin "$old_cnf" db upgrade
is "2016 upgrade exits 0" "$rc" 0
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | diag
contains "2016 upgrade applies 0001" "$out" "apply migration 0001_mxq_2016_to_core"
is "2016 upgrade: version is the latest" "$(version_of mxq_old)" "$latest"
is "2016 upgrade: counter triggers installed" "$(triggers_of mxq_old)" "$expected_triggers"
is "2016 upgrade: row counts kept" "$(mxq_sql_db mxq_old "SELECT (SELECT COUNT(*) FROM mxq_group),
	(SELECT COUNT(*) FROM mxq_job), (SELECT COUNT(*) FROM mxq_daemon)")" "$counts_before"
is "2016 upgrade: contents of the 2016 columns kept (incl. group_mtime)" \
	"$(dump_old_rows)" "$rows_before"
is "2016 upgrade: every counter equals COUNT(*) of its category" "$(counter_mismatches mxq_old)" ""
tab=$(printf '\t')
is "2016 upgrade: counters as documented in the fixture" "$(counters_of mxq_old)" \
"1${tab}10${tab}3${tab}2${tab}3${tab}2${tab}0${tab}0${tab}4${tab}1
2${tab}6${tab}2${tab}0${tab}2${tab}0${tab}2${tab}0${tab}0${tab}0
3${tab}2${tab}0${tab}0${tab}2${tab}0${tab}0${tab}0${tab}0${tab}0
4${tab}3${tab}1${tab}1${tab}0${tab}0${tab}0${tab}1${tab}1${tab}0
5${tab}2${tab}0${tab}0${tab}0${tab}0${tab}2${tab}0${tab}0${tab}0"
counters_upgraded=$(counters_of mxq_old)
is "2016 upgrade: group_sum_starttime is start time x slots of the running jobs" \
	"$(mxq_sql_db mxq_old "SELECT COUNT(*) FROM mxq_group g WHERE group_sum_starttime <>
		(SELECT COALESCE(SUM(UNIX_TIMESTAMP(date_start) * host_slots), 0) FROM mxq_job j
		 WHERE j.group_id = g.group_id AND job_status IN (100, 150, 200) AND date_start <> 0)")" 0
is "2016 upgrade: both daemon time columns carry the time limit" \
	"$(mxq_sql_db mxq_old "SELECT DISTINCT CONCAT(daemon_time, ' ', daemon_maxtime) FROM mxq_daemon")" \
	"1440 1440"
admin "$old_cnf" db status
contains "2016 upgrade: db status finds no schema difference" "$out" "schema: as expected"
is "2016 upgrade: new columns have their defaults, queued jobs stay visible to old daemons" \
	"$(mxq_sql_db mxq_old "SELECT CONCAT_WS(',', SUM(job_tmpdir_size), SUM(job_gpu),
		MAX(tags), MAX(prerequisites), MAX(group_whitelist), MAX(group_blacklist)) FROM mxq_group;
		SELECT COUNT(*) FROM mxq_job WHERE job_callback <> '' OR server_id = 'mxq-needs-0.9';
		SELECT CONCAT_WS(',', MAX(tags), SUM(daemon_gpus_max), SUM(daemon_tmpdir_free_bytes))
		FROM mxq_daemon")" "0,0,,,,
0
,0,0"

sums_before=$(checksums_of mxq_old)
triggers_before=$(trigger_bodies_of mxq_old)
dump_before=$(dump_rows mxq_old)
admin "$old_cnf" db upgrade
is "second upgrade exits 0" "$rc" 0
is "second upgrade: a dump of every row is identical" "$(dump_rows mxq_old)" "$dump_before"
contains "second upgrade: schema is up to date" "$out" "schema is up to date (version $latest)"
not_contains "second upgrade applies nothing" "$out" "apply migration"
is "second upgrade changes no data (CHECKSUM TABLE)" "$(checksums_of mxq_old)" "$sums_before"
is "second upgrade: same triggers" "$(trigger_bodies_of mxq_old)" "$triggers_before"
admin "$old_cnf" db status
contains "upgraded: db status says nothing pending" "$out" "pending migrations: none"

# ----------------------------- (c) upgraded upstream == new, in every detail

upstream_db mxq_old_master master || not_ok "load the upstream-master fixture"
admin "$MXQ_TEST_DIR/mxq_old_master.cnf" db status
contains "upstream-master fixture: db status names the missing daemon_time" "$out" \
	"column mxq_daemon.daemon_time: missing"
admin "$MXQ_TEST_DIR/mxq_old_master.cnf" db upgrade
is "upstream-master upgrade exits 0" "$rc" 0
is "upstream-master upgrade: every counter equals COUNT(*) of its category" \
	"$(counter_mismatches mxq_old_master)" ""
is "upstream-master upgrade: counters as for 0.22.3" "$(counters_of mxq_old_master)" \
	"$counters_upgraded"
for db in mxq_old mxq_old_master; do
	is "$db: same tables, engines and collations as new" "$(tables_of $db)" "$(tables_of mxq)"
	is "$db: same columns (name, type, default, nullability, charset) as new" \
		"$(columns_of $db)" "$(columns_of mxq)"
	is "$db: same indexes as new" "$(indexes_of $db)" "$(indexes_of mxq)"
	is "$db: same triggers as new" "$(trigger_bodies_of $db)" "$(trigger_bodies_of mxq)"
done

# -------------------- (d) an old client that knows only 2016 columns

old_client_insert() {
	mxq_sql_db "$1" "INSERT INTO mxq_group (group_name, group_priority, user_uid, user_name,
			user_gid, user_group, job_command, job_threads, job_memory, job_time)
		VALUES ('old-client', 127, 1003, 'carol', 100, 'users', 'echo', 1, 100, 5);
		SET @g = LAST_INSERT_ID();
		INSERT INTO mxq_job (job_priority, group_id, job_workdir, job_argc, job_argv,
			job_stdout, job_stderr, job_umask, host_submit)
		VALUES (127, @g, '/tmp', 2, 'echo\\\\0hi\\\\0', '/dev/null', '/dev/null', 18, 'login3');
		SELECT CONCAT_WS(' ', group_jobs, group_jobs_inq, group_jobs_running, tags,
			job_gpu, (SELECT COUNT(*) FROM mxq_job WHERE group_id = @g AND job_callback = ''))
		FROM mxq_group WHERE group_id = @g"
}
for db in mxq mxq_old; do
	is "$db: old client inserts a group and a job; counters 1 job, 1 inq" \
		"$(old_client_insert "$db" 2>&1)" "1 1 0  0 1"
	is "$db: counters consistent after the old client's insert" "$(counter_mismatches "$db")" ""
done

# ------------------------- (e) counters through a whole job life cycle

mxq_sql "DELETE FROM mxq_job; DELETE FROM mxq_group;
	INSERT INTO mxq_group (group_id, user_uid, user_name, user_gid, user_group, job_command)
	VALUES (11, 1001, 'alice', 100, 'users', 'a'), (12, 1002, 'bob', 100, 'users', 'b')"
# One step per line: description|SQL. After every step, every group's
# counters must equal its job rows.
job_insert="INSERT INTO mxq_job (job_id, job_status, group_id, job_workdir, job_argc, job_argv, job_umask, host_slots) VALUES"
step_failed=
steps=0
while IFS='|' read -r desc sql; do
	[ -n "$desc" ] || continue
	steps=$((steps + 1))
	if ! err=$(mxq_sql "$sql" 2>&1); then
		not_ok "life cycle: $desc (SQL failed)"
		printf '%s\n' "$err" | diag
		step_failed=1
		continue
	fi
	bad=$(counter_mismatches mxq)
	if [ -n "$bad" ]; then
		not_ok "life cycle: $desc"
		printf 'group have want\n%s\n' "$bad" | diag
		step_failed=1
	fi
done <<EOF
insert six INQ jobs|$job_insert (1,0,11,'/',1,'x',18,0), (2,0,11,'/',1,'x',18,0), (3,0,11,'/',1,'x',18,0), (4,0,11,'/',1,'x',18,0), (5,0,11,'/',1,'x',18,0), (6,0,11,'/',1,'x',18,0)
insert jobs that are already RUNNING and FINISHED|$job_insert (7,200,12,'/',1,'x',18,4), (8,1000,12,'/',1,'x',18,2)
a job ends whose daemon row and group_sum_starttime already show 0 (nothing goes negative)|INSERT INTO mxq_daemon (daemon_id, hostname, mxq_version, boot_id, pid_starttime, daemon_pid) VALUES (77, 'h', 'x', 'b', 1, 1); $job_insert (10,0,12,'/',1,'x',18,0); UPDATE mxq_job SET job_status = 200, daemon_id = 77, host_slots = 3 WHERE job_id = 10; UPDATE mxq_daemon SET daemon_jobs_running = 0, daemon_slots_running = 0 WHERE daemon_id = 77; UPDATE mxq_group SET group_sum_starttime = 0 WHERE group_id = 12; UPDATE mxq_job SET job_status = 1000 WHERE job_id = 10; DELETE FROM mxq_job WHERE job_id = 10
INQ to ASSIGNED with slots|UPDATE mxq_job SET job_status = 100, host_slots = 2 WHERE job_id = 1
ASSIGNED to LOADED|UPDATE mxq_job SET job_status = 150 WHERE job_id = 1
LOADED to RUNNING, slots change in the same update|UPDATE mxq_job SET job_status = 200, host_slots = 3 WHERE job_id = 1
RUNNING to FINISHED|UPDATE mxq_job SET job_status = 1000 WHERE job_id = 1
INQ to RUNNING|UPDATE mxq_job SET job_status = 200, host_slots = 1 WHERE job_id = 2
RUNNING back to INQ (recovery), slots reset|UPDATE mxq_job SET job_status = 0, host_slots = 0 WHERE job_id = 2
INQ to RUNNING again|UPDATE mxq_job SET job_status = 200, host_slots = 5 WHERE job_id = 2
RUNNING to UNKNOWN_RUN|UPDATE mxq_job SET job_status = 250 WHERE job_id = 2
UNKNOWN_RUN to UNKNOWN|UPDATE mxq_job SET job_status = 999 WHERE job_id = 2
INQ to RUNNING to KILLING|UPDATE mxq_job SET job_status = 200, host_slots = 2 WHERE job_id = 3; UPDATE mxq_job SET job_status = 399 WHERE job_id = 3
KILLING to KILLED|UPDATE mxq_job SET job_status = 400 WHERE job_id = 3
INQ to CANCELLING|UPDATE mxq_job SET job_status = 989, host_slots = 1 WHERE job_id = 4
CANCELLING to CANCELLED|UPDATE mxq_job SET job_status = 990 WHERE job_id = 4
INQ to EXTRUNNING to STOPPED|UPDATE mxq_job SET job_status = 300, host_slots = 2 WHERE job_id = 5; UPDATE mxq_job SET job_status = 350 WHERE job_id = 5
STOPPED to FAILED|UPDATE mxq_job SET job_status = 750 WHERE job_id = 5
FAILED back to INQ|UPDATE mxq_job SET job_status = 0, host_slots = 0 WHERE job_id = 5
INQ to UNKNOWN_PRE to EXIT|UPDATE mxq_job SET job_status = 755 WHERE job_id = 6; UPDATE mxq_job SET job_status = 1024 WHERE job_id = 6
slots of a RUNNING job change without a status change|UPDATE mxq_job SET host_slots = 8 WHERE job_id = 7
an update that changes neither status nor slots|UPDATE mxq_job SET job_priority = 1 WHERE group_id = 11
several jobs in one statement|UPDATE mxq_job SET job_status = 990 WHERE job_status IN (0, 1024)
delete a RUNNING job|DELETE FROM mxq_job WHERE job_id = 7
delete a FINISHED job|DELETE FROM mxq_job WHERE job_id = 8
delete every job of a group|DELETE FROM mxq_job WHERE group_id = 11
EOF
[ -n "$step_failed" ] || ok "life cycle: counters equal COUNT(*) by category after each of $steps steps"
is "life cycle: all counters back to 0" "$(mxq_sql "SELECT SUM(group_jobs + group_jobs_inq +
	group_jobs_running + group_jobs_finished + group_jobs_failed + group_jobs_cancelled +
	group_jobs_unknown + group_slots_running) FROM mxq_group")" 0
check "a job cannot move to another group" \
	test -n "$(mxq_sql "$job_insert (9,0,11,'/',1,'x',18,0);
		UPDATE mxq_job SET group_id = 12 WHERE job_id = 9" 2>&1 >/dev/null)"
is "counters consistent after the refused move" "$(counter_mismatches mxq)" ""

# ------------------------------------- partial and concurrent upgrades

# A 2016 database someone started to upgrade by hand, and whose first
# upgrade stopped right after creating the (empty) version table.
make_2016_db mxq_partial
mxq_sql_db mxq_partial "ALTER TABLE mxq_group ADD COLUMN job_tmpdir_size INT4 UNSIGNED NOT NULL DEFAULT 0;
	ALTER TABLE mxq_job ADD INDEX mxq_job_claim (group_id, job_status, job_priority, job_id);
	CREATE TABLE mxq_schema_version LIKE mxq.mxq_schema_version"
admin "$MXQ_TEST_DIR/mxq_partial.cnf" db upgrade
is "partially upgraded database: upgrade exits 0" "$rc" 0
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | diag
is "partially upgraded database: same columns as new" "$(columns_of mxq_partial)" "$(columns_of mxq)"
is "partially upgraded database: same indexes as new" "$(indexes_of mxq_partial)" "$(indexes_of mxq)"

# Upgrades killed (SIGKILL, no cleanup) before statement 1, 2, 3, ... of
# each run, on the same database: every run gets one statement further
# than the one before; the last one completes. Both variants.
for variant in $upstream_variants; do
	db=mxq_killed_$(echo "$variant" | tr . _)
	upstream_db "$db" "$variant"
	kills=0
	budget=1
	while [ "$budget" -le 80 ]; do
		MXQ_TEST_UPGRADE_STOP_AFTER=$budget "$mxqadmin" -M "$MXQ_TEST_DIR/$db.cnf" \
			db upgrade >"$MXQ_TEST_DIR/killed.out" 2>&1
		rc=$?
		[ "$rc" -eq 137 ] || break
		kills=$((kills + 1))
		budget=$((budget + 3))
	done
	is "$variant upgrade killed $kills times: the last run completes" "$rc" 0
	[ "$rc" -eq 0 ] || diag <"$MXQ_TEST_DIR/killed.out"
	check "$variant upgrade was really killed mid-migration several times" test "$kills" -ge 5
	is "$variant upgrade after kills: same schema as new" \
		"$(columns_of "$db"; indexes_of "$db"; trigger_bodies_of "$db"; version_of "$db")" \
		"$(columns_of mxq; indexes_of mxq; trigger_bodies_of mxq; version_of mxq)"
	is "$variant upgrade after kills: counters equal the job rows" "$(counter_mismatches "$db")" ""
	is "$variant upgrade after kills: counters as without kills" "$(counters_of "$db")" \
		"$counters_upgraded"
	admin "$MXQ_TEST_DIR/$db.cnf" db status
	contains "$variant upgrade after kills: db status finds no difference" "$out" "schema: as expected"
done

# An upgrade stopped where upstream's triggers are gone and ours are not
# there yet, while upstream mxqsub goes on submitting: the next upgrade
# must bring the counters of those jobs right, or mxqd (which dispatches
# on group_jobs_inq) never starts them.
upstream_db mxq_gap 0.22.3 || not_ok "load the fixture for the stopped upgrade"
MXQ_TEST_UPGRADE_STOP_AFTER=20 "$mxqadmin" -M "$MXQ_TEST_DIR/mxq_gap.cnf" db upgrade \
	>"$MXQ_TEST_DIR/gap.out" 2>&1
is "stopped upgrade: killed before the triggers" \
	"$(mxq_sql_db mxq_gap "SELECT COUNT(*) FROM information_schema.TRIGGERS
		WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'mxq_job_after%'")" 0
old_client_insert mxq_gap >/dev/null 2>&1
mxq_sql_db mxq_gap "INSERT INTO mxq_job (job_priority, group_id, job_workdir, job_argc, job_argv,
		job_stdout, job_stderr, job_umask, host_submit)
	SELECT 127, MIN(group_id), '/tmp', 1, 'true\\0', '/dev/null', '/dev/null', 18, 'login3'
	FROM mxq_group" >/dev/null 2>&1
check "stopped upgrade: the old client's writes left counters wrong" \
	test -n "$(counter_mismatches mxq_gap)"
admin "$MXQ_TEST_DIR/mxq_gap.cnf" db upgrade
is "stopped upgrade run again: exit 0" "$rc" 0
is "stopped upgrade run again: counters equal the job rows" "$(counter_mismatches mxq_gap)" ""

# Hiding from upstream daemons (server_id 'mxq-needs-0.9' while INQ):
# a job with a callback, whatever its group; a group upstream mxqadmin
# --reopen opened (group_flags & ~CLOSED) keeps CLOSED | NEW_ONLY.
mxq_sql "DELETE FROM mxq_job; DELETE FROM mxq_group;
	INSERT INTO mxq_group (group_id, user_uid, user_name, user_gid, user_group, job_command, tags)
	VALUES (21, 1001, 'alice', 100, 'users', 'a', ''), (22, 1001, 'alice', 100, 'users', 'a', 'ssd');
	INSERT INTO mxq_job (job_id, group_id, job_workdir, job_argc, job_argv, job_umask, job_callback)
	VALUES (31, 21, '/', 1, 'a', 18, '/bin/cb'), (32, 21, '/', 1, 'a', 18, '')"
is "a queued job with a callback is hidden from upstream daemons, its neighbour is not" \
	"$(mxq_sql "SELECT GROUP_CONCAT(job_id, ':', server_id ORDER BY job_id) FROM mxq_job")" \
	"31:mxq-needs-0.9,32:"
mxq_sql "UPDATE mxq_job SET job_status = 750, server_id = 'n1', daemon_id = 3 WHERE job_id = 31;
	UPDATE mxq_job SET job_status = 0, server_id = '', daemon_id = 0 WHERE job_id = 31"
is "... and hidden again when requeued" \
	"$(mxq_sql "SELECT server_id FROM mxq_job WHERE job_id = 31")" "mxq-needs-0.9"
mxq_sql "UPDATE mxq_group SET group_flags = group_flags & ~1 WHERE group_id = 22 AND group_flags & 4 = 0"
is "upstream --reopen of a group with tags: still CLOSED | NEW_ONLY" \
	"$(mxq_sql "SELECT group_flags FROM mxq_group WHERE group_id = 22")" 3

# A database of ours from before the upstream migration (simulated: its
# record removed, triggers of that time that did not mark anything) with a
# queued job in a group with tags: the migration marks both.
mxq_db_add mxq_ours_old
admin "$MXQ_TEST_DIR/mxq_ours_old.cnf" db upgrade
up_version=$(ls "$MXQ_SRC_DIR/mysql/migrations" | sed -n 's/^0*\([0-9][0-9]*\)_upstream_0_22\.sql$/\1/p')
mxq_sql_db mxq_ours_old "DROP TRIGGER mxq_group_before_insert; DROP TRIGGER mxq_job_before_insert;
	DELETE FROM mxq_schema_version WHERE version >= $up_version;
	INSERT INTO mxq_group (group_id, user_uid, user_name, user_gid, user_group, job_command, tags)
	VALUES (5, 1001, 'alice', 100, 'users', 'a', 'gpu-node'), (6, 1001, 'alice', 100, 'users', 'b', '');
	INSERT INTO mxq_job (job_id, group_id, job_workdir, job_argc, job_argv, job_umask)
	VALUES (51, 5, '/', 1, 'x', 18), (61, 6, '/', 1, 'x', 18)"
admin "$MXQ_TEST_DIR/mxq_ours_old.cnf" db upgrade
is "our older database: the upstream migration runs again, exit 0" "$rc" 0
is "our older database: the tagged group becomes CLOSED | NEW_ONLY, the plain one stays open" \
	"$(mxq_sql_db mxq_ours_old "SELECT CONCAT(group_id, ':', group_flags) FROM mxq_group ORDER BY 1")" \
	"$(printf '5:3\n6:0')"
is "our older database: its queued job is hidden from upstream daemons, the plain one not" \
	"$(mxq_sql_db mxq_ours_old "SELECT CONCAT(job_id, ':', server_id) FROM mxq_job ORDER BY 1")" \
	"$(printf '51:mxq-needs-0.9\n61:')"

# Two upgrades at once, of a 2016 database and of an empty one.
for kind in 2016 empty; do
	db=mxq_conc_$kind
	if [ "$kind" = 2016 ]; then make_2016_db "$db"; else mxq_db_add "$db"; fi
	"$mxqadmin" -M "$MXQ_TEST_DIR/$db.cnf" db upgrade >"$MXQ_TEST_DIR/u1" 2>&1 &
	p1=$!
	"$mxqadmin" -M "$MXQ_TEST_DIR/$db.cnf" db upgrade >"$MXQ_TEST_DIR/u2" 2>&1 &
	p2=$!
	wait "$p1"
	rc1=$?
	wait "$p2"
	rc2=$?
	is "two concurrent upgrades ($kind database) both exit 0" "$rc1 $rc2" "0 0"
	[ "$rc1$rc2" = 00 ] || cat "$MXQ_TEST_DIR/u1" "$MXQ_TEST_DIR/u2" | diag
	# the lock serialises them: one does the work, the other finds it done
	is "two concurrent upgrades ($kind database): exactly one finds it done" \
		"$(cat "$MXQ_TEST_DIR/u1" "$MXQ_TEST_DIR/u2" | grep -c '^schema is up to date')" 1
	is "two concurrent upgrades ($kind database): result equals new" \
		"$(columns_of "$db"; indexes_of "$db"; trigger_bodies_of "$db"; version_of "$db")" \
		"$(columns_of mxq; indexes_of mxq; trigger_bodies_of mxq; version_of mxq)"
	is "two concurrent upgrades ($kind database): counters consistent" \
		"$(counter_mismatches "$db")" ""
done

# ------------------------------------------- refusals and failures

# A database newer than this build is left alone, by every program.
mxq_db_add mxq_future
admin "$MXQ_TEST_DIR/mxq_future.cnf" db upgrade
mxq_sql_db mxq_future "INSERT INTO mxq_schema_version (version, name)
	VALUES ($latest + 1000, 'from_the_future')"
sums=$(checksums_of mxq_future)
admin "$MXQ_TEST_DIR/mxq_future.cnf" db upgrade
is "newer database: upgrade exits 1" "$rc" 1
is "newer database: one line of output" "$(printf '%s\n' "$out" | wc -l)" 1
contains "newer database: says it is newer" "$out" "is newer than this build knows ($latest)"
for tool in "mxqsub true" "mxqdump" "mxqkill -g 1" "mxqadmin db status"; do
	set -- $tool
	_t=$1
	shift
	out=$("$MXQ_BUILD_DIR/$_t" -M "$MXQ_TEST_DIR/mxq_future.cnf" "$@" 2>&1 >/dev/null)
	rc=$?
	is "newer database: ${tool%% *} refuses: exit 1, one line naming the version" \
		"$rc $(printf '%s\n' "$out" | wc -l) $(printf '%s' "$out" | grep -c "version $((latest + 1000)) is newer")" \
		"1 1 1"
done
out=$("$MXQ_BUILD_DIR/mxqd" -M "$MXQ_TEST_DIR/mxq_future.cnf" --hostname future \
	--spool "$MXQ_TEST_DIR/future-spool" --tmpdir "$MXQ_TEST_DIR/future-tmp" \
	--no-power-node --energy-sources none 2>&1)
rc=$?
is "newer database: mxqd refuses to start, exit 1" "$rc" 1
contains "newer database: mxqd says why" "$out" "version $((latest + 1000)) is newer than this build"
is "newer database: mxqd registered no daemon" \
	"$(mxq_sql_db mxq_future "SELECT COUNT(*) FROM mxq_daemon")" 0
is "newer database: nothing changed" "$(checksums_of mxq_future)" "$sums"

# A not yet upgraded upstream database: writers say what to do, in one line.
upstream_db mxq_notyet 0.22.3
out=$("$MXQ_BUILD_DIR/mxqsub" -M "$MXQ_TEST_DIR/mxq_notyet.cnf" true 2>&1 >/dev/null)
is "upstream database before the upgrade: mxqsub refuses in one line" \
	"$(printf '%s\n' "$out" | wc -l) $(printf '%s' "$out" | grep -c "run 'mxqadmin db upgrade'")" "1 1"
out=$("$MXQ_BUILD_DIR/mxqd" -M "$MXQ_TEST_DIR/mxq_notyet.cnf" --hostname notyet \
	--spool "$MXQ_TEST_DIR/notyet-spool" --tmpdir "$MXQ_TEST_DIR/notyet-tmp" \
	--no-power-node --energy-sources none 2>&1)
contains "upstream database before the upgrade: mxqd says to upgrade" "$out" \
	"is older than this build needs ($latest): run 'mxqadmin db upgrade' first"

# Databases that are neither ours nor upstream's: refused before any change.
foreign_case() {
	_db=$1
	_desc=$2
	_want=$3
	_cols=$(columns_of "$_db")
	_sums=$(mxq_sql_db "$_db" "SELECT GROUP_CONCAT(TABLE_NAME) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = '$_db'")
	admin "$MXQ_TEST_DIR/$_db.cnf" db upgrade
	is "$_desc: upgrade exits 1 with one line" "$rc $(printf '%s\n' "$out" | wc -l)" "1 1"
	contains "$_desc: the line names what it found" "$out" "$_want"
	is "$_desc: no column changed" "$(columns_of "$_db")" "$_cols"
	is "$_desc: no table created" "$(mxq_sql_db "$_db" "SELECT GROUP_CONCAT(TABLE_NAME)
		FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$_db'")" "$_sums"
}
upstream_db mxq_foreign1 0.22.3
mxq_sql_db mxq_foreign1 "CREATE TABLE accounting (id INT PRIMARY KEY)"
foreign_case mxq_foreign1 "upstream database with an unknown table" "unknown table 'accounting'"
upstream_db mxq_foreign2 master
mxq_sql_db mxq_foreign2 "ALTER TABLE mxq_job MODIFY job_argc VARCHAR(10) NOT NULL"
foreign_case mxq_foreign2 "upstream database with an incompatible column type" \
	"column mxq_job.job_argc has type varchar(10), expected int(10) unsigned"
upstream_db mxq_foreign3 0.22.3
mxq_sql_db mxq_foreign3 "DROP TABLE mxq_daemon"
foreign_case mxq_foreign3 "upstream database without mxq_daemon" "table 'mxq_daemon' missing"
mxq_db_add mxq_foreign4
mxq_sql_db mxq_foreign4 "CREATE TABLE wp_posts (id INT)"
foreign_case mxq_foreign4 "some other application's database" "unknown table 'wp_posts'"

# Unreachable database: socket that does not exist.
sed "s|^socket=.*|socket=$MXQ_TEST_DIR/no-such.sock|" "$MXQ_MYSQL_DEFAULT_FILE" \
	>"$MXQ_TEST_DIR/unreachable.cnf"
admin "$MXQ_TEST_DIR/unreachable.cnf" db upgrade
check "unreachable database: upgrade exits non-zero" test "$rc" -ne 0
is "unreachable database: exactly one line of output" "$(printf '%s\n' "$out" | wc -l)" 1
contains "unreachable database: the line names the defaults file" "$out" "unreachable.cnf"
admin "$MXQ_TEST_DIR/unreachable.cnf" db status
check "unreachable database: status exits non-zero" test "$rc" -ne 0

# Wrong password and missing defaults file.
sed "s|^password=.*|password=wrong|" "$MXQ_MYSQL_DEFAULT_FILE" >"$MXQ_TEST_DIR/badpw.cnf"
admin "$MXQ_TEST_DIR/badpw.cnf" db upgrade
is "wrong password: exit 1 and one line" "$rc $(printf '%s\n' "$out" | wc -l)" "1 1"
admin "$MXQ_TEST_DIR/no-such.cnf" db upgrade
is "missing defaults file: exit 1 and one line" "$rc $(printf '%s\n' "$out" | wc -l)" "1 1"

# Usage errors exit 2 and touch nothing.
admin "$MXQ_MYSQL_DEFAULT_FILE" db frobnicate
is "unknown db action exits 2" "$rc" 2
admin "$MXQ_MYSQL_DEFAULT_FILE" db upgrade --bogus
is "unknown option exits 2" "$rc" 2

echo "1..$tap_n"
