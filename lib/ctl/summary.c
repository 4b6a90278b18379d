/* SPDX-License-Identifier: MIT */
/* A peer's summary line (the receiver's or sender's summary a txscale
 * server or client hands over) as the other side takes it: every count is
 * a whole number >= 0 or the message is refused, and a receiver summary
 * whose parts do not add up loses its "lost_exact" (with "not_exact"
 * saying why), so nobody prints a figure as exact that is not. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "ctl_priv.h"

static const char *const recv_counts[] = { "received", "lost",     "duplicates", "reordered", "malformed",
					   "late",     "unique",   "unsequenced", "bytes",   "ignored",
					   "overflow", "expected", "excess",     "sender_drops", "resyncs", NULL };
static const char *const send_counts[] = { "packets", "bytes", "drops", "errors", "frames", NULL };

static bool count(json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	*out = 0;
	if (!v || !json_is_integer(v))
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

int txs_ctl_summary_check(json_t *o, const char *kind, const char *where, char *err, size_t errlen)
{
	bool recv = strcmp(kind, "recv") == 0;
	for (const char *const *k = recv ? recv_counts : send_counts; *k; k++) {
		json_t *v = json_object_get(o, *k);
		if (!v || (json_is_null(v) && strcmp(*k, "expected") == 0))
			continue;
		if (!json_is_integer(v))
			return txs_ctl_fail(err, errlen, -EPROTO, "malformed message: %s.%s is not a whole number", where,
					    *k);
		if (json_integer_value(v) < 0)
			return txs_ctl_fail(err, errlen, -EPROTO, "malformed message: %s.%s is negative", where, *k);
	}
	if (!recv)
		return 0;
	uint64_t received, unique, dup, late, unseq, over, lost, expected, excess;
	char why[160] = "";
	if (count(o, "received", &received) && count(o, "unique", &unique) && count(o, "duplicates", &dup) &&
	    count(o, "late", &late)) {
		count(o, "unsequenced", &unseq);
		count(o, "overflow", &over);
		__extension__ unsigned __int128 parts = (unsigned __int128)unique + dup + late + unseq + over;
		if (parts != received)
			snprintf(why, sizeof(why), "received %llu is not unique + duplicates + late + unsequenced + overflow",
				 (unsigned long long)received);
	}
	if (!why[0] && json_is_true(json_object_get(o, "lost_exact"))) {
		if (!count(o, "expected", &expected) || !count(o, "unique", &unique) || !count(o, "lost", &lost))
			snprintf(why, sizeof(why), "exact, but without expected, unique and lost");
		else {
			count(o, "excess", &excess);
			__extension__ unsigned __int128 a = (unsigned __int128)unique + lost, b = (unsigned __int128)expected + excess;
			if (a != b)
				snprintf(why, sizeof(why), "unique + lost (%llu + %llu) is not expected + excess",
					 (unsigned long long)unique, (unsigned long long)lost);
		}
	}
	if (why[0] && (json_object_set_new(o, "lost_exact", json_false()) ||
		       json_object_set_new(o, "not_exact", json_string(why))))
		return -ENOMEM;
	return 0;
}
