# tests/lib/upstream.sh - upstream MXQ 0.22 databases for compatibility tests.
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
