/*
 * mxq_power_json - managed nodes of a power snapshot as JSON objects.
 */
#ifndef MXQ_POWER_JSON_H
#define MXQ_POWER_JSON_H

#include <jansson.h>
#include <stdint.h>

#include "mxq_power_db.h"

/* Since when node N has been idle (DB clock seconds), or -1 when it is not
 * idle (not ON, or running jobs). */
int64_t mxq_power_node_idle_since(const struct mxq_power_node *n);

/*
 * Node I of snapshot S: hostname, state, state_since, slots, watts, flags,
 * transports, failures, reason and explanation (field names as documented
 * in mxqadmin(8), power list --json). New reference, NULL on ENOMEM.
 */
json_t *mxq_power_node_json(const struct mxq_power_db_snapshot *s, size_t i);

#endif
