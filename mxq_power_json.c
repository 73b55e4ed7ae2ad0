/*
 * mxq_power_json - a managed node as one JSON object (jansson), the form
 * `mxqadmin power list --json`, `explain HOST --json` and mxq-web's
 * /api/nodes share, so a field means the same everywhere.
 *
 * Errors: NULL on allocation failure. Nothing here logs.
 */
#include <jansson.h>
#include <stdint.h>

#include "mxq_json.h"
#include "mxq_power_db.h"
#include "mxq_power_json.h"
#include "mx_util.h"

static const char *state_name(enum mxq_power_node_state state)
{
	const char *name = mxq_power_state_to_string(state);
	return name ? name : "?";
}

int64_t mxq_power_node_idle_since(const struct mxq_power_node *n)
{
	if (n->state != MXQ_POWER_ON || n->jobs_running > 0)
		return -1;
	return n->last_job_end > n->state_since ? n->last_job_end : n->state_since;
}

json_t *mxq_power_node_json(const struct mxq_power_db_snapshot *s, size_t i)
{
	const struct mxq_power_node *n = &s->nodes[i];
	const struct mxq_power_host *h = &s->hosts[i];
	int64_t since = mxq_power_node_idle_since(n);
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "hostname", json_string(n->hostname));
	{
		/* the leader never actuates a row whose name breaks the --hostname rule */
		char err[256];
		json_object_set_new(o, "hostname_valid",
				    json_boolean(mx_hostname_check(n->hostname, err, sizeof(err)) == 0));
	}
	json_object_set_new(o, "state", json_string(state_name(n->state)));
	mxq_json_set_time(o, "state_since", (double)n->state_since);
	json_object_set_new(o, "state_age_s", json_integer(s->now - n->state_since));
	json_object_set_new(o, "jobs_running", json_integer(n->jobs_running));
	json_object_set_new(o, "slots_used", json_integer(n->used_slots));
	json_object_set_new(o, "slots_total", json_integer(h->slots_total));
	json_object_set_new(o, "idle_s", since < 0 ? json_null() : json_integer(s->now - since));
	mxq_json_set_time(o, "last_job_end", (double)n->last_job_end);
	json_object_set_new(o, "current_watts", json_real(h->current_watts));
	json_object_set_new(o, "efficiency_rank", json_integer(n->efficiency_rank));
	json_object_set_new(o, "node_class", mxq_json_text(n->node_class));
	json_object_set_new(o, "transport_on", mxq_json_text(h->transport_on));
	json_object_set_new(o, "transport_off", mxq_json_text(h->transport_off));
	json_object_set_new(o, "admin_off", json_boolean(n->admin_off));
	json_object_set_new(o, "excluded", json_boolean(n->excluded));
	json_object_set_new(o, "admin_request", mxq_json_text(h->admin_request));
	json_object_set_new(o, "admin_request_reason", mxq_json_text(h->admin_request_reason));
	json_object_set_new(o, "failure_count", json_integer(n->failure_count));
	json_object_set_new(o, "failure_reason", mxq_json_text(n->failure_reason));
	json_object_set_new(o, "cycles_today", json_integer(n->cycles_today));
	json_object_set_new(o, "registered", json_boolean(h->has_daemon));
	json_object_set_new(o, "reason", json_string(h->reason ? h->reason : ""));
	json_object_set_new(o, "explanation", json_string(h->explanation ? h->explanation : ""));
	return o;
}
