# MXQ with power management - build, test, install.
#
#   make                 build every tool
#   make check           unit tests (Check) then integration tests (private MariaDB)
#   make check-unit      unit tests only
#   make check-galera    integration tests against one-node Galera clusters
#   make bench           benchmarks: print figures, never fail on timing
#   make bench-sim       replay the shipped workload traces through the power policies
#   make fuzz            libFuzzer targets (clang), FUZZ_TIME seconds each
#                        (prerequisites parser; request targets and escaping)
#   make install         honours PREFIX, DESTDIR, SYSCONFDIR, SYSTEMDUNITDIR, MXQ_USER
#   make uninstall       removes what install put there (same variables);
#                        config files you changed stay
#   make deb             Debian packages in .. (dpkg-buildpackage -b -us -uc)
#   make check-deb       build them in a clean clone, lintian, install, check, purge

PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
DATADIR    ?= $(PREFIX)/share/mxq
DOCDIR     ?= $(PREFIX)/share/doc/mxq
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
LOCALSTATEDIR ?= /var
# Trust boundary (README "Security model"): the account the client tools
# are set-id to (empty: install without set-id bits, as for staging a
# package, whose maintainer scripts set the modes) and the admin group.
# A missing account is created (also for a DESTDIR: the files carry its
# uid); stage packages with MXQ_USER=.
MXQ_USER    ?= mxq
ADMIN_GROUP ?= mxqadmin

CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2
MYSQL_CFLAGS := $(shell mysql_config --cflags 2>/dev/null || pkg-config --cflags libmariadb)
MYSQL_LIBS   := $(shell mysql_config --libs 2>/dev/null || pkg-config --libs libmariadb)
CHECK_CFLAGS := $(shell pkg-config --cflags check)
CHECK_LIBS   := $(shell pkg-config --libs check)
EXTRA_LIBS   ?= $(shell pkg-config --libs libfreeipmi libssh jansson libcurl 2>/dev/null)

# CPPFLAGS and LDFLAGS from the environment are honoured (dpkg-buildflags
# passes the hardening flags through them).
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE= $(WARN) $(CPPFLAGS) $(CFLAGS) $(MYSQL_CFLAGS) \
	-DSYSCONFDIR='"$(SYSCONFDIR)"' -DLOCALSTATEDIR='"$(LOCALSTATEDIR)"' \
	-DMXQ_VERSION='"$(VERSION)"' -DMXQ_ADMIN_GROUP='"$(ADMIN_GROUP)"'
ALL_LDLIBS = $(MYSQL_LIBS) $(EXTRA_LIBS) -lm

VERSION := 0.9.0

PROGRAMS := mxqd mxqsub mxqdump mxqkill mxqadmin mxq-power-sim mxq-web
PROG_SRCS := $(addsuffix .c,$(PROGRAMS))

# Library code (libmxq.a): mx_*, mxq_*, keywordset, the parser and
# mxqd_control (qualification is shared by mxqd, mxqadmin and the simulator).
# A program PROG is PROG.c plus its own PROG_*.c files.
GENERATED_SRCS := parser.c mxq_schema_sql.c
LIB_SRCS := $(sort $(filter-out $(GENERATED_SRCS), \
	$(wildcard mx_*.c mxq_*.c keywordset.c mxqd_control.c)) $(GENERATED_SRCS))
# Objects and the library are built in obj/ (not build/: debian/rules has
# a target of that name); programs and unit tests at the top (the tests run
# ./mxqd and friends), benchmarks in bench/ and fuzz targets in fuzz/, next
# to their sources.
B := obj
LIB_OBJS := $(addprefix $(B)/,$(LIB_SRCS:.c=.o))
LIB := $(B)/libmxq.a
prog_objs = $(addprefix $(B)/,$(1).o $(patsubst %.c,%.o,$(filter-out mxqd_control.c,$(wildcard $(1)_*.c))))

TEST_SRCS  := $(wildcard test_*.c)
TESTS      := $(TEST_SRCS:.c=)
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCHES    := $(BENCH_SRCS:.c=)
FUZZ_SRCS  := $(wildcard fuzz/fuzz_*.c)

SQL_FILES := mysql/create_tables.sql mysql/create_triggers.sql mysql/schema.expected $(sort $(wildcard mysql/migrations/*.sql))

.PHONY: all check check-unit check-integration check-galera bench bench-sim fuzz install uninstall \
	deb check-deb clean schema-expected
.DELETE_ON_ERROR:

all: $(PROGRAMS)

# systemd units, written by install with the paths of that install. Both
# mxqd units come from one source and differ in role, options and which one
# they conflict with.
SYSTEMD_UNITS := mxqd.service mxqd-power-manager.service mxq-metrics.service mxq-metrics.timer
UNIT_SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g'
UNIT_mxqd.service = $(UNIT_SUBST) -e 's|@UNIT@|mxqd.service|' -e 's|@ROLE@||g' \
	-e 's|@CONFLICTS@|mxqd-power-manager.service|' \
	-e 's|@OPTS@| "$$$$MXQD_OPTS"|' systemd/mxqd.service.in
UNIT_mxqd-power-manager.service = $(UNIT_SUBST) -e 's|@UNIT@|mxqd-power-manager.service|' \
	-e 's|@ROLE@| as a power manager candidate|g' -e 's|@CONFLICTS@|mxqd.service|' \
	-e 's|@OPTS@| --power-manager "$$$$MXQD_OPTS" "$$$$MXQD_POWER_OPTS"|' systemd/mxqd.service.in
UNIT_mxq-metrics.service = $(UNIT_SUBST) systemd/mxq-metrics.service.in
UNIT_mxq-metrics.timer = cat systemd/mxq-metrics.timer

$(B)/%.o: %.c $(wildcard *.h) parser.h | $(B)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B):
	mkdir -p $@

parser.c parser.h &: parser.y
	bison -Wall -Werror --defines=parser.h -o parser.c parser.y

mxq_schema_sql.c: mysql/embed-sql.sh $(SQL_FILES)
	sh mysql/embed-sql.sh $(SQL_FILES) > $@.tmp && mv $@.tmp $@

# mysql/schema.expected from a new database on a private MariaDB: run after
# changing anything in mysql/ (keeps the comment lines at its top)
schema-expected: mxqadmin
	sh tests/lib/mariadb.sh run sh -c '{ grep "^#" mysql/schema.expected; \
		./mxqadmin -M "$$MXQ_MYSQL_DEFAULT_FILE" db schema; } > mysql/schema.expected.tmp' && \
		mv mysql/schema.expected.tmp mysql/schema.expected
	$(MAKE) all

$(LIB): $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

define prog_rule
$(1): $(call prog_objs,$(1)) $$($(1)_EXTRA_OBJS) $(LIB)
	$$(CC) $$(ALL_CFLAGS) $$(LDFLAGS) -o $$@ $(call prog_objs,$(1)) $$($(1)_EXTRA_OBJS) $(LIB) $$(ALL_LDLIBS)
endef
# mxqadmin power set checks ipmi_workarounds= with the ipmi transport's own names
mxqadmin_EXTRA_OBJS := $(B)/mxqd_power_ipmi.o $(B)/mxqd_power_retry.o
# mxq-web reads groups as `mxqadmin qualify` does (mxqadmin_group_load):
# it shares that object rather than a copy of it. Set before the rules are
# made: a prerequisite list is expanded when its rule is read
mxq-web_EXTRA_OBJS := $(B)/mxqadmin_qualify.o
$(foreach p,$(PROGRAMS),$(eval $(call prog_rule,$(p))))

$(TESTS): %: %.c $(LIB)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(TEST_OBJS) $(LIB) $(ALL_LDLIBS) $(CHECK_LIBS)

# unit tests of daemon modules link those objects too
test_power_work: TEST_OBJS = $(B)/mxqd_power_work.o
test_power_work: $(B)/mxqd_power_work.o
test_cgroup: TEST_OBJS = $(B)/mxqd_cgroup.o
test_cgroup: $(B)/mxqd_cgroup.o

$(BENCHES): %: %.c bench/bench.h $(LIB)
	$(CC) $(ALL_CFLAGS) -I. -o $@ $< $(BENCH_OBJS) $(LIB) $(ALL_LDLIBS)

# benchmarks of daemon modules link those objects too
bench/bench_cgroup: BENCH_OBJS = $(B)/mxqd_cgroup.o
bench/bench_cgroup: $(B)/mxqd_cgroup.o

check: check-unit check-integration

check-unit: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$$t; done

check-integration: $(PROGRAMS) tests/ipmi_sim_dcmi.so
	sh tests/run.sh

# The whole integration suite with every private MariaDB run as a one-node
# Galera cluster (nothing may depend on plain-server behaviour).
check-galera: $(PROGRAMS) tests/ipmi_sim_dcmi.so
	MXQ_TEST_DB_GALERA=1 sh tests/run.sh

# Test-only ipmi_sim plugin: the simulated BMC answers DCMI power readings.
tests/ipmi_sim_dcmi.so: tests/ipmi_sim_dcmi.c
	@pkg-config --exists OpenIPMI || { \
		echo "$@: OpenIPMI headers missing (install libopenipmi-dev)" >&2; exit 1; }
	$(CC) -std=c11 $(WARN) $(CFLAGS) $$(pkg-config --cflags OpenIPMI) -shared -fPIC -o $@ $<

bench: $(PROGRAMS) $(BENCHES)
	@set -e; for b in $(BENCHES); do echo "== $${b#bench/}"; ./$$b; done
	sh tests/bench_throughput.sh
	sh tests/bench_dispatch.sh
	sh tests/bench_tick.sh
	sh tests/bench_galera.sh
	sh tests/bench_web.sh

# Power simulator: reads gzip traces (zlib), runs its simulations in threads.
mxq-power-sim: ALL_LDLIBS += -lz -pthread
# -z now: symbols are bound once at start, not again in every forked reaper
mxqd: ALL_LDLIBS += -Wl,-z,now
test_sim: ALL_LDLIBS += -lz

# Status page: libmicrohttpd serves HTTP from a pool of threads (its
# objects: above, with the other programs' extra objects).
mxq-web: ALL_LDLIBS += $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd) -pthread

TRACES_DIR ?= ../shared/traces
# The big synthetic trace: 5544 one-core nodes, 254 days generated, all of
# them simulated by default (BIG_SIM_DAYS=N for a shorter window); the last
# line gives the process's CPU (always-on, timeout-10m and our policy
# together, trace reading included), CPU s per simulated day, the CPU of
# the full 254 days (measured, or extrapolated from a shorter window with
# the reading counted once) and the peak memory. Then 8 days of the same
# hosts with 16 cores each and so many jobs that they are nearly always
# full (queues of thousands of gangs): CPU per simulated day there, and
# what 254 days of it would take.
BIG_SIM_DAYS ?= 254
bench-sim: mxq-power-sim
	@set -e; found=; for t in $(TRACES_DIR)/*.swf.gz; do \
		[ -e "$$t" ] || continue; found=1; \
		echo "== $$t"; ./mxq-power-sim $(SIM_FLAGS) "$$t"; echo; \
	done; [ -n "$$found" ] || { echo "bench-sim: no *.swf.gz in $(TRACES_DIR)"; exit 1; }
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT INT TERM; \
		sh tests/gen_swf.sh 7 254 5544 1 3000 wide >"$$d/big.swf"; \
		echo "== synthetic: 5544 nodes, 254 days of jobs (tests/gen_swf.sh 7 254 5544 1 3000 wide), $(BIG_SIM_DAYS) days simulated"; \
		./mxq-power-sim $(SIM_FLAGS) --threads 1 --timeouts 10m --days $(BIG_SIM_DAYS) "$$d/big.swf" \
			| tee "$$d/out"; \
		awk '/^speed:/ { sim = $$10 } \
		     /^process:/ { proc = $$2; per_day = $$11; mb = $$(NF - 1) } \
		     END { if (per_day <= 0) exit 1; days = proc / per_day; \
			   full = days >= 254 ? proc : proc - sim + sim * 254 / days; \
			   printf "bench-sim: %.1f s CPU for %.1f simulated days, %.3f s per day; the full trace (254 days): %.0f s CPU %s (target < 120 s); peak memory %.1f MB (target < 500 MB)\n", \
				  proc, days, per_day, full, days >= 254 ? "measured" : "extrapolated", mb }' "$$d/out"
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT INT TERM; \
		sh tests/gen_swf.sh 91 8 5544 16 13000 wide >"$$d/full.swf"; \
		echo "== synthetic: 5544 nodes of 16 cores nearly full (tests/gen_swf.sh 91 8 5544 16 13000 wide: utilisation 0.88, jobs wait minutes), the default comparison"; \
		./mxq-power-sim $(SIM_FLAGS) "$$d/full.swf" | tee "$$d/out"; \
		awk '/^process:/ { proc = $$2; per_day = $$11; mb = $$(NF - 1) } \
		     END { if (per_day <= 0) exit 1; \
			   printf "bench-sim (nearly full, default comparison): %.1f s CPU, %.3f s per simulated day: 254 days would take %.0f s CPU (target < 120 s); peak memory %.1f MB\n", \
				  proc, per_day, per_day * 254, mb }' "$$d/out"

FUZZ_TIME ?= 60
fuzz: $(FUZZ_SRCS) fuzz/fuzz.h $(LIB_SRCS) parser.h
	@set -e; for p in $(FUZZ_SRCS:.c=); do f=$${p#fuzz/}; \
		clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -I. \
			$(MYSQL_CFLAGS) -o $$p $$p.c keywordset.c parser.c mx_html.c mx_url.c mx_util.c \
			mxq_power_policy.c mxq_power_index.c mxqd_control.c; \
		mkdir -p fuzz-corpus/$$f; \
		seeds=tests/fuzz-seeds/$${f#fuzz_}; [ -d $$seeds ] || seeds=; \
		./$$p -max_total_time=$(FUZZ_TIME) -print_final_stats=1 fuzz-corpus/$$f $$seeds; \
	done

# Installed layout (README "Layout", debian/ packages the same):
#   BINDIR    mxqsub mxqdump mxqkill (set-id mxq) mxqadmin (setgid mxq) mxq-power-sim
#   SBINDIR   mxqd
#   SYSCONFDIR/mxq  example configs, kept when present; SYSCONFDIR/default/mxqd
#   DATADIR/mysql   schema and grants; DOCDIR README.md; units, tmpfiles,
#   man pages, bash completion (one script, linked for every tool).
CLIENT_TOOLS := mxqsub mxqdump mxqkill
CONF_FILES := mysql.cnf:0640 mxqd.cnf:0600 mxqadmin.cnf:0640 power.conf:0644 power-secrets:0600
GRANTS_SQL := $(wildcard mysql/grants.sql)
MAN_PAGES := $(wildcard manpages/*.[1578])
INSTALL_DIRS = $(BINDIR) $(SBINDIR) $(SYSCONFDIR)/mxq $(SYSCONFDIR)/default \
	$(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man7 $(MANDIR)/man8 \
	$(DATADIR)/mysql $(DOCDIR) $(SYSTEMDUNITDIR) $(TMPFILESDIR) $(BASHCOMPDIR)

install: all
	@set -e; u='$(MXQ_USER)'; \
	if [ -n "$$u" ] && ! getent passwd "$$u" >/dev/null; then \
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$$u"; \
	fi; \
	for d in $(INSTALL_DIRS); do install -d $(DESTDIR)$$d; done; \
	if [ -n "$$u" ]; then \
		install -o root -g "$$u" -m 2755 $(CLIENT_TOOLS) mxqadmin $(DESTDIR)$(BINDIR); \
	else \
		install -m 0755 $(CLIENT_TOOLS) mxqadmin $(DESTDIR)$(BINDIR); \
	fi; \
	install -m 0755 mxq-power-sim $(DESTDIR)$(BINDIR); \
	install -m 0755 mxqd mxq-web $(DESTDIR)$(SBINDIR); \
	sed 's|/usr/local/sbin/mxq-web|$(SBINDIR)/mxq-web|g' mxq-web.service > $(DESTDIR)$(SYSTEMDUNITDIR)/mxq-web.service; \
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/mxq-web.service; \
	install -m 0644 $(SQL_FILES) $(GRANTS_SQL) $(DESTDIR)$(DATADIR)/mysql; \
	install -m 0644 README.md $(DESTDIR)$(DOCDIR); \
	for m in $(MAN_PAGES); do install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}; done; \
	$(foreach u,$(SYSTEMD_UNITS),$(UNIT_$(u)) > $(DESTDIR)$(SYSTEMDUNITDIR)/$(u); \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$(u);) \
	install -m 0644 systemd/mxqd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/mxqd.conf; \
	install -m 0644 bash-completion/mxq $(DESTDIR)$(BASHCOMPDIR)/mxqsub; \
	for p in $(filter-out mxqsub,$(PROGRAMS)); do ln -sf mxqsub $(DESTDIR)$(BASHCOMPDIR)/$$p; done; \
	for cm in $(CONF_FILES) default/mxqd:0644; do c=$${cm%:*}; \
		dst=$(DESTDIR)$(SYSCONFDIR)/$$c; case $$c in default/*) ;; *) dst=$(DESTDIR)$(SYSCONFDIR)/mxq/$$c;; esac; \
		if [ -e "$$dst" ]; then echo "install: keeping $$dst"; continue; fi; \
		install -m $${cm#*:} etc/$$c "$$dst"; \
		if [ -n "$$u" ]; then case $$c in \
			mysql.cnf) chgrp "$$u" "$$dst";; \
			mxqadmin.cnf) if getent group $(ADMIN_GROUP) >/dev/null; then \
				chgrp $(ADMIN_GROUP) "$$dst"; else chmod 0600 "$$dst"; fi;; \
		esac; fi; \
	done

# Removes exactly what install put there; an example config that was edited
# stays (it differs from etc/), and so does every directory not left empty.
uninstall:
	@set -e; \
	for p in $(CLIENT_TOOLS) mxqadmin mxq-power-sim; do rm -f $(DESTDIR)$(BINDIR)/$$p; done; \
	rm -f $(DESTDIR)$(SBINDIR)/mxqd $(DESTDIR)$(SBINDIR)/mxq-web $(DESTDIR)$(SYSTEMDUNITDIR)/mxq-web.service; \
	for f in $(notdir $(SQL_FILES) $(GRANTS_SQL)); do rm -f $(DESTDIR)$(DATADIR)/mysql/$$f; done; \
	rm -f $(DESTDIR)$(DOCDIR)/README.md; \
	for m in $(notdir $(MAN_PAGES)); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m; done; \
	for u in $(SYSTEMD_UNITS); do rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/$$u; done; \
	rm -f $(DESTDIR)$(TMPFILESDIR)/mxqd.conf; \
	for p in $(PROGRAMS); do rm -f $(DESTDIR)$(BASHCOMPDIR)/$$p; done; \
	for cm in $(CONF_FILES) default/mxqd:0644; do c=$${cm%:*}; \
		dst=$(DESTDIR)$(SYSCONFDIR)/$$c; case $$c in default/*) ;; *) dst=$(DESTDIR)$(SYSCONFDIR)/mxq/$$c;; esac; \
		[ -e "$$dst" ] || continue; \
		if cmp -s etc/$$c "$$dst"; then rm -f "$$dst"; else echo "uninstall: keeping changed $$dst"; fi; \
	done; \
	for d in $(DATADIR)/mysql $(DATADIR) $(DOCDIR) $(SYSCONFDIR)/mxq; do \
		rmdir $(DESTDIR)$$d 2>/dev/null || true; done; \
	if [ -n "$(DESTDIR)" ]; then for d in $(INSTALL_DIRS); do d=$(DESTDIR)$$d; \
		while [ "$$d" != "$(DESTDIR)" ]; do \
			if [ -d "$$d" ]; then rmdir "$$d" 2>/dev/null || break; fi; d=$${d%/*}; done; \
	done; fi

# Debian packages (debian/), written to the parent directory. Not part of
# `make check`: it rebuilds everything under fakeroot and takes minutes.
deb:
	dpkg-buildpackage -b -us -uc

# Build in a clean clone of HEAD, lintian, apt-get install, check, purge
# (root; installs packages on this machine).
check-deb:
	sh tests/check_deb.sh

clean:
	rm -rf $(B)
	rm -f *.o libmxq.a  # left at the top by builds before obj/
	rm -f $(PROGRAMS) $(TESTS) $(BENCHES) $(FUZZ_SRCS:.c=) \
		parser.c parser.h mxq_schema_sql.c tests/ipmi_sim_dcmi.so
