/*
 * mxq_metrics - the node and cluster energy metrics in the Prometheus text
 * exposition format, as `mxqadmin power metrics` prints them for the node
 * exporter's textfile collector and mxq-web serves them on /metrics.
 *
 * Reads mxq_power (one row per node) and the running jobs' energy rows;
 * a node that is OFF or FAILED counts 0 W whatever its mxqd wrote last.
 * Label values are escaped as the format requires.
 *
 * Errors: negative errno; the database's message via mx_db_error(). Nothing
 * is written to the database, nothing logged.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "mx_db.h"
#include "mx_util.h"
#include "mxq_metrics.h"

/* A Prometheus label value: backslash, quote and newline escaped. */
static void print_label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

enum node_col { N_HOST, N_WATTS, N_TOTAL, N_JOBS, N_IDLE, N_BOOT, N_SHUTDOWN, N_UNUSED, N_AGE };

static const struct {
	const char *name, *type, *help;
	enum node_col col;
} node_metrics[] = {
	{ "mxq_node_power_watts", "gauge", "Power of the node at its mxqd's last flush.", N_WATTS },
	{ "mxq_node_energy_joules_total", "counter", "Energy measured on the node.", N_TOTAL },
	{ "mxq_node_energy_jobs_joules_total", "counter", "Part of it attributed to jobs.", N_JOBS },
	{ "mxq_node_energy_idle_joules_total", "counter",
	  "Part of it with free slots or no jobs (idle).", N_IDLE },
	{ "mxq_node_energy_boot_joules_total", "counter",
	  "Overhead: energy of boots (estimated).", N_BOOT },
	{ "mxq_node_energy_shutdown_joules_total", "counter",
	  "Overhead: draining and stopping with no jobs.", N_SHUTDOWN },
	{ "mxq_node_energy_updated_timestamp_seconds", "gauge",
	  "When the node's mxqd last wrote its energy (Unix time).", N_AGE },
};

struct node_row {
	char host[65];
	double v[N_AGE + 1];
};

int mxq_metrics_write(struct mx_db *db, FILE *out)
{
	struct mx_db_result *res = NULL;
	struct node_row *rows = NULL;
	double cluster[N_AGE + 1] = { 0 };
	double running_j = 0;
	uint64_t running = 0;
	size_t n_rows = 0;
	int64_t n;

	/* a node that is off draws nothing, whatever its mxqd wrote last */
	n = mx_db_query(db, &res,
		"SELECT hostname, IF(state IN ('OFF', 'FAILED'), 0, current_watts), energy_joules,"
		" energy_jobs_joules, energy_idle_joules, energy_boot_joules, energy_shutdown_joules,"
		" 0, UNIX_TIMESTAMP(energy_updated_at)"
		" FROM mxq_power WHERE energy_updated_at IS NOT NULL ORDER BY hostname", NULL);
	if (n < 0)
		return (int)n;
	rows = calloc((size_t)n + 1, sizeof(*rows));
	if (!rows) {
		mx_db_result_free(res);
		return -ENOMEM;
	}
	while (mx_db_next(res)) {
		struct node_row *r = &rows[n_rows++];
		snprintf(r->host, sizeof(r->host), "%s", mx_db_str(res, N_HOST));
		for (unsigned c = N_WATTS; c <= N_AGE; c++)
			r->v[c] = mx_db_double(res, c);
	}
	mx_db_result_free(res);
	res = NULL;
	n = mx_db_query(db, &res, "SELECT COUNT(*), COALESCE(SUM(energy_j), 0) FROM mxq_power_job"
			" WHERE date_end IS NULL", NULL);
	if (n < 0) {
		free(rows);
		return (int)n;
	}
	if (mx_db_next(res)) {
		running = mx_db_u64(res, 0);
		running_j = mx_db_double(res, 1);
	}
	mx_db_result_free(res);

	for (size_t m = 0; m < MX_ARRAY_SIZE(node_metrics); m++) {
		enum node_col col = node_metrics[m].col;

		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", node_metrics[m].name, node_metrics[m].help,
		       node_metrics[m].name, node_metrics[m].type);
		for (size_t i = 0; i < n_rows; i++) {
			fprintf(out, "%s{host=\"", node_metrics[m].name);
			print_label(out, rows[i].host);
			fprintf(out, "\"} %.3f\n", rows[i].v[col]);
			cluster[col] += rows[i].v[col];
		}
	}
	free(rows);
	fprintf(out, "# HELP mxq_cluster_power_watts Sum of the nodes' power.\n"
	       "# TYPE mxq_cluster_power_watts gauge\nmxq_cluster_power_watts %.3f\n", cluster[N_WATTS]);
	fprintf(out, "# HELP mxq_cluster_energy_joules_total Energy measured on all nodes.\n"
	       "# TYPE mxq_cluster_energy_joules_total counter\nmxq_cluster_energy_joules_total %.3f\n",
	       cluster[N_TOTAL]);
	fprintf(out, "# HELP mxq_cluster_energy_jobs_joules_total Energy attributed to jobs on all nodes.\n"
	       "# TYPE mxq_cluster_energy_jobs_joules_total counter\n"
	       "mxq_cluster_energy_jobs_joules_total %.3f\n", cluster[N_JOBS]);
	fprintf(out, "# HELP mxq_cluster_energy_overhead_joules_total Idle, boot and shutdown energy on all nodes.\n"
	       "# TYPE mxq_cluster_energy_overhead_joules_total counter\n"
	       "mxq_cluster_energy_overhead_joules_total{kind=\"idle\"} %.3f\n"
	       "mxq_cluster_energy_overhead_joules_total{kind=\"boot\"} %.3f\n"
	       "mxq_cluster_energy_overhead_joules_total{kind=\"shutdown\"} %.3f\n",
	       cluster[N_IDLE], cluster[N_BOOT], cluster[N_SHUTDOWN]);
	fprintf(out, "# HELP mxq_cluster_running_jobs_energy_joules Energy so far of the jobs running now.\n"
	       "# TYPE mxq_cluster_running_jobs_energy_joules gauge\n"
	       "mxq_cluster_running_jobs_energy_joules %.3f\n", running_j);
	fprintf(out, "# HELP mxq_cluster_running_jobs_measured Running jobs with an energy row.\n"
	       "# TYPE mxq_cluster_running_jobs_measured gauge\n"
	       "mxq_cluster_running_jobs_measured %" PRIu64 "\n", running);
	return ferror(out) ? -EIO : 0;
}
