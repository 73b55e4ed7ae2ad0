/*
 * mxq_status - string tables for the status codes of mxq_status.h.
 */
#define _GNU_SOURCE
#include "mxq_status.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mx_util.h"

struct status_name {
	int code;
	const char *name;
	const char *category;
};

static const struct status_name job_status_names[] = {
	{ MXQ_JOB_STATUS_INQ,         "INQ",         "inq" },
	{ MXQ_JOB_STATUS_ASSIGNED,    "ASSIGNED",    "running" },
	{ MXQ_JOB_STATUS_LOADED,      "LOADED",      "running" },
	{ MXQ_JOB_STATUS_RUNNING,     "RUNNING",     "running" },
	{ MXQ_JOB_STATUS_UNKNOWN_RUN, "UNKNOWN_RUN", "running" },
	{ MXQ_JOB_STATUS_EXTRUNNING,  "EXTRUNNING",  "running" },
	{ MXQ_JOB_STATUS_STOPPED,     "STOPPED",     "running" },
	{ MXQ_JOB_STATUS_KILLING,     "KILLING",     "running" },
	{ MXQ_JOB_STATUS_KILLED,      "KILLED",      "failed" },
	{ MXQ_JOB_STATUS_FAILED,      "FAILED",      "failed" },
	{ MXQ_JOB_STATUS_UNKNOWN_PRE, "UNKNOWN_PRE", "unknown" },
	{ MXQ_JOB_STATUS_CANCELLING,  "CANCELLING",  "running" },
	{ MXQ_JOB_STATUS_CANCELLED,   "CANCELLED",   "cancelled" },
	{ MXQ_JOB_STATUS_UNKNOWN,     "UNKNOWN",     "unknown" },
	{ MXQ_JOB_STATUS_FINISHED,    "FINISHED",    "finished" },
	{ MXQ_JOB_STATUS_EXIT,        "EXIT",        "failed" },
};

static const struct status_name group_status_names[] = {
	{ MXQ_GROUP_STATUS_OK,        "OK",        NULL },
	{ MXQ_GROUP_STATUS_CANCELLED, "CANCELLED", NULL },
};

static const struct status_name daemon_status_names[] = {
	{ MXQ_DAEMON_STATUS_IDLE,        "IDLE",        NULL },
	{ MXQ_DAEMON_STATUS_RUNNING,     "RUNNING",     NULL },
	{ MXQ_DAEMON_STATUS_WAITING,     "WAITING",     NULL },
	{ MXQ_DAEMON_STATUS_FULL,        "FULL",        NULL },
	{ MXQ_DAEMON_STATUS_BACKFILL,    "BACKFILL",    NULL },
	{ MXQ_DAEMON_STATUS_CPUOPTIMAL,  "CPUOPTIMAL",  NULL },
	{ MXQ_DAEMON_STATUS_TERMINATING, "TERMINATING", NULL },
	{ MXQ_DAEMON_STATUS_EXITED,      "EXITED",      NULL },
	{ MXQ_DAEMON_STATUS_CRASHED,     "CRASHED",     NULL },
};

static const struct status_name *lookup(const struct status_name *table, size_t n, int code)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].code == code)
			return &table[i];
	return NULL;
}

const char *mxq_job_status_to_name(int status)
{
	const struct status_name *s = lookup(job_status_names, MX_ARRAY_SIZE(job_status_names), status);
	return s ? s->name : NULL;
}

int mxq_job_status_from_name(const char *name)
{
	uint32_t code;

	for (size_t i = 0; i < MX_ARRAY_SIZE(job_status_names); i++)
		if (strcasecmp(job_status_names[i].name, name) == 0)
			return job_status_names[i].code;
	if (mx_strtou32(name, &code) == 0 && mxq_job_status_to_name((int)code))
		return (int)code;
	return -EINVAL;
}

const char *mxq_group_status_to_name(int status)
{
	const struct status_name *s = lookup(group_status_names, MX_ARRAY_SIZE(group_status_names), status);
	return s ? s->name : NULL;
}

const char *mxq_daemon_status_to_name(int status)
{
	const struct status_name *s = lookup(daemon_status_names, MX_ARRAY_SIZE(daemon_status_names), status);
	return s ? s->name : NULL;
}

const char *mxq_job_status_category(int status)
{
	const struct status_name *s = lookup(job_status_names, MX_ARRAY_SIZE(job_status_names), status);
	return s ? s->category : "unknown";
}

bool mxq_job_status_is_terminal(int status)
{
	const char *c = mxq_job_status_category(status);
	return strcmp(c, "inq") != 0 && strcmp(c, "running") != 0;
}

bool mxq_job_status_is_active(int status)
{
	return strcmp(mxq_job_status_category(status), "running") == 0;
}
