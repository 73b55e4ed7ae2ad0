# tests/lib/mariadb.sh - a private, throwaway MariaDB for integration tests.
#
# POSIX sh plus `local` (dash, bash). Source it from a test script, or run
# it as a command (see the end of this block). Internal names start with
# mxq__; the public ones are listed below.
#
# Every server runs from a fresh temporary directory with every path given
# on the command line (no my.cnf is read), listens on a socket in that
# directory and on 127.0.0.1 at a free port, and is a child of the calling
# shell, so it is stopped with kill -TERM + wait. Nothing of the system's
# MariaDB is touched.
#
# Functions
#   mxq_db_start [--no-schema]
#       Create $MXQ_TEST_DIR (mktemp -d), install or copy a datadir, start
#       the server, wait until it answers, create database `mxq` and a user
#       with a random password, write the defaults files and load the
#       schema with `mxqadmin db upgrade` (skipped with --no-schema, for
#       tests that load an old schema themselves). Installs a trap on EXIT,
#       INT and TERM that stops the server and removes $MXQ_TEST_DIR.
#       Must run in the test's main shell, not in $(...) or a pipeline: the
#       server has to stay this shell's child.
#   mxq_db_stop
#       Stop the server (kill -TERM + wait) and remove $MXQ_TEST_DIR.
#       Safe to call twice.
#   mxq_db_restart
#       Stop the server and start it again on the same datadir (for tests
#       of clients surviving a database restart). Keeps socket, user and
#       password; the TCP port is kept when it is still free.
#   mxq_db_kill
#       Stop the server with SIGKILL (crash), without cleanup; follow with
#       mxq_db_restart to bring it back.
#   mxq_sql "SQL"        (or: mxq_sql < file.sql)
#       Run SQL as the server's root user on database mxq: batch mode, no
#       column names, tab-separated. Output on stdout, exit status of the
#       client.
#   mxq_sql_db DB "SQL"  (or: mxq_sql_db DB < file.sql)
#       The same on database DB.
#   mxq_db_add NAME
#       Create a further database NAME on the same server, grant it to the
#       test user and write $MXQ_TEST_DIR/NAME.cnf (like mysql.cnf, with
#       database=NAME), e.g. to compare two schemas side by side.
#   mxq_sql_user "SQL"
#       The same as the test user (credentials of $MXQ_MYSQL_DEFAULT_FILE,
#       in $MXQ_TEST_DIR/client.cnf, group [client]).
#   mxq_db_template_build DIR
#       Install a pristine datadir into DIR (used by tests/run.sh once per
#       run; mxq_db_start then copies it instead of installing).
#   mxq_free_port [tcp|udp]
#       A port below the ephemeral range on 127.0.0.1 nothing uses now (for the
#       test's own servers: sshd, BMC simulators, Wake-on-LAN listeners).
#
# Hook: if the caller defines a shell function mxq_test_cleanup_hook, the
# exit trap calls it before stopping the server (stop your own daemons
# there).
#
# Environment read
#   MXQ_SRC_DIR           source tree (default: derived from $0, else .)
#   MXQ_BUILD_DIR         where ./mxqadmin lives (default: MXQ_SRC_DIR)
#   MXQ_TEST_DB_TEMPLATE  pristine datadir to copy; built there if missing
#                         (tests/run.sh sets it); unset: install per start
#   MXQ_TEST_DB_TIMEOUT   seconds to wait for the server (default 30)
#   MXQ_TEST_KEEP         non-empty: keep $MXQ_TEST_DIR after the test
#   MXQ_TEST_DB_GALERA    non-empty: run every server as a one-node Galera
#                         cluster (wsrep on, galera-4's provider), so that
#                         the whole suite runs against Galera's rules
#                         (`make check-galera`)
#
# Environment set (exported) by mxq_db_start
#   MXQ_TEST_DIR              the temporary directory
#   MXQ_MYSQL_DEFAULT_FILE    $MXQ_TEST_DIR/mysql.cnf, groups [mxqd] and
#                             [mxqclient], connects through the socket
#   MXQ_MYSQL_DEFAULT_FILE_TCP $MXQ_TEST_DIR/mysql-tcp.cnf, same via TCP
#   MXQ_TEST_DB_SOCKET, MXQ_TEST_DB_PORT, MXQ_TEST_DB_NAME (mxq),
#   MXQ_TEST_DB_USER, MXQ_TEST_DB_PASSWORD, MXQ_TEST_DB_PID (server PID),
#   MXQ_TEST_DB_LOG (server error log)
#
# As a command (a quick demo database):
#   sh tests/lib/mariadb.sh run CMD [ARGS...]   start, run CMD with the
#                                               environment above, stop
#   sh tests/lib/mariadb.sh shell               the same with ${SHELL:-sh}

# ---------------------------------------------------------------- helpers

mxq__err() {
	echo "mariadb.sh: $*" >&2
}

# Absolute path of a directory.
mxq__abspath() {
	(cd "$1" 2>/dev/null && pwd -P)
}

# Work out MXQ_SRC_DIR once, at source time: $0 is the test script
# (tests/test_*.sh) or this file when run as a command.
mxq__init_paths() {
	local _d
	if [ -z "${MXQ_SRC_DIR:-}" ]; then
		_d=$(dirname -- "$0")
		if [ -f "$_d/lib/mariadb.sh" ]; then
			MXQ_SRC_DIR=$(mxq__abspath "$_d/..")
		elif [ -f "$_d/mariadb.sh" ] && [ -d "$_d/../../mysql" ]; then
			MXQ_SRC_DIR=$(mxq__abspath "$_d/../..")
		else
			MXQ_SRC_DIR=$(pwd -P)
		fi
	fi
	MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
	export MXQ_SRC_DIR MXQ_BUILD_DIR
}

# Hex string of N random bytes.
mxq__random_hex() {
	od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'
}

# A random port for a test server, outside the kernel's ephemeral range
# (/proc/sys/net/ipv4/ip_local_port_range), so that no client connection
# of a parallel test (curl, MariaDB over TCP) can be holding it: 20000 up
# to that range's start, or above its end when it starts below 24096.
mxq__random_port() {
	local _n _lo _hi _base _span
	_n=$(od -An -N2 -tu2 /dev/urandom | tr -d ' \n')
	read -r _lo _hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null ||
		{ _lo=32768; _hi=60999; }
	if [ "$_lo" -ge 24096 ]; then
		_base=20000 _span=$((_lo - 20000))
	elif [ "$_hi" -le 61439 ]; then
		_base=$((_hi + 1)) _span=$((65535 - _hi))
	else
		_base=20000 _span=20000
	fi
	echo $((_base + _n % _span))
}

# True when a socket uses port $1 (TCP: in any state), or with $2 = udp a
# UDP socket listens on it (best effort: a race with another process is caught later from the
# server's error log).
mxq__port_in_use() {
	local _hex
	if [ "${2:-tcp}" = udp ]; then
		if command -v ss >/dev/null 2>&1; then
			ss -Huln "sport = :$1" 2>/dev/null | grep -q .
		else
			_hex=$(printf '%04X' "$1")
			grep -qi ":$_hex 00000000:0000 07" /proc/net/udp /proc/net/udp6 2>/dev/null
		fi
	elif command -v ss >/dev/null 2>&1; then
		ss -Htan "sport = :$1" 2>/dev/null | grep -q .
	else
		_hex=$(printf '%04X' "$1")
		grep -qi "^ *[0-9]*: [0-9A-F]*:$_hex " /proc/net/tcp /proc/net/tcp6 2>/dev/null
	fi
}

# A port no socket uses now (see mxq__random_port for the range): TCP, or
# UDP with $1 = udp.
mxq_free_port() {
	local _p
	while :; do
		_p=$(mxq__random_port)
		mxq__port_in_use "$_p" "${1:-tcp}" || { echo "$_p"; return; }
	done
}

# True while PID $1 runs and is not a zombie (kill -0 succeeds on zombies).
mxq__alive() {
	local _state
	[ -r "/proc/$1/stat" ] || return 1
	_state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$_state" ] && [ "$_state" != Z ] && [ "$_state" != X ]
}

# Sleep a fraction of a second where sleep supports it.
mxq__nap() {
	sleep 0.1 2>/dev/null || sleep 1
}

mxq__is_root() {
	[ "$(id -u)" = 0 ]
}

# ------------------------------------------------------------ the datadir

mxq_db_template_build() {
	local _dir
	_dir=$1
	if [ -z "$_dir" ]; then
		mxq__err "mxq_db_template_build: missing directory"
		return 2
	fi
	mkdir -p "$_dir" || return 1
	set -- --no-defaults
	mxq__is_root && set -- "$@" --user=root
	if ! mariadb-install-db "$@" --datadir="$_dir" \
		--auth-root-authentication-method=normal --skip-test-db \
		--innodb-log-file-size=8M >"$_dir.install.log" 2>&1; then
		mxq__err "mariadb-install-db failed into $_dir:"
		tail -n 20 "$_dir.install.log" >&2
		rm -rf "$_dir" "$_dir.install.log"
		return 1
	fi
	rm -f "$_dir.install.log"
}

# Put a pristine datadir at $1, from the template when one is configured.
mxq__datadir_create() {
	if [ -n "${MXQ_TEST_DB_TEMPLATE:-}" ]; then
		if [ ! -d "$MXQ_TEST_DB_TEMPLATE/mysql" ]; then
			mxq_db_template_build "$MXQ_TEST_DB_TEMPLATE" || return 1
		fi
		cp -a "$MXQ_TEST_DB_TEMPLATE" "$1" || return 1
	else
		mxq_db_template_build "$1" || return 1
	fi
}

# -------------------------------------------------------------- the server

# Start mariadbd on $MXQ_TEST_DIR/data at port $1 and wait until it answers
# ping. Returns 0 when up, 3 when the port was taken (caller retries on
# another), 1 on any other failure (message and log tail on stderr).
mxq__server_launch() {
	local _port _d _timeout _tries
	_port=$1
	_d=$MXQ_TEST_DIR
	MXQ_TEST_DB_LOG=$_d/mariadb.err
	: >"$MXQ_TEST_DB_LOG"
	set -- --no-defaults
	mxq__is_root && set -- "$@" --user=root
	if [ -n "${MXQ_TEST_DB_GALERA:-}" ]; then
		# a one-node cluster, bootstrapped anew at every start (also
		# after a kill -9, which leaves safe_to_bootstrap at 0)
		[ -f "$_d/data/grastate.dat" ] &&
			sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$_d/data/grastate.dat"
		set -- "$@" --wsrep-on=ON \
			--wsrep-provider="${MXQ_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}" \
			--wsrep-cluster-address=gcomm:// --wsrep-node-address=127.0.0.1 \
			--wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$(mxq_free_port);gcache.size=16M" \
			--binlog-format=ROW --innodb-autoinc-lock-mode=2 \
			--log-bin-trust-function-creators=1
	fi
	mariadbd "$@" \
		--datadir="$_d/data" \
		--socket="$_d/mysql.sock" \
		--pid-file="$_d/mariadb.pid" \
		--log-error="$MXQ_TEST_DB_LOG" \
		--tmpdir="$_d/tmp" \
		--port="$_port" \
		--bind-address=127.0.0.1 \
		--skip-name-resolve \
		--innodb-log-file-size=8M \
		--innodb-buffer-pool-size=32M \
		--innodb-flush-log-at-trx-commit=2 \
		--character-set-server=utf8mb4 \
		--collation-server=utf8mb4_general_ci \
		</dev/null >>"$MXQ_TEST_DB_LOG" 2>&1 &
	MXQ_TEST_DB_PID=$!
	export MXQ_TEST_DB_PID MXQ_TEST_DB_LOG

	_timeout=${MXQ_TEST_DB_TIMEOUT:-30}
	_tries=$((_timeout * 10))
	while [ "$_tries" -gt 0 ]; do
		if mariadb-admin --no-defaults --socket="$_d/mysql.sock" -uroot \
			--connect-timeout=2 ping >/dev/null 2>&1; then
			return 0
		fi
		if ! mxq__alive "$MXQ_TEST_DB_PID"; then
			wait "$MXQ_TEST_DB_PID" 2>/dev/null
			MXQ_TEST_DB_PID=
			if grep -qiE 'bind on tcp/ip port|address already in use' \
				"$MXQ_TEST_DB_LOG"; then
				return 3
			fi
			mxq__err "mariadbd exited during start-up; end of $MXQ_TEST_DB_LOG:"
			tail -n 20 "$MXQ_TEST_DB_LOG" >&2
			return 1
		fi
		_tries=$((_tries - 1))
		mxq__nap
	done
	mxq__err "mariadbd (pid $MXQ_TEST_DB_PID) did not answer within ${_timeout}s;" \
		"end of $MXQ_TEST_DB_LOG:"
	tail -n 20 "$MXQ_TEST_DB_LOG" >&2
	mxq__server_terminate
	return 1
}

# Start the server, on port $1 if given and free, else on a random free one.
mxq__server_start() {
	local _want _attempt _p
	_want=${1:-}
	_attempt=0
	while [ "$_attempt" -lt 20 ]; do
		_attempt=$((_attempt + 1))
		if [ -n "$_want" ]; then
			_p=$_want
			_want=
		else
			_p=$(mxq__random_port)
		fi
		mxq__port_in_use "$_p" && continue
		mxq__server_launch "$_p"
		case $? in
		0) MXQ_TEST_DB_PORT=$_p; export MXQ_TEST_DB_PORT; return 0 ;;
		3) continue ;;
		*) return 1 ;;
		esac
	done
	mxq__err "no free TCP port found for mariadbd after $_attempt attempts"
	return 1
}

# kill -TERM the server and reap it (bounded; SIGKILL after the timeout).
mxq__server_terminate() {
	local _tries
	[ -n "${MXQ_TEST_DB_PID:-}" ] || return 0
	kill -TERM "$MXQ_TEST_DB_PID" 2>/dev/null
	_tries=$(( ${MXQ_TEST_DB_TIMEOUT:-30} * 10 ))
	while mxq__alive "$MXQ_TEST_DB_PID" && [ "$_tries" -gt 0 ]; do
		_tries=$((_tries - 1))
		mxq__nap
	done
	if mxq__alive "$MXQ_TEST_DB_PID"; then
		mxq__err "mariadbd (pid $MXQ_TEST_DB_PID) ignored SIGTERM, killing it"
		kill -KILL "$MXQ_TEST_DB_PID" 2>/dev/null
	fi
	wait "$MXQ_TEST_DB_PID" 2>/dev/null
	MXQ_TEST_DB_PID=
}

mxq__write_defaults() {
	local _f _t
	_f=$MXQ_TEST_DIR/mysql.cnf
	_t=$MXQ_TEST_DIR/mysql-tcp.cnf
	( umask 077
	  for _g in mxqd mxqclient; do
		printf '[%s]\ndatabase=%s\nuser=%s\npassword=%s\nsocket=%s\n\n' "$_g" \
			"$MXQ_TEST_DB_NAME" "$MXQ_TEST_DB_USER" "$MXQ_TEST_DB_PASSWORD" \
			"$MXQ_TEST_DB_SOCKET"
	  done >"$_f"
	  for _g in mxqd mxqclient; do
		printf '[%s]\ndatabase=%s\nuser=%s\npassword=%s\nhost=127.0.0.1\nport=%s\nprotocol=TCP\n\n' \
			"$_g" "$MXQ_TEST_DB_NAME" "$MXQ_TEST_DB_USER" \
			"$MXQ_TEST_DB_PASSWORD" "$MXQ_TEST_DB_PORT"
	  done >"$_t"
	  # the same user for the mariadb command-line client (mxq_sql_user)
	  printf '[client]\ndatabase=%s\nuser=%s\npassword=%s\nsocket=%s\n' \
		"$MXQ_TEST_DB_NAME" "$MXQ_TEST_DB_USER" "$MXQ_TEST_DB_PASSWORD" \
		"$MXQ_TEST_DB_SOCKET" >"$MXQ_TEST_DIR/client.cnf" )
	MXQ_MYSQL_DEFAULT_FILE=$_f
	MXQ_MYSQL_DEFAULT_FILE_TCP=$_t
	export MXQ_MYSQL_DEFAULT_FILE MXQ_MYSQL_DEFAULT_FILE_TCP
}

# ------------------------------------------------------------------ public

mxq_sql() {
	mxq_sql_db "$MXQ_TEST_DB_NAME" "$@"
}

mxq_sql_db() {
	local _db
	_db=$1
	shift
	if [ $# -gt 0 ]; then
		mariadb --no-defaults --socket="$MXQ_TEST_DB_SOCKET" -uroot \
			--batch --skip-column-names "$_db" -e "$*" </dev/null
	else
		mariadb --no-defaults --socket="$MXQ_TEST_DB_SOCKET" -uroot \
			--batch --skip-column-names "$_db"
	fi
}

mxq_db_add() {
	case $1 in
	''|*[!A-Za-z0-9_]*) mxq__err "mxq_db_add: bad database name '$1'"; return 2 ;;
	esac
	mariadb --no-defaults --socket="$MXQ_TEST_DB_SOCKET" -uroot --batch <<EOF || return 1
CREATE DATABASE $1 CHARACTER SET utf8mb4;
GRANT ALL PRIVILEGES ON $1.* TO '$MXQ_TEST_DB_USER'@'localhost';
GRANT ALL PRIVILEGES ON $1.* TO '$MXQ_TEST_DB_USER'@'127.0.0.1';
EOF
	( umask 077
	  sed "s/^database=.*/database=$1/" "$MXQ_MYSQL_DEFAULT_FILE" >"$MXQ_TEST_DIR/$1.cnf" )
}

mxq_sql_user() {
	if [ $# -gt 0 ]; then
		mariadb --defaults-file="$MXQ_TEST_DIR/client.cnf" \
			--batch --skip-column-names -e "$*" </dev/null
	else
		mariadb --defaults-file="$MXQ_TEST_DIR/client.cnf" \
			--batch --skip-column-names
	fi
}

mxq__on_exit() {
	local _rc=$?
	mxq__cleanup
	exit "$_rc"
}

mxq__on_signal() {
	mxq__cleanup
	trap - EXIT
	exit "$1"
}

mxq__cleanup() {
	[ -n "${mxq__cleaned:-}" ] && return 0
	mxq__cleaned=1
	if command -v mxq_test_cleanup_hook >/dev/null 2>&1; then
		mxq_test_cleanup_hook || true
	fi
	${mxq__stop_servers:-mxq_db_stop}  # tests/lib/galera.sh: its cluster
}

mxq_db_start() {
	local _schema _cmd
	_schema=yes
	case ${1:-} in
	--no-schema) _schema=no ;;
	"") ;;
	*) mxq__err "mxq_db_start: unknown option '$1'"; return 2 ;;
	esac
	if [ -n "${MXQ_TEST_DB_PID:-}" ]; then
		mxq__err "mxq_db_start: a server is already running (pid $MXQ_TEST_DB_PID)"
		return 2
	fi
	for _cmd in mariadbd mariadb mariadb-admin mariadb-install-db; do
		if ! command -v "$_cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$_cmd" ]; then
			mxq__err "$_cmd not found (install mariadb-server and mariadb-client)"
			return 1
		fi
	done
	case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin ;; esac

	MXQ_TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mxq-test.XXXXXX") || return 1
	export MXQ_TEST_DIR
	mxq__cleaned=
	trap mxq__on_exit EXIT
	trap 'mxq__on_signal 130' INT
	trap 'mxq__on_signal 143' TERM
	mkdir "$MXQ_TEST_DIR/tmp" || return 1
	mxq__datadir_create "$MXQ_TEST_DIR/data" || return 1

	MXQ_TEST_DB_SOCKET=$MXQ_TEST_DIR/mysql.sock
	MXQ_TEST_DB_NAME=mxq
	MXQ_TEST_DB_USER=mxqtest
	MXQ_TEST_DB_PASSWORD=$(mxq__random_hex 12)
	export MXQ_TEST_DB_SOCKET MXQ_TEST_DB_NAME MXQ_TEST_DB_USER MXQ_TEST_DB_PASSWORD
	mxq__server_start || return 1

	mxq__create_test_db "$MXQ_TEST_DB_SOCKET" || return 1
	mxq__write_defaults

	if [ "$_schema" = yes ]; then
		mxq__load_schema "$MXQ_MYSQL_DEFAULT_FILE" || return 1
	fi
	return 0
}

# Database $MXQ_TEST_DB_NAME and the test user (socket and TCP) on the
# server at socket $1.
mxq__create_test_db() {
	mariadb --no-defaults --socket="$1" -uroot --batch <<EOF
CREATE DATABASE $MXQ_TEST_DB_NAME CHARACTER SET utf8mb4;
CREATE USER '$MXQ_TEST_DB_USER'@'localhost' IDENTIFIED BY '$MXQ_TEST_DB_PASSWORD';
CREATE USER '$MXQ_TEST_DB_USER'@'127.0.0.1' IDENTIFIED BY '$MXQ_TEST_DB_PASSWORD';
GRANT ALL PRIVILEGES ON $MXQ_TEST_DB_NAME.* TO '$MXQ_TEST_DB_USER'@'localhost';
GRANT ALL PRIVILEGES ON $MXQ_TEST_DB_NAME.* TO '$MXQ_TEST_DB_USER'@'127.0.0.1';
EOF
}

# `mxqadmin db upgrade` through defaults file $1 (its log in schema.log).
mxq__load_schema() {
	if [ ! -x "$MXQ_BUILD_DIR/mxqadmin" ]; then
		mxq__err "$MXQ_BUILD_DIR/mxqadmin not found (run make first)"
		return 1
	fi
	if ! "$MXQ_BUILD_DIR/mxqadmin" -M "$1" -S mxqclient \
		db upgrade >"$MXQ_TEST_DIR/schema.log" 2>&1; then
		mxq__err "mxqadmin db upgrade failed:"
		cat "$MXQ_TEST_DIR/schema.log" >&2
		return 1
	fi
}

mxq_db_stop() {
	mxq__server_terminate
	mxq__remove_test_dir
}

# Remove $MXQ_TEST_DIR (kept when MXQ_TEST_KEEP is set).
mxq__remove_test_dir() {
	if [ -n "${MXQ_TEST_DIR:-}" ] && [ -d "$MXQ_TEST_DIR" ]; then
		if [ -n "${MXQ_TEST_KEEP:-}" ]; then
			mxq__err "keeping $MXQ_TEST_DIR"
		else
			rm -rf "$MXQ_TEST_DIR"
		fi
	fi
	MXQ_TEST_DIR=
}

mxq_db_restart() {
	local _old_port
	if [ -z "${MXQ_TEST_DIR:-}" ] || [ ! -d "$MXQ_TEST_DIR/data" ]; then
		mxq__err "mxq_db_restart: no database (call mxq_db_start first)"
		return 2
	fi
	_old_port=$MXQ_TEST_DB_PORT
	mxq__server_terminate
	mxq__server_start "$_old_port" || return 1
	[ "$MXQ_TEST_DB_PORT" = "$_old_port" ] || mxq__write_defaults
	return 0
}

mxq_db_kill() {
	[ -n "${MXQ_TEST_DB_PID:-}" ] || return 0
	kill -KILL "$MXQ_TEST_DB_PID" 2>/dev/null
	wait "$MXQ_TEST_DB_PID" 2>/dev/null
	MXQ_TEST_DB_PID=
}

mxq__init_paths

# ------------------------------------------------------- run as a command

mxq__main() {
	local _what
	_what=${1:-}
	[ $# -gt 0 ] && shift
	case $_what in
	run)
		if [ $# -eq 0 ]; then
			mxq__err "usage: $0 run CMD [ARGS...]"
			return 2
		fi
		;;
	shell)
		set -- "${SHELL:-sh}"
		;;
	*)
		echo "usage: sh $0 run CMD [ARGS...] | shell" >&2
		return 2
		;;
	esac
	mxq_db_start || return 1
	echo "mariadb.sh: database ready: MXQ_MYSQL_DEFAULT_FILE=$MXQ_MYSQL_DEFAULT_FILE" \
		"(port $MXQ_TEST_DB_PORT); stops when the command ends" >&2
	"$@"
}

case ${0##*/} in
mariadb.sh)
	mxq__main "$@"
	exit $?
	;;
esac
