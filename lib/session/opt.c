/* SPDX-License-Identifier: MIT */
/* Option values as users write them, into a table's config struct: the one
 * parser behind the CLI's flags and a JSON session's keys (opt.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/err.h"
#include "opt.h"

int txs_opt_apply(const struct txs_opt *o, void *cfg, const char *val, bool short_name, char *err, size_t errlen)
{
	char *dst = (char *)cfg + o->off;
	char why[200] = "";
	char name[64];
	if (o->shrt && short_name)
		snprintf(name, sizeof(name), "-%c/--%s", o->shrt, o->lng);
	else
		snprintf(name, sizeof(name), "--%s", o->lng);
	if (!val && txs_opt_takes_value(o))
		return txs_fail(err, errlen, -EINVAL, "option %s needs a value", name);

	switch (o->type) {
	case OPT_FLAG:
		*(bool *)dst = true;
		return 0;
	case OPT_FLAG_OFF:
		*(bool *)dst = false;
		return 0;
	case OPT_STR:
		*(const char **)dst = val;
		return 0;
	case OPT_U64: {
		uint64_t v;
		if (txs_parse_count(val, &v) < 0 || v < o->lo || (o->hi && v > o->hi)) {
			if (o->hi)
				snprintf(why, sizeof(why), "expected %llu..%llu (k/M/G suffixes allowed)",
					 (unsigned long long)o->lo, (unsigned long long)o->hi);
			else
				snprintf(why, sizeof(why), "expected a count >= %llu (k/M/G suffixes allowed)",
					 (unsigned long long)o->lo);
			break;
		}
		*(uint64_t *)dst = v;
		return 0;
	}
	case OPT_UINT: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(val, &end, 0);
		if (!*val || *val == '-' || *end || errno || v < o->lo || v > o->hi) {
			snprintf(why, sizeof(why), "expected %llu..%llu", (unsigned long long)o->lo,
				 (unsigned long long)o->hi);
			break;
		}
		*(unsigned *)dst = (unsigned)v;
		return 0;
	}
	case OPT_PORT: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(val, &end, 10);
		if (!*val || *val == '-' || *end || errno || v < 1 || v > 65535) {
			snprintf(why, sizeof(why), "expected a port 1..65535");
			break;
		}
		*(uint16_t *)dst = (uint16_t)v;
		return 0;
	}
	case OPT_SECONDS:
		if (txs_parse_seconds(val, (double *)dst) < 0) {
			snprintf(why, sizeof(why), "expected seconds, e.g. 10, 0.5, 250ms");
			break;
		}
		return 0;
	case OPT_RATE:
		if (txs_parse_rate(val, &((struct opt_rate *)dst)->value, &((struct opt_rate *)dst)->bits) < 0) {
			snprintf(why, sizeof(why), "expected bits/s of UDP payload (10M, 250k) or datagrams/s (100kpps)");
			break;
		}
		return 0;
	case OPT_CPULIST: {
		char e[160] = "";
		if (opt_cpus_parse(val, (struct opt_cpus *)dst, e, sizeof(e)) < 0)
			return txs_fail(err, errlen, -EINVAL, "%s: %s", name, e);
		return 0;
	}
	case OPT_CUSTOM:
		if (o->parse(val, dst, why, sizeof(why)) < 0)
			break;
		return 0;
	case OPT_INCLUDE:
		return txs_fail(err, errlen, -EINVAL, "%s: not an option", name);
	}
	return txs_fail(err, errlen, -EINVAL, "bad value for %s: '%s'%s%s", name, val, why[0] ? ": " : "", why);
}

int txs_opt_defaults(const struct txs_opt *opts, void *cfg, char *err, size_t errlen)
{
	for (const struct txs_opt *o = opts; o->lng; o++) {
		int rc = 0;
		if (o->type == OPT_INCLUDE)
			rc = txs_opt_defaults(o->include, cfg, err, errlen);
		else if (o->def)
			rc = txs_opt_apply(o, cfg, o->def, true, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

const struct txs_opt *txs_opt_find(const struct txs_opt *opts, const char *lng)
{
	for (const struct txs_opt *o = opts; o->lng; o++) {
		if (o->type == OPT_INCLUDE) {
			const struct txs_opt *r = txs_opt_find(o->include, lng);
			if (r)
				return r;
		} else if (strcmp(o->lng, lng) == 0) {
			return o;
		}
	}
	return NULL;
}
