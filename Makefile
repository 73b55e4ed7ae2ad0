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
#   make install         honours PREFIX, DESTDIR, SYSCONFDIR, SYSTEMDUNITDIR

PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
LOCALSTATEDIR ?= /var
# Trust boundary (README "Security model"): the account the client tools
# are set-id to (empty: install without set-id bits) and the admin group.
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

ALL_CFLAGS = -std=c11 -D_GNU_SOURCE= $(WARN) $(CFLAGS) $(MYSQL_CFLAGS) \
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
LIB_OBJS := $(LIB_SRCS:.c=.o)
prog_objs = $(1).o $(patsubst %.c,%.o,$(filter-out mxqd_control.c,$(wildcard $(1)_*.c)))

TEST_SRCS  := $(wildcard test_*.c)
TESTS      := $(TEST_SRCS:.c=)
BENCH_SRCS := $(wildcard bench_*.c)
BENCHES    := $(BENCH_SRCS:.c=)
FUZZ_SRCS  := $(wildcard fuzz_*.c)

SQL_FILES := mysql/create_tables.sql mysql/create_triggers.sql mysql/schema.expected $(sort $(wildcard mysql/migrations/*.sql))

.PHONY: all check check-unit check-integration check-galera bench bench-sim fuzz install clean \
	schema-expected
.DELETE_ON_ERROR:

all: $(PROGRAMS)

%.o: %.c $(wildcard *.h) parser.h
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

parser.c parser.h: parser.y
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

libmxq.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

define prog_rule
$(1): $(call prog_objs,$(1)) $$($(1)_EXTRA_OBJS) libmxq.a
	$$(CC) $$(ALL_CFLAGS) -o $$@ $(call prog_objs,$(1)) $$($(1)_EXTRA_OBJS) libmxq.a $$(ALL_LDLIBS)
endef
# mxqadmin power set checks ipmi_workarounds= with the ipmi transport's own names
mxqadmin_EXTRA_OBJS := mxqd_power_ipmi.o mxqd_power_retry.o
$(foreach p,$(PROGRAMS),$(eval $(call prog_rule,$(p))))

$(TESTS): %: %.c libmxq.a
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(TEST_OBJS) libmxq.a $(ALL_LDLIBS) $(CHECK_LIBS)

# unit tests of daemon modules link those objects too
test_power_work: TEST_OBJS = mxqd_power_work.o
test_power_work: mxqd_power_work.o
test_cgroup: TEST_OBJS = mxqd_cgroup.o
test_cgroup: mxqd_cgroup.o

$(BENCHES): %: %.c libmxq.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BENCH_OBJS) libmxq.a $(ALL_LDLIBS)

# benchmarks of daemon modules link those objects too
bench_cgroup: BENCH_OBJS = mxqd_cgroup.o
bench_cgroup: mxqd_cgroup.o

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
	@set -e; for b in $(BENCHES); do echo "== $$b"; ./$$b; done
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

# Status page: libmicrohttpd serves HTTP from a pool of threads; it reads
# groups as `mxqadmin qualify` does (mxqadmin_group_load), so it shares that
# object rather than a copy of it.
mxq-web_EXTRA_OBJS := mxqadmin_qualify.o
mxq-web: ALL_LDLIBS += $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd) -pthread

TRACES_DIR ?= ../shared/traces
bench-sim: mxq-power-sim
	@set -e; found=; for t in $(TRACES_DIR)/*.swf.gz; do \
		[ -e "$$t" ] || continue; found=1; \
		echo "== $$t"; ./mxq-power-sim $(SIM_FLAGS) "$$t"; echo; \
	done; [ -n "$$found" ] || { echo "bench-sim: no *.swf.gz in $(TRACES_DIR)"; exit 1; }

FUZZ_TIME ?= 60
fuzz: $(FUZZ_SRCS) $(LIB_SRCS) parser.h
	@set -e; for f in $(FUZZ_SRCS:.c=); do \
		clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
			$(MYSQL_CFLAGS) -o $$f $$f.c keywordset.c parser.c mx_html.c mx_url.c mx_util.c; \
		mkdir -p fuzz-corpus/$$f; \
		seeds=tests/fuzz-seeds/$${f#fuzz_}; [ -d $$seeds ] || seeds=; \
		./$$f -max_total_time=$(FUZZ_TIME) -print_final_stats=1 fuzz-corpus/$$f $$seeds; \
	done

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(SYSCONFDIR)/mxq \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(PREFIX)/share/mxq/mysql $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 0755 mxqd mxq-web $(DESTDIR)$(SBINDIR)
	install -m 0644 mysql/grants.sql $(DESTDIR)$(PREFIX)/share/mxq/mysql
	@# set-id tools: the mxq account reads the client credentials, nobody else
	if [ -n "$(MXQ_USER)" ]; then \
		getent passwd $(MXQ_USER) >/dev/null || useradd --system --user-group --no-create-home \
			--home-dir /nonexistent --shell /usr/sbin/nologin $(MXQ_USER) || exit 1; \
		install -o $(MXQ_USER) -g $(MXQ_USER) -m 6755 mxqsub mxqdump mxqkill $(DESTDIR)$(BINDIR); \
		install -o root -g $(MXQ_USER) -m 2755 mxqadmin $(DESTDIR)$(SBINDIR); \
	else \
		install -m 0755 mxqsub mxqdump mxqkill $(DESTDIR)$(BINDIR); \
		install -m 0755 mxqadmin $(DESTDIR)$(SBINDIR); \
	fi
	install -m 0644 $(SQL_FILES) $(DESTDIR)$(PREFIX)/share/mxq/mysql
	for m in manpages/*.[1578]; do [ -e "$$m" ] || continue; \
		s=$${m##*.}; install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s; done
	sed 's|/usr/local/sbin/mxqd|$(SBINDIR)/mxqd|g' mxqd.service > $(DESTDIR)$(SYSTEMDUNITDIR)/mxqd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/mxqd.service
	sed 's|/usr/local/sbin/mxq-web|$(SBINDIR)/mxq-web|g' mxq-web.service > $(DESTDIR)$(SYSTEMDUNITDIR)/mxq-web.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/mxq-web.service

clean:
	rm -f $(PROGRAMS) $(TESTS) $(BENCHES) $(FUZZ_SRCS:.c=) *.o libmxq.a \
		parser.c parser.h mxq_schema_sql.c tests/ipmi_sim_dcmi.so
