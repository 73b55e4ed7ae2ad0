#!/bin/sh
# tests/check_deb.sh - build, lint, install and remove the Debian packages
# (`make check-deb`; not part of `make check`: it rebuilds everything and
# installs packages on this machine, as root).
#
# 1. clone the committed tree (HEAD) into a temporary directory and run
#    `dpkg-buildpackage -b -us -uc` there (a clean clone, as CI would);
# 2. lintian on the result: no error (E:) tags;
# 3. `apt-get install ./*.deb` (nothing may be started or enabled), then
#    mxqd, mxqsub, mxqadmin (and the rest) answer --version, the set-id
#    modes and credential file modes are those of README "Security model";
# 4. purge the packages again and delete the mxq account and mxqadmin
#    group if this script's install created them.
# Prints TAP lines; exits non-zero when a check failed.
set -u
src=$(cd "$(dirname -- "$0")/.." && pwd -P)
. "$src/tests/lib/tap.sh"
[ "$(id -u)" = 0 ] || { echo "check_deb.sh: needs root (apt-get install)" >&2; exit 2; }
for c in dpkg-buildpackage dh lintian; do
	command -v "$c" >/dev/null || { echo "check_deb.sh: $c missing (apt-get install devscripts debhelper lintian)" >&2; exit 2; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/mxq-deb.XXXXXX") || exit 1
had_user=$(getent passwd mxq >/dev/null && echo yes)
had_group=$(getent group mxqadmin >/dev/null && echo yes)
cleanup() {
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -q mxq-common mxq-clients mxqd mxq-admin \
		>"$dir/purge.log" 2>&1
	[ -n "$had_user" ] || { deluser --system mxq >/dev/null 2>&1; delgroup --system mxq >/dev/null 2>&1; }
	[ -n "$had_group" ] || delgroup --system mxqadmin >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

git clone -q "$src" "$dir/src" && git -C "$dir/src" checkout -q "$(git -C "$src" rev-parse HEAD)" ||
	{ not_ok "clean clone"; exit 1; }
if (cd "$dir/src" && dpkg-buildpackage -b -us -uc) >"$dir/build.log" 2>&1; then
	ok "dpkg-buildpackage -b -us -uc in a clean clone"
else
	not_ok "dpkg-buildpackage -b -us -uc in a clean clone"
	tail -n 30 "$dir/build.log" | diag
	exit 1
fi
lint=$(lintian "$dir"/mxq_*.changes 2>&1)
is "lintian: no errors" "$(printf '%s\n' "$lint" | grep -c '^E:')" 0
printf '%s\n' "$lint" | diag

if DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$dir"/mxq-common_*.deb "$dir"/mxq-clients_*.deb \
	"$dir"/mxqd_*_*.deb "$dir"/mxq-admin_*.deb >"$dir/install.log" 2>&1; then
	ok "apt-get install ./*.deb"
else
	not_ok "apt-get install ./*.deb"
	tail -n 20 "$dir/install.log" | diag
fi
version=$(sed -n 's/^VERSION := //p' "$src/Makefile")
for t in /usr/sbin/mxqd /usr/bin/mxqsub /usr/bin/mxqdump /usr/bin/mxqkill /usr/bin/mxqadmin /usr/bin/mxq-power-sim; do
	is "$t --version" "$("$t" --version 2>&1)" "${t##*/} $version"
done
is "set-id modes" "$(stat -c '%n %U:%G %a' /usr/bin/mxqsub /usr/bin/mxqdump /usr/bin/mxqkill /usr/bin/mxqadmin)" \
"/usr/bin/mxqsub root:mxq 2755
/usr/bin/mxqdump root:mxq 2755
/usr/bin/mxqkill root:mxq 2755
/usr/bin/mxqadmin root:mxq 2755"
# an upgrade from a version that set mxq:mxq 6755: the old default goes,
# a mode the site chose stays
dpkg-statoverride --remove /usr/bin/mxqsub
dpkg-statoverride --update --add mxq mxq 6755 /usr/bin/mxqsub
dpkg-statoverride --remove /usr/bin/mxqkill
dpkg-statoverride --update --add root mxq 0750 /usr/bin/mxqkill
/var/lib/dpkg/info/mxq-clients.postinst configure 0.8.0 >/dev/null 2>&1
is "upgrade: the old setuid default replaced, the site's mode kept" \
	"$(stat -c '%n %U:%G %a' /usr/bin/mxqsub /usr/bin/mxqkill)" \
"/usr/bin/mxqsub root:mxq 2755
/usr/bin/mxqkill root:mxq 750"
is "credential file modes" "$(cd /etc/mxq && stat -c '%n %U:%G %a' mysql.cnf mxqd.cnf mxqadmin.cnf power.conf power-secrets)" \
"mysql.cnf root:mxq 640
mxqd.cnf root:root 600
mxqadmin.cnf root:mxqadmin 640
power.conf root:root 644
power-secrets root:root 600"
is "nothing enabled" "$(ls /etc/systemd/system/*.wants 2>/dev/null | grep -c mxq)" 0
check "spool and tmpdir made by tmpfiles" test -d /var/spool/mxqd -a -d /var/lib/mxqd/tmp
if command -v systemd-analyze >/dev/null; then
	is "systemd-analyze verify of the installed units" "$(systemd-analyze verify \
		/lib/systemd/system/mxqd.service /lib/systemd/system/mxqd-power-manager.service \
		/lib/systemd/system/mxq-metrics.service /lib/systemd/system/mxq-metrics.timer 2>&1)" ""
fi
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q mxq-common mxq-clients mxqd mxq-admin >"$dir/purge.log" 2>&1
check "purge removes the packages" test ! -e /usr/bin/mxqsub -a ! -e /etc/mxq
is "purge leaves no statoverride" "$(dpkg-statoverride --list | grep -c mxq)" 0
check "purge removes the empty spool and tmpdir" test ! -e /var/spool/mxqd -a ! -e /var/lib/mxqd

tap_done
[ "$tap_failed" = 0 ]
