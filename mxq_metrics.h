/*
 * mxq_metrics - node and cluster energy metrics, Prometheus text format.
 */
#ifndef MXQ_METRICS_H
#define MXQ_METRICS_H

#include <stdio.h>

struct mx_db;

/*
 * Write every metric (HELP, TYPE and samples) to OUT. Returns 0, -ENOMEM,
 * -EIO when OUT reported an error, or the negative errno of a failed query
 * (mx_db_error() has the message); after an error OUT may hold a part.
 */
int mxq_metrics_write(struct mx_db *db, FILE *out);

#endif
