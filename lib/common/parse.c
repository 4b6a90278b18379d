/* SPDX-License-Identifier: MIT */
/* The values of options as users write them (common.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <txscale/common.h>

TXS_API int txs_parse_count(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-')
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	double mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1e3, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1e6, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1e9, end++;
	if (*end)
		return -EINVAL;
	v *= mul;
	if (v > 1.8e19 || v != floor(v))
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

TXS_API int txs_parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -EINVAL;
	if (strcmp(end, "ms") == 0)
		v /= 1e3;
	else if (strcmp(end, "us") == 0)
		v /= 1e6;
	else if (strcmp(end, "s") == 0 || *end == 0)
		;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		v *= 60;
	else
		return -EINVAL;
	if (v > 1e7)
		return -EINVAL;
	*out = v;
	return 0;
}

TXS_API int txs_parse_rate(const char *s, double *value, bool *bits)
{
	/* iperf's grammar: a number with k/M/G/T (powers of 1000, either case,
	 * as iperf3's unit_atof_rate) is bits/s; "bit", "bps" or "bit/s" after
	 * it says so; "pps" makes it datagrams/s (iperf 2's -b 100kpps) */
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -EINVAL;
	double mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1e3, end++; break;
	case 'm': case 'M': mul = 1e6, end++; break;
	case 'g': case 'G': mul = 1e9, end++; break;
	case 't': case 'T': mul = 1e12, end++; break;
	default: break;
	}
	/* the unit in any case: 10KPPS, 10Mbps, 10MBit */
	bool pps = strcasecmp(end, "pps") == 0;
	if (!pps && *end && strcasecmp(end, "bit") && strcasecmp(end, "bps") && strcasecmp(end, "bit/s") &&
	    strcasecmp(end, "bits") && strcasecmp(end, "bits/s"))
		return -EINVAL;
	if (v * mul > 1e12)
		return -EINVAL;
	*value = v * mul;
	*bits = !pps;
	return 0;
}

TXS_API int txs_parse_cpus(const char *s, int *cpu, unsigned max, unsigned *n, char *err, size_t errlen)
{
	cpu_set_t online;
	CPU_ZERO(&online);
	if (sched_getaffinity(0, sizeof(online), &online) < 0)
		CPU_ZERO(&online);
	*n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		if (!isdigit((unsigned char)*p))
			goto bad;
		long a = strtol(p, &end, 10), b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				goto bad;
			b = strtol(p, &end, 10);
			p = end;
		}
		if (b < a || b >= CPU_SETSIZE)
			goto bad;
		for (long c = a; c <= b; c++) {
			if (!CPU_ISSET((int)c, &online)) {
				snprintf(err, errlen, "CPU %ld in '%s' is not available (online/allowed: %d CPUs)", c, s,
					 CPU_COUNT(&online));
				return -EINVAL;
			}
			if (*n >= max)
				goto bad;
			for (unsigned i = 0; i < *n; i++)
				if (cpu[i] == (int)c) {
					/* two workers on one CPU share it: not what a CPU list asks for */
					snprintf(err, errlen, "CPU %ld appears twice in '%s' (one worker per CPU)", c, s);
					return -EINVAL;
				}
			cpu[(*n)++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (*n == 0)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "bad CPU list '%s' (expected e.g. 0-3,6)", s);
	return -EINVAL;
}
