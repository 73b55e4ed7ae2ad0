# tests/lib/galera.sh - a private MariaDB Galera cluster on 127.0.0.1.
#
# POSIX sh plus `local`. Source it after tests/lib/mariadb.sh, instead of
# calling mxq_db_start:
#
#   . "$(dirname -- "$0")/lib/mariadb.sh"
#   . "$(dirname -- "$0")/lib/galera.sh"
#   mxq_galera_start 3 || bail "no cluster"
#   . "$(dirname -- "$0")/lib/mxqd.sh"
#
# Every node is a mariadbd child of the test shell with its own directory
# under $MXQ_TEST_DIR/galera/N (datadir, socket, my.cnf, error log) and four
# free ports on 127.0.0.1 (SQL, group communication, IST, SST). Node 1
# bootstraps the cluster from the pristine template datadir; the others
# join with an empty datadir and receive a full state transfer from it
# (mariabackup SST: rsync's daemon would drop to user nobody, which cannot
# write a root-owned datadir). Each node reads only its own my.cnf, written
# here, so nothing of the system's MariaDB configuration is used.
#
# Functions
#   mxq_galera_start N
#       Start an N-node cluster, wait until every node is Synced and ready,
#       create database mxq and the test user (replicated), write the
#       defaults files and load the schema through node 1. Installs the
#       same EXIT/INT/TERM trap as mxq_db_start (mxq_test_cleanup_hook is
#       called first). Sets everything mxq_db_start sets; mxq_sql and
#       friends talk to node $MXQ_GALERA_SQL_NODE (default 1).
#   mxq_galera_sql I "SQL"   SQL as root on node I (batch, no column names)
#   mxq_galera_kill I        SIGKILL node I (a crash) and reap it
#   mxq_galera_stop_node I   SIGTERM node I and reap it
#   mxq_galera_use I         point mxq_sql (MXQ_TEST_DB_SOCKET) at node I
#   mxq_galera_pid I         PID of node I (empty when it is not running)
#   mxq_galera_port I        SQL port of node I
#   mxq_galera_stop          stop every node and remove $MXQ_TEST_DIR
#
# Defaults files written ($MXQ_TEST_DIR):
#   mysql.cnf          [mxqd] and [mxqclient] with host=N1,N2,N3 (TCP)
#   galera-N.cnf       the same with node N first, then the others in order
#   galera-only-N.cnf  node N alone (a client that cannot fail over)
# all with read-timeout=$MXQ_GALERA_READ_TIMEOUT (default 5 s), so that a
# client of a stalled node gives up on it quickly

mxq__galera_pids=
mxq__galera_n=0

mxq_galera_dir() {
	echo "$MXQ_TEST_DIR/galera/$1"
}

mxq_galera_pid() {
	eval "echo \${mxq__galera_pid_$1:-}"
}

mxq_galera_port() {
	eval "echo \${mxq__galera_sqlport_$1:-}"
}

mxq__galera_peers() {
	local _i _list
	_list=
	_i=1
	while [ "$_i" -le "$mxq__galera_n" ]; do
		_list="$_list${_list:+,}127.0.0.1:$(eval "echo \$mxq__galera_gport_$_i")"
		_i=$((_i + 1))
	done
	echo "$_list"
}

mxq__galera_write_cnf() {
	local _i _d
	_i=$1
	_d=$(mxq_galera_dir "$_i")
	cat >"$_d/my.cnf" <<EOF
[mysqld]
user=root
datadir=$_d/data
socket=$_d/mysql.sock
pid-file=$_d/mariadb.pid
log-error=$_d/mariadb.err
tmpdir=$_d/tmp
port=$(mxq_galera_port "$_i")
bind-address=127.0.0.1
skip-name-resolve
innodb-log-file-size=8M
innodb-buffer-pool-size=32M
innodb-flush-log-at-trx-commit=2
character-set-server=utf8mb4
collation-server=utf8mb4_general_ci
binlog-format=ROW
innodb-autoinc-lock-mode=2
default-storage-engine=InnoDB
log-bin-trust-function-creators=1
wsrep-on=ON
wsrep-provider=$MXQ_GALERA_PROVIDER
wsrep-cluster-name=mxqtest
wsrep-cluster-address=gcomm://$(mxq__galera_peers)
wsrep-node-address=127.0.0.1:$(eval "echo \$mxq__galera_gport_$_i")
wsrep-node-name=node$_i
wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:$(eval "echo \$mxq__galera_gport_$_i");ist.recv_addr=127.0.0.1:$(eval "echo \$mxq__galera_istport_$_i");gcache.size=32M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S
wsrep-sst-method=mariabackup
wsrep-sst-auth=root:
wsrep-sst-receive-address=127.0.0.1:$(eval "echo \$mxq__galera_sstport_$_i")
[sst]
sst-syslog=-1
EOF
}

# Launch node $1 ($2 = new: bootstrap a new cluster) in the background.
mxq__galera_launch() {
	local _i _d _new
	_i=$1
	_new=${2:-}
	_d=$(mxq_galera_dir "$_i")
	set --
	[ "$_new" = new ] && set -- --wsrep-new-cluster
	mariadbd --defaults-file="$_d/my.cnf" "$@" </dev/null >>"$_d/stderr" 2>&1 &
	eval "mxq__galera_pid_$_i=$!"
}

mxq_galera_sql() {
	local _i
	_i=$1
	shift
	mariadb --no-defaults --socket="$(mxq_galera_dir "$_i")/mysql.sock" -uroot \
		--batch --skip-column-names "$MXQ_TEST_DB_NAME" -e "$*" </dev/null
}

# The value of status variable $2 on node $1 (empty when it does not answer).
mxq__galera_status() {
	mariadb --no-defaults --socket="$(mxq_galera_dir "$1")/mysql.sock" -uroot \
		--connect-timeout=2 --batch --skip-column-names \
		-e "SHOW GLOBAL STATUS LIKE '$2'" </dev/null 2>/dev/null | cut -f2
}

# Wait (bounded, $2 seconds) until node $1 is Synced and ready.
mxq__galera_wait_synced() {
	local _i _end
	_i=$1
	_end=$(( $(date +%s) + $2 ))
	while :; do
		if [ "$(mxq__galera_status "$_i" wsrep_local_state_comment)" = Synced ] &&
		   [ "$(mxq__galera_status "$_i" wsrep_ready)" = ON ]; then
			return 0
		fi
		if ! mxq__alive "$(mxq_galera_pid "$_i")"; then
			mxq__err "galera node $_i exited during start-up; end of its log:"
			grep -v '\[Note\]' "$(mxq_galera_dir "$_i")/mariadb.err" 2>/dev/null | tail -n 15 >&2
			return 1
		fi
		if [ "$(date +%s)" -ge "$_end" ]; then
			mxq__err "galera node $_i not Synced within $2 s"
			return 1
		fi
		sleep 0.2
	done
}

mxq__galera_write_defaults() {
	local _first _i _k _list _f
	( umask 077
	  _first=1
	  while [ "$_first" -le "$mxq__galera_n" ]; do
		_list=
		_k=0
		while [ "$_k" -lt "$mxq__galera_n" ]; do
			_i=$(( (_first - 1 + _k) % mxq__galera_n + 1 ))
			_list="$_list${_list:+,}127.0.0.1:$(mxq_galera_port "$_i")"
			_k=$((_k + 1))
		done
		for _f in "galera-$_first.cnf:$_list" \
			  "galera-only-$_first.cnf:127.0.0.1:$(mxq_galera_port "$_first")"; do
			for _g in mxqd mxqclient; do
				printf '[%s]\ndatabase=%s\nuser=%s\npassword=%s\nhost=%s\nprotocol=TCP\nread-timeout=%s\n\n' \
					"$_g" "$MXQ_TEST_DB_NAME" "$MXQ_TEST_DB_USER" \
					"$MXQ_TEST_DB_PASSWORD" "${_f#*:}" "${MXQ_GALERA_READ_TIMEOUT:-5}"
			done >"$MXQ_TEST_DIR/${_f%%:*}"
		done
		_first=$((_first + 1))
	  done
	  cp "$MXQ_TEST_DIR/galera-1.cnf" "$MXQ_TEST_DIR/mysql.cnf"
	  printf '[client]\ndatabase=%s\nuser=%s\npassword=%s\nsocket=%s\n' \
		"$MXQ_TEST_DB_NAME" "$MXQ_TEST_DB_USER" "$MXQ_TEST_DB_PASSWORD" \
		"$(mxq_galera_dir 1)/mysql.sock" >"$MXQ_TEST_DIR/client.cnf" )
	MXQ_MYSQL_DEFAULT_FILE=$MXQ_TEST_DIR/mysql.cnf
	MXQ_MYSQL_DEFAULT_FILE_TCP=$MXQ_TEST_DIR/mysql.cnf
	export MXQ_MYSQL_DEFAULT_FILE MXQ_MYSQL_DEFAULT_FILE_TCP
}

mxq_galera_use() {
	MXQ_GALERA_SQL_NODE=$1
	MXQ_TEST_DB_SOCKET=$(mxq_galera_dir "$1")/mysql.sock
	MXQ_TEST_DB_PID=$(mxq_galera_pid "$1")
	MXQ_TEST_DB_PORT=$(mxq_galera_port "$1")
	export MXQ_GALERA_SQL_NODE MXQ_TEST_DB_SOCKET MXQ_TEST_DB_PID MXQ_TEST_DB_PORT
}

mxq_galera_start() {
	local _n _i _d _p
	_n=${1:-3}
	MXQ_GALERA_PROVIDER=${MXQ_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
	if [ ! -f "$MXQ_GALERA_PROVIDER" ]; then
		mxq__err "no Galera provider at $MXQ_GALERA_PROVIDER (install galera-4)"
		return 1
	fi
	if ! command -v mariabackup >/dev/null 2>&1; then
		mxq__err "mariabackup not found (install mariadb-backup; Galera SST needs it)"
		return 1
	fi
	case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin ;; esac
	MXQ_TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mxq-galera.XXXXXX") || return 1
	export MXQ_TEST_DIR
	mxq__cleaned=
	mxq__stop_servers=mxq_galera_stop
	trap mxq__on_exit EXIT
	trap 'mxq__on_signal 130' INT
	trap 'mxq__on_signal 143' TERM
	mxq__galera_n=$_n
	_i=1
	_used=" "
	while [ "$_i" -le "$_n" ]; do
		for _v in sqlport gport istport sstport; do
			while :; do
				_p=$(mxq_free_port)
				case $_used in *" $_p "*) continue ;; esac
				break
			done
			_used="$_used$_p "
			eval "mxq__galera_${_v}_$_i=$_p"
		done
		_d=$(mxq_galera_dir "$_i")
		mkdir -p "$_d/tmp" "$_d/data" || return 1
		_i=$((_i + 1))
	done
	rmdir "$(mxq_galera_dir 1)/data"
	mxq__datadir_create "$(mxq_galera_dir 1)/data" || return 1
	_i=1
	while [ "$_i" -le "$_n" ]; do
		mxq__galera_write_cnf "$_i"
		_i=$((_i + 1))
	done

	mxq__galera_launch 1 new
	mxq__galera_wait_synced 1 60 || return 1
	MXQ_TEST_DB_NAME=mxq
	MXQ_TEST_DB_USER=mxqtest
	MXQ_TEST_DB_PASSWORD=$(mxq__random_hex 12)
	export MXQ_TEST_DB_NAME MXQ_TEST_DB_USER MXQ_TEST_DB_PASSWORD
	mxq__create_test_db "$(mxq_galera_dir 1)/mysql.sock" || return 1
	# joiners one after the other: one donor serves one SST at a time
	_i=2
	while [ "$_i" -le "$_n" ]; do
		mxq__galera_launch "$_i"
		mxq__galera_wait_synced "$_i" 120 || return 1
		_i=$((_i + 1))
	done
	mxq_galera_use 1
	mxq__galera_write_defaults
	mxq__load_schema "$MXQ_TEST_DIR/galera-only-1.cnf"
}

mxq__galera_reap() {
	local _i _pid _tries
	_i=$1
	_pid=$(mxq_galera_pid "$_i")
	[ -n "$_pid" ] || return 0
	_tries=300
	while mxq__alive "$_pid" && [ "$_tries" -gt 0 ]; do
		_tries=$((_tries - 1))
		mxq__nap
	done
	mxq__alive "$_pid" && kill -KILL "$_pid" 2>/dev/null
	wait "$_pid" 2>/dev/null
	eval "mxq__galera_pid_$_i="
}

# Signal $2 to node $1 (resumed first, should it be stopped), then reap it.
mxq__galera_end() {
	local _pid
	_pid=$(mxq_galera_pid "$1")
	[ -n "$_pid" ] || return 0
	kill -CONT "$_pid" 2>/dev/null
	kill "-$2" "$_pid" 2>/dev/null
	mxq__galera_reap "$1"
}

mxq_galera_kill() {
	mxq__galera_end "$1" KILL
}

mxq_galera_stop_node() {
	mxq__galera_end "$1" TERM
}

mxq_galera_stop() {
	local _i
	_i=$mxq__galera_n
	while [ "$_i" -ge 1 ]; do
		mxq_galera_stop_node "$_i"
		_i=$((_i - 1))
	done
	mxq__remove_test_dir
}
