/*
 * fuzz_state - libFuzzer target for the leader's saved policy state
 * (mxq_power_leader.policy_state), the one line a new leader and mxqadmin
 * read back: mxq_power_state_from_text().
 *
 * For every input (as a NUL-terminated string) that parses: at most
 * MXQ_POWER_LEARN_CLASSES learned classes, every counted weight and length
 * finite and not negative; the idle time learned from them lies among the
 * candidates; and writing the state out and reading it again is stable
 * from the first round on (text -> state -> text -> state -> text gives the
 * same text twice). Any disagreement aborts.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mxq_power_policy.h"
#include "fuzz.h"

static void check_state(const struct mxq_power_state *st, const struct mxq_power_config *cfg)
{
	int64_t horizon = mxq_power_gap_edge(cfg, MXQ_POWER_GAP_EDGES - 1);

	if (st->n_learn > MXQ_POWER_LEARN_CLASSES)
		abort();
	for (uint32_t k = 0; k < st->n_learn; k++) {
		const struct mxq_power_gap_learn *l = &st->learn[k];
		for (size_t j = 0; j <= MXQ_POWER_GAP_EDGES; j++)
			if (!isfinite(l->weight[j]) || l->weight[j] < 0.0 ||
			    (j < MXQ_POWER_GAP_EDGES && (!isfinite(l->length[j]) || l->length[j] < 0.0)))
				abort();
		int64_t t = mxq_power_gap_idle_time(cfg, l);
		if (t < 0 || t > horizon)
			abort();
		if (mxq_power_idle_time_for(cfg, st, l->node_class) < 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mxq_power_config cfg;
	struct mxq_power_state st, again;
	char *text = fuzz_text(data, size);
	char one[1001], two[1001];

	if (!text)
		return 0;
	mxq_power_config_defaults(&cfg);
	if (mxq_power_state_from_text(text, &st) == 0) {
		check_state(&st, &cfg);
		if (mxq_power_state_to_text(&st, one, sizeof(one)) < 0 ||
		    mxq_power_state_from_text(one, &again) != 0)
			abort();
		check_state(&again, &cfg);
		if (mxq_power_state_to_text(&again, two, sizeof(two)) < 0 ||
		    mxq_power_state_from_text(two, &again) != 0 ||
		    mxq_power_state_to_text(&again, one, sizeof(one)) < 0 || strcmp(one, two) != 0)
			abort();
	}
	mxq_power_config_done(&cfg);
	free(text);
	return 0;
}
