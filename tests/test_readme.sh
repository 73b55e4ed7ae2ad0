#!/bin/sh
# tests/test_readme.sh - the README's "Setting up a cluster" runs as written.
#
# Every indented block after a line "<!-- readme-test -->" in README.md is
# extracted and run with `sh -e`, in order, unchanged. To let them run as
# on a fresh Debian 12 host, the test re-executes itself in a private mount
# and network namespace (root only) and there provides what a real host
# has:
#   - a private copy of /etc (so the blocks write /etc/mxq/*,
#     /etc/default/mxqd), with the example configuration installed as
#     `make install` / the packages do, and db.example.org = 127.0.0.1 in
#     /etc/hosts;
#   - a private MariaDB on 127.0.0.1:3306 (the namespace has its own
#     loopback, so the port is free) with the mxq database dropped, and
#     `mysql` as root reaching it through its socket (HOME/.my.cnf);
#   - private /var/lib, /var/spool and /run (spool, tmpdir, pid files);
#   - a `systemctl` for `enable --now UNIT` that runs the ExecStart= of the
#     unit as `make install` wrote it, with /etc/default/mxqd read as its
#     EnvironmentFile. It adds only what differs between the test's one
#     machine and real hosts: --hostname (node001 for mxqd, db.example.org
#     for mxqd-power-manager), its own --pid-file and --log, short poll
#     intervals, --allow-root-jobs when the test runs as root and mxqd has
#     the option, and -M /etc/mxq/mxqd.cnf where mxqd's default is older.
# After each block its effect is checked in the database.
#
# Prints TAP lines; exits non-zero when a check failed.

MXQ_SRC_DIR=${MXQ_SRC_DIR:-$(cd "$(dirname -- "$0")/.." && pwd -P)}
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
export MXQ_SRC_DIR MXQ_BUILD_DIR

if [ -z "${MXQ_README_NS:-}" ]; then
	if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
		echo "1..1"
		echo "ok 1 - # SKIP needs root and unshare(1) for a private mount and network namespace"
		exit 0
	fi
	MXQ_README_NS=1 exec unshare --mount --net --fork sh "$0" "$@"
fi

. "$MXQ_SRC_DIR/tests/lib/mariadb.sh"
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

T=$(mktemp -d "${TMPDIR:-/tmp}/mxq-readme.XXXXXX") || exit 1
daemons=
mxq_test_cleanup_hook() {
	for p in $(cat "$T/daemons" 2>/dev/null); do
		kill -INT "$p" 2>/dev/null
	done
	for p in $(cat "$T/daemons" 2>/dev/null); do
		_n=200
		while kill -0 "$p" 2>/dev/null && [ "$_n" -gt 0 ]; do sleep 0.1; _n=$((_n - 1)); done
		kill -KILL "$p" 2>/dev/null
	done
	mxqd_cleanup
	umount -l /etc /var/lib /var/spool /run 2>/dev/null
	rm -rf "$T"
}
trap 'mxq_test_cleanup_hook' EXIT

# ------------------------------------------------------- the private host
mount --make-rprivate / || { not_ok "private mount namespace"; exit 1; }
ip link set lo up || { not_ok "loopback up in the private network namespace"; exit 1; }
mkdir -p "$T/etc" "$T/varlib" "$T/varspool" "$T/run" "$T/home" "$T/bin" "$T/stage"
cp -a /etc/. "$T/etc/" 2>/dev/null
printf '127.0.0.1 db.example.org node001-bmc.example.org\n' >>"$T/etc/hosts"
mount --bind "$T/etc" /etc && mount --bind "$T/varlib" /var/lib &&
	mount --bind "$T/varspool" /var/spool && mount -t tmpfs tmpfs /run ||
	{ not_ok "private /etc, /var/lib, /var/spool, /run"; exit 1; }

# what `make install` puts into /etc and the unit directory
make -s -C "$MXQ_SRC_DIR" install DESTDIR="$T/stage" PREFIX=/usr SYSCONFDIR=/etc MXQ_USER= \
	>"$T/install.log" 2>&1 || { not_ok "make install (staging)"; diag <"$T/install.log"; exit 1; }
mkdir -p /etc/mxq /etc/default
cp -p "$T/stage/etc/mxq/"* /etc/mxq/ && cp -p "$T/stage/etc/default/mxqd" /etc/default/mxqd
units=$T/stage/usr/lib/systemd/system

mxq_db_start --no-schema || { not_ok "private MariaDB started"; exit 1; }
MXQ_TEST_DB_PORT=3306
mxq_db_restart || { not_ok "private MariaDB on port 3306"; exit 1; }
is "private MariaDB listens on 3306 (what the README's hosts use)" "$MXQ_TEST_DB_PORT" 3306
mxq_sql "DROP DATABASE mxq" || not_ok "drop the harness's database (the README creates it)"
printf '[client]\nsocket=%s\n' "$MXQ_TEST_DB_SOCKET" >"$T/home/.my.cnf"

# systemctl enable --now UNIT: run the unit's ExecStart as systemd would
extra_mxqd=
"$MXQ_BUILD_DIR/mxqd" --help 2>&1 | grep -q -- --allow-root-jobs && [ "$(id -u)" = 0 ] &&
	extra_mxqd=--allow-root-jobs
"$MXQ_BUILD_DIR/mxqd" --help 2>&1 | grep -q 'default.*mxqd.cnf' ||
	extra_mxqd="$extra_mxqd -M /etc/mxq/mxqd.cnf"
cat >"$T/bin/systemctl" <<EOF_SC
#!/bin/sh
# test stand-in for systemctl (tests/test_readme.sh): enable --now UNIT
set -e
[ "\$1" = enable ] && [ "\$2" = --now ] || { echo "systemctl stand-in: only 'enable --now UNIT'" >&2; exit 2; }
unit=\${3%.service}
case \$unit in
mxqd) host=node001 ;;
mxqd-power-manager) host=db.example.org ;;
*) echo "systemctl stand-in: unknown unit \$unit" >&2; exit 2 ;;
esac
cmd=\$(sed -n '/^ExecStart=/,/[^\\\\]\$/p' "$units/\$unit.service" | sed 's/\\\\\$//' | tr '\n' ' ' |
	sed -e "s|^ExecStart=/bin/sh -c '||" -e "s|' *\\\$||" -e 's/\\\$\\\$/\$/g' -e "s|/usr/sbin/mxqd|$MXQ_BUILD_DIR/mxqd|")
set -a
. /etc/default/mxqd
set +a
MXQD_OPTS="\$MXQD_OPTS --hostname \$host --pid-file /run/mxqd-\$host.pid --log $T/\$host.log"
MXQD_OPTS="\$MXQD_OPTS --poll-interval 0.2 --heartbeat-interval 1 $extra_mxqd"
export MXQD_OPTS
echo "\$cmd" >"$T/\$host.cmd"
setsid /bin/sh -c "\$cmd" </dev/null >>"$T/\$host.stderr" 2>&1 &
echo \$! >>"$T/daemons"
# Type=notify: return once registered
n=0
while [ "\$(mariadb --socket="$MXQ_TEST_DB_SOCKET" -uroot -N -B -e \
	"SELECT COUNT(*) FROM mxq.mxq_daemon WHERE hostname = '\$host' AND status NOT IN (250, 255)" 2>/dev/null)" != 1 ]; do
	n=\$((n + 1))
	[ \$n -lt 300 ] || { echo "systemctl stand-in: \$unit did not register in 30 s" >&2; cat "$T/\$host.stderr" >&2; exit 1; }
	kill -0 \$! 2>/dev/null || { echo "systemctl stand-in: \$unit exited" >&2; cat "$T/\$host.stderr" "$T/\$host.log" >&2; exit 1; }
	sleep 0.1
done
EOF_SC
chmod 755 "$T/bin/systemctl"

# ------------------------------------------------------ the README blocks
awk -v dir="$T" '
	/^<!-- readme-test -->$/ { n++; inblock = 1; file = dir "/block-" n ".sh"; printf "" > file; next }
	inblock && /^    / { sub(/^    /, ""); print >> file; next }
	inblock && /^$/ { print >> file; next }
	{ inblock = 0 }
' "$MXQ_SRC_DIR/README.md"
nblocks=$(ls "$T"/block-*.sh 2>/dev/null | wc -l)
is "README: six marked setup blocks" "$nblocks" 6

run_block() {	# run_block N DESC
	if (cd "$T/home" && env -u MXQ_MYSQL_DEFAULT_FILE -u MXQ_MYSQL_DEFAULT_GROUP HOME="$T/home" \
		PATH="$T/bin:$MXQ_BUILD_DIR:$PATH" sh -e "$T/block-$1.sh") \
		>"$T/out-$1" 2>&1; then
		ok "README block $1 ($2) runs"
	else
		not_ok "README block $1 ($2) runs"
		{ echo "block:"; cat "$T/block-$1.sh"; echo "output:"; cat "$T/out-$1"; } | diag
	fi
}

run_block 1 "database and admin account"
is "the admin account exists" "$(mxq_sql_db mysql "SELECT COUNT(*) FROM user WHERE user = 'mxqadmin'")" 1
run_block 2 "credentials files"
is "credentials files keep their modes" \
	"$(stat -c %a /etc/mxq/mysql.cnf /etc/mxq/mxqd.cnf /etc/mxq/mxqadmin.cnf | tr '\n' ' ')" "640 600 640 "
run_block 3 "schema and accounts"
contains "db status after the upgrade" "$(cat "$T/out-3")" "schema"
run_block 4 "first node"
is "node001 registered with its tags" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon WHERE hostname = 'node001' AND status NOT IN (250, 255)")" 1
contains "MXQD_OPTS reached mxqd with shell quoting (tags 'ssd avx2')" "$(cat "$T/node001.log")" "4 slots"
run_block 5 "first job"
check "the job ran to FINISHED on node001" wait_for 60 \
	"SELECT COUNT(*) = 1 FROM mxq_job j JOIN mxq_daemon d ON d.daemon_id = j.daemon_id
	 WHERE j.job_status = 1000 AND d.hostname = 'node001'"
contains "mxqdump shows the group" "$(cat "$T/out-5")" "hostname"
run_block 6 "first power-managed node"
is "node001: ipmi transport set" \
	"$(mxq_sql "SELECT CONCAT(transport_on, ' ', transport_off, ' ', bmc_address) FROM mxq_power WHERE hostname = 'node001'")" \
	"ipmi ipmi node001-bmc.example.org"
contains "power list shows node001" "$(cat "$T/out-6")" "node001"
check "the power manager holds the lease" wait_for 60 \
	"SELECT COUNT(*) FROM mxq_power_leader WHERE holder LIKE 'db.example.org/%' AND lease_expires > NOW(3)"
contains "power status: dry run, as installed" "$(cat "$T/out-6")" "dry run:     yes"

tap_done
[ "$tap_failed" = 0 ]
