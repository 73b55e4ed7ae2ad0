#!/bin/sh
# dev.sh - one entry point for a fresh Debian 12 machine.
#
#   ./dev.sh deps    install what is missing (apt-get as root; otherwise
#                    print the exact apt-get line and stop)
#   ./dev.sh demo    deps + build + the demo (private database, daemons,
#                    jobs, result; cleans up after itself)
#   ./dev.sh test    deps + build + every test (make check)
#   ./dev.sh deb     deps + the packaging tools + make check-deb (builds
#                    the Debian packages in a clean clone, lintian,
#                    installs, checks and purges them: on this machine)
#
# The package list is the single source of truth for what the build and
# the tests need; .ci/run calls `./dev.sh test`.
set -eu
cd "$(dirname -- "$0")"

PACKAGES="build-essential pkg-config bison flex libmariadb-dev mariadb-server mariadb-client
check libfreeipmi-dev freeipmi-tools libssh-dev libjansson-dev zlib1g-dev
openipmi libopenipmi-dev openssh-server openssh-client iproute2 procps python3 clang libclang-rt-14-dev
galera-4 mariadb-backup socat libmicrohttpd-dev chromium prometheus curl jq
libcurl4-openssl-dev redfishtool openssl
gdb passwd util-linux systemd bash-completion"
# only for ./dev.sh deb (make deb, make check-deb): not needed by CI
DEB_PACKAGES="dpkg-dev debhelper devscripts fakeroot lintian git"

deps() {
	missing=
	for p in $PACKAGES ${1:-}; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "dev.sh: missing packages; as root run:" >&2
		echo "  apt-get install -y$missing" >&2
		exit 1
	fi
	echo "dev.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# never start services from package scripts: tests start their own
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d.mxq
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		cp /usr/sbin/policy-rc.d.mxq /usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	rm -f /usr/sbin/policy-rc.d.mxq
	apt-get install -y -qq $missing
}

build() {
	make -j"$(nproc)"
}

case "${1:-}" in
deps) deps ;;
demo) deps; build; exec sh tests/demo.sh ;;
test) deps; build; exec make check ;;
deb) deps "$DEB_PACKAGES"; exec make check-deb ;;
*) echo "usage: ./dev.sh deps|demo|test|deb" >&2; exit 2 ;;
esac
