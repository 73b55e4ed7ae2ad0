#!/bin/sh
# tests/test_install.sh - `make install` / `make uninstall` with DESTDIR.
#
# Installs into a fresh staging directory with the Debian layout
# (PREFIX=/usr), checks the layout (tools in bin, mxqd in sbin, example
# configs with their modes, units, tmpfiles, completion, man pages, schema,
# README), that the installed tools answer --version, that staging sets no
# set-id bit, that `systemd-analyze verify` accepts the installed units and
# that a second install keeps an existing config. Then uninstall must leave
# nothing at all, except a config the admin changed (which a second
# uninstall run after restoring it removes too).
#
# Needs no database. Prints TAP lines; exits non-zero when a check failed.

MXQ_SRC_DIR=${MXQ_SRC_DIR:-$(cd "$(dirname -- "$0")/.." && pwd -P)}
. "$MXQ_SRC_DIR/tests/lib/tap.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/mxq-install.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
trap 'rm -rf "$dir"; trap - EXIT; exit 130' INT
trap 'rm -rf "$dir"; trap - EXIT; exit 143' TERM
root=$dir/root
mkdir "$root"
mk() {
	make -s -C "$MXQ_SRC_DIR" "$@" DESTDIR="$root" PREFIX=/usr SYSCONFDIR=/etc MXQ_USER= >"$dir/make.out" 2>&1
}

check "make install DESTDIR=... succeeds" mk install
diag <"$dir/make.out"

for f in /usr/bin/mxqsub /usr/bin/mxqdump /usr/bin/mxqkill /usr/bin/mxqadmin \
	 /usr/bin/mxq-power-sim /usr/sbin/mxqd; do
	t=${f##*/}
	is "installed $f answers --version" "$("$root$f" --version 2>&1)" \
		"$t $(sed -n 's/^VERSION := //p' "$MXQ_SRC_DIR/Makefile")"
done
is "staging sets no set-id bit" "$(find "$root" -perm /6000 | wc -l)" 0
is "mxqadmin is in bin (users run expr/qualify)" "$(test -x "$root/usr/sbin/mxqadmin" && echo sbin)" ""

modes=
for cm in mysql.cnf:640 mxqd.cnf:600 mxqadmin.cnf:640 power.conf:644 power-secrets:600; do
	modes="$modes ${cm%:*}:$(stat -c %a "$root/etc/mxq/${cm%:*}" 2>/dev/null)"
done
is "example configs in /etc/mxq with their modes" "$modes" \
	" mysql.cnf:640 mxqd.cnf:600 mxqadmin.cnf:640 power.conf:644 power-secrets:600"
check "/etc/default/mxqd installed" test -f "$root/etc/default/mxqd"
for f in mxqd.service mxqd-power-manager.service mxq-metrics.service mxq-metrics.timer; do
	check "unit $f installed" test -f "$root/usr/lib/systemd/system/$f"
done
check "tmpfiles.d/mxqd.conf installed" test -f "$root/usr/lib/tmpfiles.d/mxqd.conf"
check "README installed" test -f "$root/usr/share/doc/mxq/README.md"
check "schema installed" test -f "$root/usr/share/mxq/mysql/create_tables.sql"
check "man page of the simulator" test -f "$root/usr/share/man/man1/mxq-power-sim.1"
n=0
for t in mxqd mxqsub mxqdump mxqkill mxqadmin mxq-power-sim; do
	[ -e "$root/usr/share/bash-completion/completions/$t" ] && n=$((n + 1))
done
is "bash completion for every tool" "$n" 6
contains "mxqd.service: paths of this install" \
	"$(cat "$root/usr/lib/systemd/system/mxqd.service")" "exec /usr/sbin/mxqd --foreground --pid-file /run/mxqd.pid"
contains "mxqd.service: Type=notify" "$(cat "$root/usr/lib/systemd/system/mxqd.service")" "Type=notify"
contains "power manager unit runs --power-manager" \
	"$(grep '^ExecStart\|^	' "$root/usr/lib/systemd/system/mxqd-power-manager.service")" "--power-manager"

if command -v systemd-analyze >/dev/null; then
	out=$(cd "$root/usr/lib/systemd/system" && SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no \
		./mxqd.service ./mxqd-power-manager.service ./mxq-metrics.service ./mxq-metrics.timer 2>&1)
	rc=$?
	is "systemd-analyze verify: clean" "$rc:$out" "0:"
else
	not_ok "systemd-analyze missing (package systemd)"
fi

echo "# local change" >>"$root/etc/mxq/power.conf"
check "second install succeeds" mk install
contains "second install keeps the changed config" "$(cat "$root/etc/mxq/power.conf")" "# local change"

check "make uninstall succeeds" mk uninstall
is "uninstall keeps only the changed config" "$(cd "$root" && find . -type f)" "./etc/mxq/power.conf"
cp "$MXQ_SRC_DIR/etc/power.conf" "$root/etc/mxq/power.conf"
check "uninstall again" mk uninstall
is "install + uninstall leave nothing" "$(cd "$root" && find . -mindepth 1)" ""

tap_done
[ "$tap_failed" = 0 ]
