/*
 * mxqd - the MXQ node daemon: pulls jobs from the database and runs them.
 *
 * main() reads as the table of contents: parse options, set up the server
 * (capabilities, spool and tmpdir, lock), connect, register, recover, serve,
 * unregister. The loop is driven by signals (SIGCHLD when a reaper ends,
 * SIGTERM/SIGINT/SIGQUIT/SIGHUP) and a poll interval for new work, since
 * the database cannot notify us.
 *
 * Signals: SIGTERM stops taking jobs and exits when the running ones are
 * done; SIGINT also terminates the running jobs; SIGQUIT exits at once and
 * leaves jobs running (a restarted mxqd re-adopts them); SIGHUP re-opens the
 * log file.
 *
 * Readiness: under systemd (Type=notify) READY=1 is sent once the daemon is
 * registered in mxq_daemon and mxq_power, STOPPING=1 when it starts to
 * drain or exit (mx_notify.c).
 *
 * Errors: usage errors (unknown option, bad value) exit with status 2,
 * start-up failures (database, configuration file) with status 1, both
 * with one line on stderr.
 * Database errors while serving are logged and retried with backoff; jobs
 * keep running and their outcomes wait in the spool directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mx_db.h"
#include "mx_log.h"
#include "mx_notify.h"
#include "mx_safefs.h"
#include "mx_util.h"
#include "mxq_client.h"
#include "mxq_privs.h"
#include "mxq_status.h"
#include "mxq_daemon.h"
#include "mxq_schema.h"
#include "mxqd.h"
#include "mxqd_cgroup.h"
#include "mxqd_energy.h"
#include "mxqd_power.h"

#ifndef MXQ_VERSION
#define MXQ_VERSION "unknown"
#endif
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif
/* out of /tmp: a user could create /tmp/mxqd before mxqd does */
#define DEFAULT_TMPDIR LOCALSTATEDIR "/lib/mxqd/tmp"
/* the daemon's credentials, root only; upstream kept them in mysql.cnf */
#define MXQD_DB_FILE SYSCONFDIR "/mxq/mxqd.cnf"
#define DEFAULT_MIN_UID 1000

struct options {
	struct mxqd_power_options power;
	struct mxqd_energy_options energy;
	bool daemonize;
	const char *pid_file;
	const char *log_file;
	bool debug;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: mxqd [OPTIONS]\n"
"\n"
"  -N, --daemon-name NAME        name of this daemon on its host (default main)\n"
"      --hostname NAME           host name to act as (default: this host's)\n"
"  -j, --slots N                 job slots (default: number of CPUs)\n"
"  -m, --memory SIZE             memory for jobs, e.g. 64G (default: total RAM)\n"
"  -t, --max-time TIME           longest job runtime accepted, e.g. 7d (default: any)\n"
"      --tags \"W1 W2 ...\"        tags this server offers\n"
"      --prerequisites EXPR      what a group's tags must satisfy to run here\n"
"      --gpus N                  GPUs on this server (default 0)\n"
"      --tmpdir DIR              parent of per-job temporary directories (default " DEFAULT_TMPDIR ");\n"
"                                owned by root, not writable by group or others\n"
"      --spool DIR               job outcome files (default " LOCALSTATEDIR "/spool/mxqd/HOST.NAME), same rule\n"
"      --min-uid UID             lowest uid a job may run as (default 1000)\n"
"      --allow-root-jobs         also run jobs of uid 0 and of uids below --min-uid\n"
"      --shared-tmp              jobs share the host's /tmp, /var/tmp and /dev/shm (default\n"
"                                as root: each job its own, gone with the job; older name:\n"
"                                --shared-dev-shm)\n"
"      --cgroup-v2-mount DIR     without a cgroup2 tree under the root: mount one on DIR\n"
"      --memory-limit-hard PCT   kill a job above PCT %% of its memory request; above\n"
"                                100 %% the kernel reclaims/throttles it first (default 100)\n"
"      --cgroup-root DIR         where the cgroup filesystems are mounted (default "
MXQD_CGROUP_DEFAULT_ROOT ";\n"
"                                \"\" or a missing dir: no cgroups, jobs contained by session)\n"
"  -M, --mysql-default-file FILE MySQL defaults file (default " MXQD_DB_FILE ",\n"
"                                if missing " MX_DB_DEFAULT_FILE ")\n"
"  -S, --mysql-default-group G   group in it (default " MX_DB_GROUP_DAEMON ")\n"
"      --foreground              stay in the foreground (default)\n"
"      --daemonize               detach from the terminal\n"
"      --pid-file FILE           write the daemon's pid here\n"
"      --log FILE                log to FILE instead of stderr\n"
"      --poll-interval SECONDS   how often the queue is read (default 1)\n"
"      --heartbeat-interval S    how often the daemon row is refreshed (default 10)\n"
"      --callback-timeout S      wall-clock limit of a job callback (default 600)\n"
"      --kill-grace S            SIGTERM to SIGKILL for killed jobs (default 10)\n"
"      --runtime-scale FACTOR    multiply job runtime limits (tests, demos; default 1)\n"
"      --debug                   log debug messages\n"
"\npower management:\n"
"      --power-manager           be a candidate for the power manager lease\n"
"      --power-config FILE       policy configuration (default " SYSCONFDIR "/mxq/power.conf)\n"
"      --check-config            check the power configuration and exit\n"
"      --power-tick SECONDS      leader tick interval (default 10)\n"
"      --power-lease SECONDS     leader lease on the database clock (default 30)\n"
"      --power-poll SECONDS      between ticks, decide at once on a newly submitted job\n"
"                                that waits (default 1, 0 = at ticks only)\n"
"      --power-exec-command CMD  exec transport: CMD HOST on|off|status\n"
"      --power-exec-timeout S    limit for one exec transport call (default 20)\n"
"      --power-node-timeout S    a node whose heartbeat is older counts as down\n"
"                                (default: 3 x --heartbeat-interval + 5)\n"
"      --poweroff-command CMD    self transport: how this node powers off (default /sbin/poweroff)\n"
"      --no-power-node           do not take part in power management as a node\n"
"      --power-secrets FILE      BMC and ssh credentials, mode 0600 (default " SYSCONFDIR "/mxq/power-secrets)\n"
"      --power-reconcile-interval S  compare recorded and real power states (default 60, 0 = never)\n"
"      --power-soft-off-deadline S   ipmi, redfish: soft off, then hard off after S (default 120)\n"
"      --power-ipmi-timeout S    one IPMI session attempt (default 5)\n"
"      --power-ipmi-retries N    further attempts after a timeout (default 2)\n"
"      --power-ipmi-verify S     how long power on/hard off may take to show (default 10; ipmi, redfish)\n"
"      --power-redfish-timeout S one HTTPS request to a Redfish BMC (default 10)\n"
"      --power-redfish-retries N further attempts after a timeout or a busy BMC (default 2)\n"
"      --power-wol-port PORT     UDP port of Wake-on-LAN packets (default 9)\n"
"      --power-wol-count N       magic packets per wake (default 3)\n"
"      --power-ssh-timeout S     limit for one ssh command, connect included (default 10)\n"
"      --power-ssh-drain-command CMD     ssh: drain an old node (default drain)\n"
"      --power-ssh-poweroff-command CMD  ssh: power the node off (default poweroff)\n"
"      --power-ssh-known-hosts FILE      default known_hosts (default " SYSCONFDIR "/mxq/power-known-hosts)\n"
"\njob energy accounting (see mxq_energy(7)):\n"
"      --energy-sources LIST     sources in order of preference (default rapl,hwmon,ipmi,redfish,model; none: off)\n"
"      --energy-interval S       sampling interval (default 1)\n"
"      --energy-flush-interval S running jobs and node totals to the database (default 60)\n"
"      --energy-sysfs-root DIR   where class/powercap and class/hwmon are (default /sys)\n"
"      --energy-model IDLE_W:SLOT_W  linear model: last-resort source and idle baseline\n"
"      --energy-timeline         also store a time series per job\n"
"      --energy-retention DAYS   keep node and job samples this long (default 30)\n"
"      --energy-buffer S         history held in memory (default 3600)\n"
"      --energy-ipmi TARGET      BMC for the ipmi source: device (default /dev/ipmi0) or HOST[:PORT]\n"
"      --energy-ipmi-workarounds NAMES  ipmipower -W names for a BMC over the LAN\n"
"      --energy-redfish SPEC     BMC for the redfish source: HOST[:PORT][,chassis=PATH][,ca=FILE]\n"
"                                [,tls=insecure][,auth=basic]\n"
"      --energy-boot kernel|none|ID@EPOCH  whose boot overhead to count once (default kernel;\n"
"                                nodes sharing one kernel: none, or their own boot ID@EPOCH)\n"
"  -h, --help, -V, --version\n");
}

/* complain with the tools' one error printer, return -EINVAL */
#define fail mxq_invalid

static int parse_seconds(const char *opt, const char *arg, double min, double *ret)
{
	double v;

	if (mx_strtod(arg, &v) < 0 || v < min)
		return fail("%s: '%s' is not a number of seconds >= %g", opt, arg, min);
	*ret = v;
	return 0;
}

static int parse_options(int argc, char **argv, struct mxqd_server *s, struct options *o)
{
	enum {
		OPT_HOSTNAME = 256, OPT_TAGS, OPT_PREREQ, OPT_GPUS, OPT_TMPDIR, OPT_SPOOL, OPT_CGROUP_ROOT,
		OPT_MEMORY_HARD, OPT_CGROUP_V2_MOUNT,
		OPT_FOREGROUND, OPT_DAEMONIZE, OPT_PIDFILE, OPT_LOG, OPT_POLL, OPT_HEARTBEAT,
		OPT_CB_TIMEOUT, OPT_KILL_GRACE, OPT_RUNTIME_SCALE, OPT_DEBUG,
		OPT_POWER_MANAGER, OPT_POWER_CONFIG, OPT_CHECK_CONFIG, OPT_POWER_TICK, OPT_POWER_LEASE, OPT_POWER_POLL,
		OPT_POWER_EXEC, OPT_POWER_EXEC_TIMEOUT, OPT_POWEROFF_CMD, OPT_NO_POWER_NODE,
		OPT_POWER_NODE_TIMEOUT,
		OPT_PT_SECRETS, OPT_PT_RECONCILE, OPT_PT_SOFT_OFF, OPT_PT_IPMI_TIMEOUT, OPT_PT_IPMI_RETRIES,
		OPT_PT_IPMI_VERIFY, OPT_PT_WOL_PORT, OPT_PT_WOL_COUNT, OPT_PT_SSH_TIMEOUT, OPT_PT_SSH_DRAIN,
		OPT_PT_SSH_POWEROFF, OPT_PT_SSH_KNOWN_HOSTS, OPT_PT_REDFISH_TIMEOUT, OPT_PT_REDFISH_RETRIES,
		OPT_MIN_UID, OPT_ALLOW_ROOT_JOBS, OPT_SHARED_TMP,
	};
	enum { OPT_ENERGY = 4096 }; /* + enum mxqd_energy_opt: the --energy-* options */
	static const struct option opts[] = {
		{ "daemon-name",         required_argument, NULL, 'N' },
		{ "server-id",           required_argument, NULL, 'N' }, /* upstream name */
		{ "hostname",            required_argument, NULL, OPT_HOSTNAME },
		{ "slots",               required_argument, NULL, 'j' },
		{ "memory",              required_argument, NULL, 'm' },
		{ "max-time",            required_argument, NULL, 't' },
		{ "tags",                required_argument, NULL, OPT_TAGS },
		{ "prerequisites",       required_argument, NULL, OPT_PREREQ },
		{ "gpus",                required_argument, NULL, OPT_GPUS },
		{ "tmpdir",              required_argument, NULL, OPT_TMPDIR },
		{ "spool",               required_argument, NULL, OPT_SPOOL },
		{ "cgroup-root",         required_argument, NULL, OPT_CGROUP_ROOT },
		{ "memory-limit-hard",   required_argument, NULL, OPT_MEMORY_HARD },
		{ "cgroup-v2-mount",     required_argument, NULL, OPT_CGROUP_V2_MOUNT },
		{ "min-uid",             required_argument, NULL, OPT_MIN_UID },
		{ "allow-root-jobs",     no_argument,       NULL, OPT_ALLOW_ROOT_JOBS },
		{ "shared-tmp",          no_argument,       NULL, OPT_SHARED_TMP },
		{ "shared-dev-shm",      no_argument,       NULL, OPT_SHARED_TMP }, /* its older name */
		{ "mysql-default-file",  required_argument, NULL, 'M' },
		{ "mysql-default-group", required_argument, NULL, 'S' },
		{ "foreground",          no_argument,       NULL, OPT_FOREGROUND },
		{ "daemonize",           no_argument,       NULL, OPT_DAEMONIZE },
		{ "pid-file",            required_argument, NULL, OPT_PIDFILE },
		{ "log",                 required_argument, NULL, OPT_LOG },
		{ "poll-interval",       required_argument, NULL, OPT_POLL },
		{ "heartbeat-interval",  required_argument, NULL, OPT_HEARTBEAT },
		{ "callback-timeout",    required_argument, NULL, OPT_CB_TIMEOUT },
		{ "kill-grace",          required_argument, NULL, OPT_KILL_GRACE },
		{ "runtime-scale",       required_argument, NULL, OPT_RUNTIME_SCALE },
		{ "debug",               no_argument,       NULL, OPT_DEBUG },
		{ "power-manager",       no_argument,       NULL, OPT_POWER_MANAGER },
		{ "power-config",        required_argument, NULL, OPT_POWER_CONFIG },
		{ "check-config",        no_argument,       NULL, OPT_CHECK_CONFIG },
		{ "power-tick",          required_argument, NULL, OPT_POWER_TICK },
		{ "power-lease",         required_argument, NULL, OPT_POWER_LEASE },
		{ "power-poll",          required_argument, NULL, OPT_POWER_POLL },
		{ "power-exec-command",  required_argument, NULL, OPT_POWER_EXEC },
		{ "power-exec-timeout",  required_argument, NULL, OPT_POWER_EXEC_TIMEOUT },
		{ "power-node-timeout",  required_argument, NULL, OPT_POWER_NODE_TIMEOUT },
		{ "poweroff-command",    required_argument, NULL, OPT_POWEROFF_CMD },
		{ "no-power-node",       no_argument,       NULL, OPT_NO_POWER_NODE },
		{ "energy-sources",      required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_SOURCES },
		{ "energy-interval",     required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_INTERVAL },
		{ "energy-flush-interval", required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_FLUSH },
		{ "energy-sysfs-root",   required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_SYSFS_ROOT },
		{ "energy-model",        required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_MODEL },
		{ "energy-timeline",     no_argument,       NULL, OPT_ENERGY + MXQD_ENERGY_OPT_TIMELINE },
		{ "energy-retention",    required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_RETENTION },
		{ "energy-buffer",       required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_BUFFER },
		{ "energy-ipmi",         required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_IPMI },
		{ "energy-ipmi-workarounds", required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_IPMI_WORKAROUNDS },
		{ "energy-redfish",      required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_REDFISH },
		{ "energy-boot",         required_argument, NULL, OPT_ENERGY + MXQD_ENERGY_OPT_BOOT },
		{ "power-secrets",       required_argument, NULL, OPT_PT_SECRETS },
		{ "power-reconcile-interval", required_argument, NULL, OPT_PT_RECONCILE },
		{ "power-soft-off-deadline", required_argument, NULL, OPT_PT_SOFT_OFF },
		{ "power-ipmi-timeout",  required_argument, NULL, OPT_PT_IPMI_TIMEOUT },
		{ "power-ipmi-retries",  required_argument, NULL, OPT_PT_IPMI_RETRIES },
		{ "power-ipmi-verify",   required_argument, NULL, OPT_PT_IPMI_VERIFY },
		{ "power-redfish-timeout", required_argument, NULL, OPT_PT_REDFISH_TIMEOUT },
		{ "power-redfish-retries", required_argument, NULL, OPT_PT_REDFISH_RETRIES },
		{ "power-wol-port",      required_argument, NULL, OPT_PT_WOL_PORT },
		{ "power-wol-count",     required_argument, NULL, OPT_PT_WOL_COUNT },
		{ "power-ssh-timeout",   required_argument, NULL, OPT_PT_SSH_TIMEOUT },
		{ "power-ssh-drain-command", required_argument, NULL, OPT_PT_SSH_DRAIN },
		{ "power-ssh-poweroff-command", required_argument, NULL, OPT_PT_SSH_POWEROFF },
		{ "power-ssh-known-hosts", required_argument, NULL, OPT_PT_SSH_KNOWN_HOSTS },
		{ "help",                no_argument,       NULL, 'h' },
		{ "version",             no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	double secs;
	uint64_t u64;
	uint32_t u32;
	int c;

	while ((c = getopt_long(argc, argv, ":N:j:m:t:M:S:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'N': {
			/* it names the spool directory and the parent cgroup */
			char err[256];
			if (mx_hostname_check(optarg, err, sizeof(err)) < 0)
				return fail("--daemon-name: %s (the rule of host names)", err);
			s->daemon_name = optarg;
			break;
		}
		case OPT_HOSTNAME: {
			char err[256];
			if (mx_hostname_check(optarg, err, sizeof(err)) < 0)
				return fail("--hostname: %s", err);
			s->hostname = optarg;
			break;
		}
		case OPT_MIN_UID:
			if (mx_strtou32(optarg, &u32) < 0)
				return fail("--min-uid: '%s' is not a uid (a number)", optarg);
			s->min_uid = u32;
			break;
		case OPT_ALLOW_ROOT_JOBS: s->allow_root_jobs = true; break;
		case OPT_SHARED_TMP: s->shared_tmp = true; break;
		case 'j':
			if (mx_strtou32(optarg, &u32) < 0 || u32 == 0)
				return fail("--slots: '%s' is not a positive number", optarg);
			s->slots = u32;
			break;
		case 'm':
			if (mx_parse_size_mib(optarg, 'M', &u64) < 0 || u64 == 0)
				return fail("--memory: '%s' is not a size like 64G or 4096M", optarg);
			s->memory_mib = u64;
			break;
		case 't':
			if (mx_parse_runtime_min(optarg, &u64) < 0)
				return fail("--max-time: '%s' is not a time like 7d, 12h or 90m", optarg);
			s->maxtime_min = u64;
			break;
		case OPT_TAGS: s->tags_text = optarg; break;
		case OPT_PREREQ: s->prerequisites_text = optarg; break;
		case OPT_GPUS:
			if (mx_strtou32(optarg, &u32) < 0)
				return fail("--gpus: '%s' is not a number", optarg);
			s->gpus = u32;
			break;
		case OPT_TMPDIR: s->tmpdir = optarg; break;
		case OPT_SPOOL: s->spooldir = optarg; break;
		case OPT_CGROUP_ROOT: s->cgroup_root = optarg; break;
		case OPT_CGROUP_V2_MOUNT:
			if (optarg[0] != '/')
				return fail("--cgroup-v2-mount: '%s' is not an absolute path", optarg);
			s->cgroup_v2_mount = optarg;
			break;
		case OPT_MEMORY_HARD:
			if (mx_strtou32(optarg, &u32) < 0 || u32 < 100 || u32 > 1000)
				return fail("--memory-limit-hard: '%s' is not a percentage from 100 to 1000",
					    optarg);
			s->memory_hard_pct = u32;
			break;
		case 'M': s->db_defaults_file = optarg; break;
		case 'S': s->db_group = optarg; break;
		case OPT_FOREGROUND: o->daemonize = false; break;
		case OPT_DAEMONIZE: o->daemonize = true; break;
		case OPT_PIDFILE: o->pid_file = optarg; break;
		case OPT_LOG: o->log_file = optarg; break;
		case OPT_POLL:
			if (parse_seconds("--poll-interval", optarg, 0.01, &secs) < 0)
				return -EINVAL;
			s->poll_interval_ms = (unsigned)(secs * 1000);
			break;
		case OPT_HEARTBEAT:
			if (parse_seconds("--heartbeat-interval", optarg, 1, &secs) < 0)
				return -EINVAL;
			s->heartbeat_interval_s = (unsigned)secs;
			break;
		case OPT_CB_TIMEOUT:
			if (parse_seconds("--callback-timeout", optarg, 1, &secs) < 0)
				return -EINVAL;
			s->callback_timeout_s = (unsigned)secs;
			break;
		case OPT_KILL_GRACE:
			if (parse_seconds("--kill-grace", optarg, 0, &secs) < 0)
				return -EINVAL;
			s->kill_grace_s = (unsigned)secs;
			break;
		case OPT_RUNTIME_SCALE:
			if (mx_strtod(optarg, &secs) < 0 || secs <= 0)
				return fail("--runtime-scale: '%s' is not a positive factor", optarg);
			s->runtime_scale = secs;
			break;
		case OPT_DEBUG: o->debug = true; break;
		case OPT_POWER_MANAGER: o->power.manager = true; break;
		case OPT_POWER_CONFIG:
			o->power.config_path = optarg;
			o->power.config_path_given = true;
			break;
		case OPT_CHECK_CONFIG: o->power.check_config = true; break;
		case OPT_POWER_TICK:
			if (parse_seconds("--power-tick", optarg, 0.1, &o->power.tick_s) < 0)
				return -EINVAL;
			break;
		case OPT_POWER_POLL:
			if (parse_seconds("--power-poll", optarg, 0, &o->power.poll_s) < 0)
				return -EINVAL;
			if (o->power.poll_s > 0 && o->power.poll_s < 0.1)
				return fail("--power-poll: '%s' is below 0.1 s (0 turns polling off)", optarg);
			break;
		case OPT_POWER_LEASE:
			if (parse_seconds("--power-lease", optarg, 0.2, &o->power.lease_s) < 0)
				return -EINVAL;
			break;
		case OPT_POWER_EXEC:
			if (optarg[0] != '/' || access(optarg, X_OK) < 0)
				return fail("--power-exec-command: '%s' is not an absolute path to an executable", optarg);
			o->power.exec_command = optarg;
			break;
		case OPT_POWER_NODE_TIMEOUT:
			if (parse_seconds("--power-node-timeout", optarg, 1, &o->power.node_timeout_s) < 0)
				return -EINVAL;
			break;
		case OPT_POWER_EXEC_TIMEOUT:
			if (parse_seconds("--power-exec-timeout", optarg, 1, &secs) < 0)
				return -EINVAL;
			o->power.exec_timeout_s = (unsigned)secs;
			break;
		case OPT_POWEROFF_CMD: o->power.poweroff_command = optarg; break;
		case OPT_NO_POWER_NODE: o->power.node = false; break;
		case OPT_PT_SECRETS:
			o->power.secrets_path = optarg;
			o->power.secrets_path_given = true;
			break;
		case OPT_PT_RECONCILE:
			if (parse_seconds("--power-reconcile-interval", optarg, 0, &o->power.reconcile_s) < 0)
				return -EINVAL;
			break;
		case OPT_PT_SOFT_OFF:
			if (parse_seconds("--power-soft-off-deadline", optarg, 0, &o->power.soft_off_deadline_s) < 0)
				return -EINVAL;
			break;
		case OPT_PT_IPMI_TIMEOUT:
			if (parse_seconds("--power-ipmi-timeout", optarg, 0.1, &o->power.ipmi_timeout_s) < 0)
				return -EINVAL;
			break;
		case OPT_PT_IPMI_RETRIES:
			if (mx_strtou32(optarg, &u32) < 0 || u32 > 10)
				return fail("--power-ipmi-retries: '%s' is not a number from 0 to 10", optarg);
			o->power.ipmi_retries = u32;
			break;
		case OPT_PT_REDFISH_TIMEOUT:
			if (parse_seconds("--power-redfish-timeout", optarg, 0.1, &o->power.redfish_timeout_s) < 0)
				return -EINVAL;
			break;
		case OPT_PT_REDFISH_RETRIES:
			if (mx_strtou32(optarg, &u32) < 0 || u32 > 10)
				return fail("--power-redfish-retries: '%s' is not a number from 0 to 10", optarg);
			o->power.redfish_retries = u32;
			break;
		case OPT_PT_IPMI_VERIFY:
			if (parse_seconds("--power-ipmi-verify", optarg, 0, &o->power.ipmi_verify_s) < 0)
				return -EINVAL;
			break;
		case OPT_PT_WOL_PORT:
			if (mx_strtou32(optarg, &u32) < 0 || u32 == 0 || u32 > 65535)
				return fail("--power-wol-port: '%s' is not a UDP port", optarg);
			o->power.wol_port = u32;
			break;
		case OPT_PT_WOL_COUNT:
			if (mx_strtou32(optarg, &u32) < 0 || u32 == 0 || u32 > 100)
				return fail("--power-wol-count: '%s' is not a number from 1 to 100", optarg);
			o->power.wol_count = u32;
			break;
		case OPT_PT_SSH_TIMEOUT:
			if (parse_seconds("--power-ssh-timeout", optarg, 1, &secs) < 0)
				return -EINVAL;
			o->power.ssh_timeout_s = (unsigned)secs;
			break;
		case OPT_PT_SSH_DRAIN: o->power.ssh_drain_command = optarg; break;
		case OPT_PT_SSH_POWEROFF: o->power.ssh_poweroff_command = optarg; break;
		case OPT_PT_SSH_KNOWN_HOSTS: o->power.ssh_known_hosts = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("mxqd %s\n", MXQ_VERSION); exit(0);
		default:
			if (c >= OPT_ENERGY && c < OPT_ENERGY + MXQD_ENERGY_OPT__COUNT) {
				char err[256];
				if (mxqd_energy_option(&o->energy, c - OPT_ENERGY, optarg, err, sizeof(err)) < 0)
					return fail("%s", err);
				break;
			}
			mxq_complain_getopt(c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc)
		return fail("unexpected argument '%s' (try 'mxqd --help')", argv[optind]);
	return 0;
}

/* Fill defaults and derived values; the server's capabilities are built
 * here once and used by every qualification check. */
static int server_setup(struct mxqd_server *s)
{
	static char hostname[256], spool[4096];
	char errbuf[512], shortname[256];
	struct statvfs st;
	uint64_t tmpdir_total_mib = 0;
	int r;

	if (!s->hostname) {
		if (gethostname(hostname, sizeof(hostname)) < 0)
			return fail("cannot read this host's name: %s", strerror(errno));
		s->hostname = hostname;
		if (mx_hostname_check(hostname, errbuf, sizeof(errbuf)) < 0)
			return fail("this host's name: %s; give one with --hostname", errbuf);
	}
	mx_short_hostname(s->hostname, shortname, sizeof(shortname));
	s->short_hostname = strdup(shortname);
	if (!s->slots) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		s->slots = n > 0 ? (uint32_t)n : 1;
	}
	if (!s->memory_mib) {
		struct sysinfo si;
		if (sysinfo(&si) < 0)
			return fail("cannot read total memory: %s", strerror(errno));
		s->memory_mib = (uint64_t)si.totalram * si.mem_unit >> 20;
	}
	s->memory_per_slot_mib = s->memory_mib / s->slots;
	if (!s->spooldir) {
		snprintf(spool, sizeof(spool), LOCALSTATEDIR "/spool/mxqd/%s.%s", s->hostname, s->daemon_name);
		s->spooldir = spool;
	}
	s->is_root = geteuid() == 0;
	if (mx_boot_id(s->boot_id) < 0)
		snprintf(s->boot_id, sizeof(s->boot_id), "unknown");
	mx_proc_starttime(getpid(), &s->pid_starttime);

	/* jobs run as root here: nobody else may plant anything in these */
	if (mx_dir_ensure_safe(s->spooldir, geteuid(), errbuf, sizeof(errbuf)) < 0)
		return fail("--spool refused: %s", errbuf);
	if (mx_dir_ensure_safe(s->tmpdir, geteuid(), errbuf, sizeof(errbuf)) < 0)
		return fail("--tmpdir refused: %s", errbuf);
	if (statvfs(s->tmpdir, &st) == 0)
		tmpdir_total_mib = (uint64_t)st.f_blocks * st.f_frsize >> 20;

	r = mxq_server_caps_init(&s->caps, s->hostname, s->tags_text, s->prerequisites_text,
				 s->slots, s->memory_mib, s->maxtime_min, s->gpus, tmpdir_total_mib,
				 errbuf, sizeof(errbuf));
	if (r == -EINVAL)
		return fail("--prerequisites: %s", errbuf);
	if (r < 0)
		return fail("cannot set up: %s", strerror(-r));
	return 0;
}

/* Load the NSS modules for users and groups (nsswitch.conf: e.g. systemd)
 * once here: every reaper is a fork of mxqd and looks up its job's user
 * (getpwuid, initgroups); without this, each would load them again (about
 * 60 file opens per job). */
static void warm_up_nss(void)
{
	struct passwd *pw = getpwuid(getuid());
	gid_t groups[8];
	int n = 8;

	if (pw)
		getgrouplist(pw->pw_name, pw->pw_gid, groups, &n);
}

/* Containment: detect the cgroup layout once and say what it is. 0, or
 * -EBUSY when another mxqd holds this one's parent cgroup (logged). */
static int setup_cgroups(struct mxqd_server *s)
{
	char name[600], msg[8192], spool[PATH_MAX];
	enum mxqd_cgroup_layout layout = MXQD_CGROUP_NONE;
	int r;

	if (!s->cgroup_root[0]) {
		mx_log_notice("cgroups: off (--cgroup-root \"\"): jobs are contained by their session");
		return 0;
	}
	if (!s->is_root) {
		mx_log_notice("cgroups: off (mxqd is not root): jobs are contained by their session");
		return 0;
	}
	/* the spool directory is this daemon's alone (lock_spool) */
	if (!realpath(s->spooldir, spool))
		snprintf(spool, sizeof(spool), "%s", s->spooldir);
	mxqd_cgroup_parent_name(name, sizeof(name), s->hostname, s->daemon_name, spool);
	if (s->cgroup_v2_mount && (r = mxqd_cgroup_v2_mount(s->cgroup_root, s->cgroup_v2_mount)) < 0 &&
	    r != -EEXIST)
		mx_log_warning("cgroups: cannot mount cgroup2 on %s: %s", s->cgroup_v2_mount, strerror(-r));
	r = mxqd_cgroup_init(s->cgroup_root, name, &layout, msg, sizeof(msg));
	if (r < 0) {
		mx_log_err("cgroups: %s", msg);
		return r;
	}
	s->cgroups = layout != MXQD_CGROUP_NONE;
	mx_log_notice("cgroups: %s", msg);
	return 0;
}

/*
 * Whether a job can have temporary places of its own (mxqd_reaper.c): a
 * /dev/shm, and its tmpdir on /tmp and /var/tmp, except on one that holds
 * --tmpdir (the job's TMPDIR would be hidden below it). Tried once in a
 * child, as a job's would be, so that a kernel or container that refuses
 * it is said once, not at every job.
 */
static void setup_private_tmp(struct mxqd_server *s)
{
	int status = 0;
	pid_t pid;

	if (!s->is_root || s->shared_tmp)
		return;
	for (unsigned i = 0; i < MXQD_JOB_TMP_DIRS; i++) {
		s->private_tmp[i] = !mx_path_resolved_below(s->tmpdir, false, mxqd_job_tmp_dirs[i]);
		if (!s->private_tmp[i])
			mx_log_notice("jobs keep the host's %s: --tmpdir %s is in it (their TMPDIR "
				      "would be hidden below one of their own)", mxqd_job_tmp_dirs[i],
				      s->tmpdir);
	}
	pid = fork();
	if (pid == 0) {
		if (mxqd_job_private_dev_shm(64) < 0)
			_exit(1);
		for (unsigned i = 0; i < MXQD_JOB_TMP_DIRS; i++)
			if (s->private_tmp[i] && mxqd_job_bind_tmp(s->tmpdir, mxqd_job_tmp_dirs[i]) < 0)
				_exit(2);
		_exit(0);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2) {
		mx_log_warning("jobs keep the host's /tmp and /var/tmp: binding a directory on them "
			       "is refused here");
		for (unsigned i = 0; i < MXQD_JOB_TMP_DIRS; i++)
			s->private_tmp[i] = false;
	} else if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		mx_log_warning("jobs share the host's /dev/shm, /tmp and /var/tmp: a mount namespace "
			       "of their own is refused here (as with --shared-tmp)");
		s->shared_tmp = true;
	}
}

/*
 * Without -M (or $MXQ_MYSQL_DEFAULT_FILE) the daemon's credentials come from
 * MXQD_DB_FILE, root only; when that file does not exist, from the [mxqd]
 * group of the clients' file, as upstream MXQ did, with a warning when
 * others can read it (they could read the daemon's password).
 */
static void daemon_credentials(struct mxqd_server *s)
{
	struct stat st;

	if (s->db_defaults_file && *s->db_defaults_file)
		return;
	if (stat(MXQD_DB_FILE, &st) == 0) {
		s->db_defaults_file = MXQD_DB_FILE;
		return;
	}
	s->db_defaults_file = MX_DB_DEFAULT_FILE;
	if (stat(MX_DB_DEFAULT_FILE, &st) == 0 && (st.st_mode & 044))
		mx_log_warning("%s is missing: reading [%s] from %s, which group or others can read; "
			       "move the daemon's credentials to %s (mode 0600)", MXQD_DB_FILE,
			       s->db_group, MX_DB_DEFAULT_FILE, MXQD_DB_FILE);
}

/* What --check-config found, one line per file (the checks themselves
 * ran in mxqd_power_init(): syntax, and the secrets file's type, mode 0600
 * and owner). A missing default file is not "ok". */
static void check_config_report(const struct mxqd_power_options *p)
{
	struct stat st;

	if (stat(p->config_path, &st) < 0 && errno == ENOENT)
		printf("%s: not found, built-in defaults used\n", p->config_path);
	else
		printf("%s: ok\n", p->config_path);
	if (stat(p->secrets_path, &st) < 0 && errno == ENOENT)
		printf("%s: not found (ipmi and ssh hosts cannot be managed)\n", p->secrets_path);
	else
		printf("%s: ok (regular file, mode %04o, owner uid %u)\n", p->secrets_path,
		       (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
}

/* One mxqd per spool directory: two would reap each other's jobs. */
static int lock_spool(const struct mxqd_server *s)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/mxqd.lock", s->spooldir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail("cannot open %s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return fail("another mxqd already uses the spool directory %s (use --spool or --daemon-name)",
			    s->spooldir);
	return fd; /* kept open (and locked) for the daemon's lifetime */
}

static void tmpdir_bytes(const struct mxqd_server *s, uint64_t *total, uint64_t *avail)
{
	struct statvfs st;

	*total = *avail = 0;
	if (statvfs(s->tmpdir, &st) == 0) {
		*total = (uint64_t)st.f_blocks * st.f_frsize;
		*avail = (uint64_t)st.f_bavail * st.f_frsize;
	}
}

static int daemon_register(struct mxqd_server *s)
{
	struct mxq_daemon_reg reg = {
		.daemon_name = s->daemon_name, .hostname = s->hostname,
		.mxq_version = MXQ_VERSION, .boot_id = s->boot_id,
		.pid_starttime = (uint64_t)s->pid_starttime, .pid = (unsigned)getpid(),
		.slots = s->slots, .memory_mib = s->memory_mib, .maxtime_min = s->maxtime_min,
		.memory_per_slot_mib = s->memory_per_slot_mib,
		.tags = s->tags_text ? s->tags_text : "",
		.prerequisites = s->prerequisites_text ? s->prerequisites_text : "",
		.gpus = s->gpus,
	};
	int64_t n;
	int r;

	n = mxq_daemon_mark_crashed(s->db, s->hostname, s->daemon_name);
	if (n < 0)
		return (int)n;
	if (n > 0)
		mx_log_warning("marked %" PRId64 " earlier daemon row(s) of %s/%s CRASHED",
			       n, s->hostname, s->daemon_name);
	tmpdir_bytes(s, &reg.tmpdir_total_bytes, &reg.tmpdir_free_bytes);
	r = mxq_daemon_register(s->db, &reg, &s->daemon_id);
	if (r < 0)
		return r;
	mx_log_info("registered as daemon %" PRIu64 ": %s/%s, %u slots, %" PRIu64 " MiB, %u GPU(s)",
		    s->daemon_id, s->hostname, s->daemon_name, s->slots, s->memory_mib, s->gpus);
	{
		char err[512];
		if (mxqd_jobs_check_fd_limit(s, true, err, sizeof(err)) < 0)
			mx_log_err("%s", err);  /* only what opened since the first look */
	}
	return 0;
}

static int daemon_status(const struct mxqd_server *s)
{
	if (!s->accepting)
		return MXQ_DAEMON_STATUS_TERMINATING;
	if (s->jobs_running == 0)
		return MXQ_DAEMON_STATUS_IDLE;
	if (s->slots_running >= s->slots)
		return MXQ_DAEMON_STATUS_FULL;
	return MXQ_DAEMON_STATUS_RUNNING;
}

static int daemon_heartbeat(struct mxqd_server *s)
{
	struct mxq_daemon_load load = {
		.status = daemon_status(s), .jobs_running = s->jobs_running,
		.slots_running = s->slots_running, .threads_running = s->threads_running,
		.memory_used_mib = s->memory_running_mib, .gpus_used = s->gpus_running,
		.pause_reason = s->disk_fault ? s->disk_fault_reason :
				s->fds_full ? s->fds_full_reason : "",
	};

	tmpdir_bytes(s, &load.tmpdir_total_bytes, &load.tmpdir_free_bytes);
	return mxq_daemon_heartbeat(s->db, s->daemon_id, &load);
}

static int daemon_unregister(struct mxqd_server *s)
{
	return mxq_daemon_unregister(s->db, s->daemon_id, s->jobs_running, s->slots_running);
}

static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	setsid();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (mx_log_fd() != STDERR_FILENO)
			dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	return 0;
}

static int write_pid_file(const char *path)
{
	char tmp[4096];
	FILE *f;

	/* a fresh temporary name (O_EXCL, never through a symlink), renamed
	 * over PATH: whatever PATH was, it is replaced, not followed */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = mx_fopen_create_nofollow(tmp, true, 0644);
	if (!f)
		return -errno;
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		int r = -errno;

		unlink(tmp);  /* a full disk: not even the temporary file stays */
		return r;
	}
	return 0;
}

/* What the loop was told by signals. */
struct loop_state {
	bool quit_now;          /* SIGQUIT */
	bool db_ok;             /* no failure since the last retry */
	bool db_failing;        /* a failure was logged; no round has gone well since */
	bool db_lost;           /* ... and it was the connection (said when it is back) */
	unsigned backoff_s;
	uint64_t next_db_try_ms;
	uint64_t next_heartbeat_ms;
	bool paused_said;       /* the last heartbeat said a pause (disk fault, no
	                           room for descriptors) */
	bool disk_said;         /* ... and a disk fault (said at once) */
	uint64_t last_heartbeat_ms;
	uint64_t next_cancel_us;  /* mxqd_prof_now() clock */
	uint64_t db_connects;   /* mx_db's connect count at the last look */
	uint64_t db_faults;     /* and its server fault count */
};

/* Say once when the database layer reconnected, and to which server: any
 * statement reconnects after a lost connection, with a server list
 * possibly to another server. */
static void note_reconnect(struct mxqd_server *s, struct loop_state *ls)
{
	uint64_t n = mx_db_stats(s->db)->connects, f = mx_db_stats(s->db)->server_faults;

	if (f != ls->db_faults)
		mx_log_warning("database: %s", mx_db_last_fault(s->db));
	if (ls->db_connects && n != ls->db_connects)
		mx_log_notice("database: reconnected, now on server %s", mx_db_server(s->db));
	ls->db_connects = n;
	ls->db_faults = f;
}

static void handle_signal(struct mxqd_server *s, struct loop_state *ls, int sig)
{
	switch (sig) {
	case SIGTERM:
		mx_notify("STOPPING=1");
		if (s->accepting)
			mx_log_notice("SIGTERM: no new jobs; exiting when %u running job(s) are done",
				      s->jobs_running);
		s->accepting = false;
		mxqd_energy_shutdown_begins(s);
		break;
	case SIGINT:
		mx_notify("STOPPING=1");
		mx_log_notice("SIGINT: terminating %u running job(s), then exiting", s->jobs_running);
		s->accepting = false;
		mxqd_energy_shutdown_begins(s);
		mxqd_jobs_kill_all(s);
		break;
	case SIGQUIT:
		mx_notify("STOPPING=1");
		mx_log_notice("SIGQUIT: exiting now, %u job(s) keep running", s->jobs_running);
		ls->quit_now = true;
		break;
	case SIGHUP:
		mx_log_reopen();
		break;
	default:
		break;
	}
}

static void db_failed(struct mxqd_server *s, struct loop_state *ls, int r, const char *what)
{
	uint64_t now = mx_now_monotonic_ms();

	if (r == -EAGAIN) {
		/* a deadlock or Galera certification conflict that outlasted
		 * mx_db's retries: nothing was written, the connection is fine;
		 * the next round of the loop tries again */
		mx_log_info("database: %s lost a write conflict (%s); next round", what,
			    mx_db_error(s->db));
		return;
	}
	/* once until a round goes well: a server that answers but cannot take
	 * the writes (a full disk) fails again at every retry */
	if (!ls->db_failing)
		mx_log_err("database: %s failed: %s%s; retrying", what, mx_db_error(s->db),
			   mxqd_db_hint(r));
	ls->db_failing = true;
	ls->db_lost = ls->db_lost || r == -ENOTCONN;
	ls->db_ok = false;
	ls->backoff_s = ls->backoff_s ? (ls->backoff_s * 2 > 30 ? 30 : ls->backoff_s * 2) : 1;
	ls->next_db_try_ms = now + ls->backoff_s * 1000ULL;
}

/*
 * Connect, waiting for a database that is not reachable yet (a node that
 * boots during a database outage): retried with backoff doubling from 1 s
 * up to 30 s, forever; logged when waiting starts, when the reason
 * changes and when the database answers. SIGTERM/SIGINT (not blocked
 * yet) end the wait as they end mxqd.
 */
static int connect_waiting(struct mxqd_server *server)
{
	const char *cnf;
	char errbuf[1024], last[1024] = "";
	unsigned backoff_s = 1;
	int r;

	/* a missing client configuration is no outage: say so and stop */
	if ((r = mx_db_defaults_readable(server->db_defaults_file, &cnf)) < 0) {
		fail("database client configuration %s: %s", cnf, strerror(-r));
		return r;
	}
	for (;;) {
		r = mx_db_connect(&server->db, server->db_defaults_file, server->db_group, errbuf,
				  sizeof(errbuf));
		if (r == 0) {
			if (last[0])
				mx_log_notice("database reachable, starting");
			/* a schema of another version is no outage either */
			r = mxq_schema_check(server->db, true, errbuf, sizeof(errbuf));
			if (r < 0)
				fail("%s", errbuf);
			return r;
		}
		if (r == -ENOMEM)
			return r;
		if (strcmp(errbuf, last) != 0) {
			mx_log_warning("database not reachable: %s; waiting for it (retrying every "
				       "1 s to 30 s)", errbuf);
			snprintf(last, sizeof(last), "%s", errbuf);
		}
		sleep(backoff_s);
		backoff_s = backoff_s * 2 > 30 ? 30 : backoff_s * 2;
	}
}

static int serve(struct mxqd_server *s, const sigset_t *sigs)
{
	/* the first connect, before recovery, is no reconnect; one during
	 * recovery is (note_reconnect says so in the first turn) */
	struct loop_state ls = { .db_ok = true, .db_connects = 1 };

	s->accepting = true;
	for (;;) {
		uint64_t now = mx_now_monotonic_ms();
		struct timespec timeout;
		siginfo_t info;
		uint64_t t;
		int64_t running_in_ms;
		int r, sig;
		bool paused;

		if (!ls.db_ok && now >= ls.next_db_try_ms) {
			if (mx_db_ensure(s->db) == 0) {
				if (ls.db_lost) {
					mx_log_notice("database reachable again, resuming");
					ls.db_failing = false;
				}
				ls.db_lost = false;
				ls.db_ok = true;
				ls.next_heartbeat_ms = 0;
			} else {
				db_failed(s, &ls, -ENOTCONN, "reconnect");
			}
		}
		note_reconnect(s, &ls);
		if (ls.db_ok) {
			r = mxqd_jobs_reap(s);
			if (r < 0 && r != -ENOMEM)
				db_failed(s, &ls, r, "recording job outcomes");
		} else {
			mxqd_children_reap(s);
		}
		t = mxqd_prof_now();
		/* cancellations are read once per poll interval, not at every
		 * job end: a job cancelled while it starts is caught when its
		 * RUNNING is recorded */
		if (ls.db_ok && t >= ls.next_cancel_us) {
			if ((r = mxqd_jobs_handle_cancel(s)) < 0)
				db_failed(s, &ls, r, "reading cancellations");
			ls.next_cancel_us = t + s->poll_interval_ms * 1000ULL;
		}
		mxqd_jobs_escalate_kills(s);
		mxqd_jobs_disk_tick(s);
		mxqd_prof_add(MXQD_PROF_CANCEL, t);
		t = mxqd_prof_now();
		mxqd_energy_tick(s, ls.db_ok);
		mxqd_prof_add(MXQD_PROF_OTHER, t);
		if (ls.db_ok && s->accepting && (r = mxqd_jobs_start_some(s)) < 0)
			db_failed(s, &ls, r, "starting jobs");
		running_in_ms = ls.db_ok ? mxqd_jobs_record_running(s, false) : INT64_MAX;
		t = mxqd_prof_now();
		if (ls.db_ok) {
			r = mxqd_power_node_tick(s);
			if (r < 0)
				db_failed(s, &ls, r, "power state of this node");
			else if (r == 1) {
				ls.quit_now = true; /* this node powers off */
				mxqd_energy_shutdown_begins(s);
			}
		}
		if (ls.db_ok && (r = mxqd_power_leader_tick(s)) < 0)
			db_failed(s, &ls, r, "power manager tick");
		now = mx_now_monotonic_ms();
		/* a pause begun or ended is said at once; one for open files
		 * at most once a second (a node at its limit flips with every
		 * job that ends and the next that starts): the power manager
		 * counts a paused node as no capacity */
		mxqd_jobs_fds_recheck(s);
		paused = s->disk_fault || s->fds_full;
		if (ls.db_ok && (now >= ls.next_heartbeat_ms || s->disk_fault != ls.disk_said ||
				 (paused != ls.paused_said && now >= ls.last_heartbeat_ms + 1000))) {
			if ((r = daemon_heartbeat(s)) < 0) {
				db_failed(s, &ls, r, "heartbeat");
			} else {
				ls.paused_said = paused;
				ls.disk_said = s->disk_fault;
			}
			ls.last_heartbeat_ms = now;
			ls.next_heartbeat_ms = now + s->heartbeat_interval_s * 1000ULL;
		}
		mxqd_prof_add(MXQD_PROF_OTHER, t);
		if (ls.db_ok) {
			/* a whole round without a database failure */
			if (ls.db_failing)
				mx_log_notice("database: writes work again");
			ls.db_failing = false;
			ls.backoff_s = 0;
		}
		if (ls.quit_now) {
			/* jobs left running show RUNNING to the next mxqd and to users */
			if (ls.db_ok)
				mxqd_jobs_record_running(s, true);
			return 0;
		}
		if (!s->accepting && !s->jobs) {
			mx_log_notice("all jobs done");
			return 0;
		}

		{
			uint64_t wait_ms = s->poll_interval_ms, tick_ms = mxqd_power_next_tick_in_ms();
			if (tick_ms < wait_ms)
				wait_ms = tick_ms ? tick_ms : 1;
			if ((tick_ms = mxqd_energy_next_in_ms()) < wait_ms)
				wait_ms = tick_ms ? tick_ms : 1;
			if ((uint64_t)running_in_ms < wait_ms)
				wait_ms = running_in_ms ? (uint64_t)running_in_ms : 1;
			timeout.tv_sec = (time_t)(wait_ms / 1000);
			timeout.tv_nsec = (long)(wait_ms % 1000) * 1000000L;
		}
		t = mxqd_prof_now();
		sig = sigtimedwait(sigs, &info, &timeout);
		mxqd_prof_add(MXQD_PROF_WAIT, t);
		while (sig > 0) {
			handle_signal(s, &ls, sig);
			/* collect everything else that is pending before working again */
			timeout.tv_sec = 0;
			timeout.tv_nsec = 0;
			sig = sigtimedwait(sigs, &info, &timeout);
		}
	}
}

int main(int argc, char **argv)
{
	struct mxqd_server server = {
		.daemon_name = "main",
		.tmpdir = DEFAULT_TMPDIR,
		.min_uid = DEFAULT_MIN_UID,
		.cgroup_root = MXQD_CGROUP_DEFAULT_ROOT,
		.memory_hard_pct = 100,
		.db_group = MX_DB_GROUP_DAEMON,
		.poll_interval_ms = 1000,
		.heartbeat_interval_s = 10,
		.callback_timeout_s = 600,
		.kill_grace_s = 10,
		.runtime_scale = 1.0,
	};
	struct options opt = { 0 };
	char errbuf[8192];
	sigset_t sigs;
	int lock_fd, r;

	mx_log_set_program("mxqd");
	mxq_client_set_program("mxqd");
	/* directories it creates are 0755 whatever the caller's umask */
	umask(022);
	/* mxqd holds database and BMC credentials: no core files, no ptrace
	 * by a non-root user; jobs get the core limit back (mxqd_reaper.c) */
	getrlimit(RLIMIT_CORE, &server.job_core_limit);
	mxq_privs_harden();
	server.db_defaults_file = getenv("MXQ_MYSQL_DEFAULT_FILE");
	mxqd_power_options_init(&opt.power);
	mxqd_energy_options_init(&opt.energy);
	if (parse_options(argc, argv, &server, &opt) < 0)
		return 2;
	if (opt.power.check_config) {
		/* a check of a file that is not there must not read as "ok" */
		if (access(opt.power.config_path, F_OK) < 0) {
			fail("%s: %s; nothing to check%s", opt.power.config_path, strerror(errno),
			     opt.power.config_path_given ? "" :
			     " (without the file mxqd runs with the defaults of power.conf(5))");
			return 1;
		}
		if (mxqd_power_init(&server, &opt.power, errbuf, sizeof(errbuf)) < 0) {
			mxq_complain_lines(errbuf);
			return MXQ_EXIT_FAILURE;
		}
		check_config_report(&opt.power);
		return 0;
	}
	if (server_setup(&server) < 0)
		return 1;
	if (mxqd_power_init(&server, &opt.power, errbuf, sizeof(errbuf)) < 0) {
		mxq_complain_lines(errbuf);
		return 1;
	}
	if (opt.debug)
		mx_log_set_level(MX_LOG_DEBUG);
	if (opt.log_file && (r = mx_log_set_file(opt.log_file)) < 0) {
		fail("--log: cannot open %s: %s", opt.log_file, strerror(-r));
		return 1;
	}
	lock_fd = lock_spool(&server);
	if (lock_fd < 0)
		return 1;
	daemon_credentials(&server);
	if (opt.daemonize && (r = daemonize()) < 0) {
		fail("cannot daemonize: %s", strerror(-r));
		return 1;
	}
	if (opt.pid_file && (r = write_pid_file(opt.pid_file)) < 0) {
		fail("--pid-file: cannot write %s: %s", opt.pid_file, strerror(-r));
		return 1;
	}
	/* after daemonize: an init system must not wait for the database */
	if (connect_waiting(&server) < 0)
		return 1;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGQUIT);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR2);  /* a reaper reported its job's pid */
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* after daemonize: the BMC reader process is this process's child */
	opt.energy.secrets_path = opt.power.secrets_path;
	if (mxqd_energy_init(&server, &opt.energy, errbuf, sizeof(errbuf)) < 0) {
		fail("%s", errbuf);
		return 1;
	}
	mxqd_hooks_register(&mxqd_callback_hooks);
	warm_up_nss();
	if (mxqd_jobs_check_fd_limit(&server, false, errbuf, sizeof(errbuf)) < 0) {
		fail("%s", errbuf);
		return 1;
	}
	/* once nothing can stop the start any more: no parent cgroups left
	 * behind by an mxqd that could not start */
	if (setup_cgroups(&server) < 0)
		return 1;
	setup_private_tmp(&server);

	r = daemon_register(&server);
	if (r < 0) {
		mx_log_err("cannot register in mxq_daemon: %s", mx_db_error(server.db));
		if (server.cgroups)
			mxqd_cgroup_fini();
		return 1;
	}
	/* not serving before the jobs an earlier mxqd left here are known:
	 * their slots would be given out again and their ends never recorded
	 * (jobs listed by a call that failed later are skipped: asking again
	 * is safe) */
	for (int tries = 1; (r = mxqd_jobs_recover(&server)) < 0; tries++) {
		if (tries == 30) {
			mx_log_err("cannot look up the jobs an earlier mxqd left on this host: %s; "
				   "not serving (check the database, then start mxqd again)",
				   mx_db_error(server.db));
			daemon_unregister(&server);
			if (server.cgroups)
				mxqd_cgroup_fini();
			return 1;
		}
		if (tries == 1)
			mx_log_warning("recovery: cannot look up the jobs an earlier mxqd left on "
				       "this host: %s; asking again every 2 s for a minute",
				       mx_db_error(server.db));
		mx_sleep_ms(2000);
	}
	mxqd_energy_adopt(&server);
	r = mxqd_power_node_register(&server);
	if (r < 0)
		mx_log_err("power: cannot register this node in mxq_power: %s (is the schema upgraded? "
			   "run mxqadmin db upgrade)", mx_db_error(server.db));
	/* registered: the power manager and `systemctl start` may count on us */
	if (opt.daemonize)
		snprintf(errbuf, sizeof(errbuf), "READY=1\nMAINPID=%d", (int)getpid());
	else
		snprintf(errbuf, sizeof(errbuf), "READY=1");
	if ((r = mx_notify(errbuf)) < 0)
		mx_log_warning("cannot notify the service manager ($NOTIFY_SOCKET): %s", strerror(-r));

	serve(&server, &sigs);
	mxqd_prof_log();
	mxqd_energy_fini(&server);
	mxqd_power_fini(&server);

	if (daemon_unregister(&server) < 0)
		mx_log_err("cannot mark daemon %" PRIu64 " EXITED: %s", server.daemon_id,
			   mx_db_error(server.db));
	{
		const struct mx_db_stats *st = mx_db_stats(server.db);
		mx_log_info("database: %" PRIu64 " connect(s), %" PRIu64 " to another server,"
			    " %" PRIu64 " write conflict(s) retried, %" PRIu64 " given up",
			    st->connects, st->failovers, st->retries, st->deadlocks);
	}
	mx_log_info("exiting (%u job(s) left running)", server.jobs_running);
	if (opt.pid_file)
		unlink(opt.pid_file);
	mxqd_jobs_free_all(&server);
	if (server.cgroups)
		mxqd_cgroup_fini();
	mxq_server_caps_done(&server.caps);
	mx_db_close(server.db);
	free(server.short_hostname);
	close(lock_fd);
	return 0;
}
