/*
 * mxq_privs - privileges of the client tools (see mxq_privs.h).
 *
 * The ids are read once in mxq_privs_init(); set-id means "started with a
 * real uid/gid other than the effective one". Only setresuid()/setresgid()
 * are used, so the saved ids say exactly what can be taken back. After
 * every change of the effective ids the kernel resets "dumpable" to
 * fs.suid_dumpable; we set it to 0 again regardless. Nothing here logs.
 */
#define _GNU_SOURCE
#include "mxq_privs.h"

#include <errno.h>
#include <malloc.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mx_util.h"

extern char **environ;

static bool setid;
static uid_t real_uid, saved_uid;
static gid_t real_gid, saved_gid;

void mxq_privs_harden(void)
{
	struct rlimit none = { 0, 0 };

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	setrlimit(RLIMIT_CORE, &none);
	/* freed memory is overwritten: the client library reads the
	 * credentials file through buffers it frees, and a process forked
	 * later (mxqd's reapers) would otherwise inherit the password in a
	 * free heap chunk; live copies are wiped where they are known */
	mallopt(M_PERTURB, 0xa5);
}

/* Remove what the MariaDB client library would take from a caller. */
static void strip_db_environment(void)
{
	static const char *const prefixes[] = { "MYSQL", "MARIADB", "LIBMYSQL" };

	for (size_t i = 0; environ && environ[i];) {
		const char *e = environ[i], *eq = strchr(e, '=');
		bool drop = false;

		for (size_t p = 0; p < MX_ARRAY_SIZE(prefixes) && !drop; p++)
			drop = strncmp(e, prefixes[p], strlen(prefixes[p])) == 0;
		if (drop && eq) {
			char *name = strndup(e, (size_t)(eq - e));

			if (!name || unsetenv(name) < 0) {
				fprintf(stderr, "cannot clear the environment variable %.40s...\n", e);
				_exit(1);
			}
			free(name);
			continue;       /* environ[i] is now the next entry */
		}
		i++;
	}
}

void mxq_privs_init(void)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;

	getresuid(&ruid, &euid, &suid);
	getresgid(&rgid, &egid, &sgid);
	real_uid = ruid;
	real_gid = rgid;
	saved_uid = euid;
	saved_gid = egid;
	setid = ruid != euid || rgid != egid;
	if (!setid)
		return;
	strip_db_environment();
	mxq_privs_harden();
	/* effective = caller; the elevated ids stay saved for mxq_privs_raise() */
	if (setresgid((gid_t)-1, rgid, (gid_t)-1) < 0 || setresuid((uid_t)-1, ruid, (uid_t)-1) < 0) {
		fprintf(stderr, "cannot switch to the caller's identity: %s\n", strerror(errno));
		_exit(1);
	}
	mxq_privs_harden();
}

bool mxq_privs_setid(void)
{
	return setid;
}

int mxq_privs_raise(void)
{
	if (!setid)
		return 0;
	if (setresgid((gid_t)-1, saved_gid, (gid_t)-1) < 0 ||
	    setresuid((uid_t)-1, saved_uid, (uid_t)-1) < 0)
		return -errno;
	mxq_privs_harden();
	return 0;
}

int mxq_privs_drop(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (!setid)
		return 0;
	/* gid first: once the uid is the caller's, the saved gid could not go */
	if (setresgid(real_gid, real_gid, real_gid) < 0 || setresuid(real_uid, real_uid, real_uid) < 0)
		return -errno;
	getresuid(&ru, &eu, &su);
	getresgid(&rg, &eg, &sg);
	if (ru != real_uid || eu != real_uid || su != real_uid ||
	    rg != real_gid || eg != real_gid || sg != real_gid)
		return -EPERM;
	mxq_privs_harden();
	return 0;
}

const char *mxq_privs_admin_group(void)
{
	const char *env = getenv("MXQ_ADMIN_GROUP");

	if (!setid && env && *env)
		return env;
	return MXQ_ADMIN_GROUP;
}

int mxq_privs_check_admin(const char *group, char *err, size_t errlen)
{
	struct group grbuf, *gr = NULL;
	char buf[16384];
	gid_t groups[256];
	int n;

	if (getuid() == 0)
		return 0;
	if (getgrnam_r(group, &grbuf, buf, sizeof(buf), &gr) == 0 && gr) {
		if (getgid() == gr->gr_gid)
			return 0;
		n = getgroups((int)MX_ARRAY_SIZE(groups), groups);
		for (int i = 0; i < n; i++)
			if (groups[i] == gr->gr_gid)
				return 0;
	}
	snprintf(err, errlen, "only root and members of the group '%s' may do that "
		 "(ask an administrator)", group);
	return -EPERM;
}
