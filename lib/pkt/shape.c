/* SPDX-License-Identifier: MIT */
/* Traffic shapes: flow ranges and size mixes, resolved at setup so that the
 * per-packet path only indexes precomputed templates (include/txscale/pkt.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <time.h>
#include <txscale/pkt.h>

#define PATTERN_MAX (1u << 20)

/* ",inc" / ",random" / ",stride=N" after the range, or nothing */
static int walk_parse(const char *w, struct txs_range *r, char *err, size_t errlen)
{
	r->walk = TXS_WALK_INC;
	r->stride = 1;
	if (!w || !*w || strcmp(w, "inc") == 0)
		return 0;
	if (strcmp(w, "random") == 0 || strcmp(w, "rnd") == 0) {
		r->walk = TXS_WALK_RANDOM;
		return 0;
	}
	if (strncmp(w, "stride=", 7) == 0) {
		char *end;
		unsigned long long v = strtoull(w + 7, &end, 10);
		if (*end || end == w + 7 || v == 0 || v > 0xffffffffull) {
			snprintf(err, errlen, "expected stride=N with N from 1 to 4294967295");
			return -EINVAL;
		}
		r->walk = TXS_WALK_STRIDE;
		r->stride = v;
		return 0;
	}
	snprintf(err, errlen, "unknown walk '%s': expected inc, random or stride=N", w);
	return -EINVAL;
}

/* Split "LO[-HI][,WALK]" into its three parts (in buf). */
static int range_split(const char *s, char *buf, size_t blen, char **lo, char **hi, char **walk, char *err,
		       size_t errlen)
{
	if (strlen(s) >= blen) {
		snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	strcpy(buf, s);
	*walk = strchr(buf, ',');
	if (*walk)
		*(*walk)++ = 0;
	*lo = buf;
	*hi = strchr(buf, '-');
	if (*hi)
		*(*hi)++ = 0;
	if (!**lo || (*hi && !**hi)) {
		snprintf(err, errlen, "expected LO[-HI][,inc|,random|,stride=N]");
		return -EINVAL;
	}
	return 0;
}

TXS_API int txs_range_parse_port(const char *s, uint16_t *lo, struct txs_range *r, char *err, size_t errlen)
{
	char buf[64], *l, *h, *w;
	memset(r, 0, sizeof(*r));
	if (range_split(s, buf, sizeof(buf), &l, &h, &w, err, errlen) < 0)
		return -EINVAL;
	char *end;
	unsigned long a = strtoul(l, &end, 10), b = a;
	if (*end || a == 0 || a > 65535 || (h && ((b = strtoul(h, &end, 10)), *end || b > 65535 || b < a))) {
		snprintf(err, errlen, "expected ports LO-HI, 1 <= LO <= HI <= 65535");
		return -EINVAL;
	}
	if (walk_parse(w, r, err, errlen) < 0)
		return -EINVAL;
	*lo = (uint16_t)a;
	r->span = b - a + 1;
	return 0;
}

static uint64_t addr_low(const struct txs_addr *a)
{
	if (a->family == AF_INET)
		return ntohl(a->v4.s_addr);
	uint64_t v;
	memcpy(&v, a->bytes + 8, 8);
	return __builtin_bswap64(v);
}

TXS_API void txs_range_addr(struct txs_addr *a, uint64_t off)
{
	if (a->family == AF_INET) {
		a->v4.s_addr = htonl((uint32_t)(ntohl(a->v4.s_addr) + off));
		return;
	}
	uint64_t v = __builtin_bswap64(addr_low(a) + off);
	memcpy(a->bytes + 8, &v, 8);
}

TXS_API int txs_range_parse_addr(const char *s, struct txs_addr *lo, struct txs_range *r, char *err, size_t errlen)
{
	char buf[128], *l, *h, *w;
	memset(r, 0, sizeof(*r));
	if (range_split(s, buf, sizeof(buf), &l, &h, &w, err, errlen) < 0)
		return -EINVAL;
	struct txs_addr a, b;
	if (txs_addr_parse(&a, l) < 0 || (h && txs_addr_parse(&b, h) < 0)) {
		snprintf(err, errlen, "expected addresses LO-HI of one family");
		return -EINVAL;
	}
	if (!h)
		b = a;
	if (a.family != b.family || (a.family == AF_INET6 && memcmp(a.bytes, b.bytes, 8) != 0) ||
	    addr_low(&b) < addr_low(&a) || addr_low(&b) - addr_low(&a) >= 0xffffffffull) {
		snprintf(err, errlen, "expected LO <= HI, one family, at most 2^32 - 1 addresses%s",
			 a.family == AF_INET6 ? " differing in the low 64 bits" : "");
		return -EINVAL;
	}
	if (walk_parse(w, r, err, errlen) < 0)
		return -EINVAL;
	*lo = a;
	r->span = addr_low(&b) - addr_low(&a) + 1;
	return 0;
}

static int parse_u32_list(const char *s, uint32_t *out, unsigned *n, uint32_t lo, uint32_t hi)
{
	*n = 0;
	while (*s) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s || v < lo || v > hi || *n >= TXS_SHAPE_MAX_SIZES)
			return -EINVAL;
		out[(*n)++] = (uint32_t)v;
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		s = end;
	}
	return *n ? 0 : -EINVAL;
}

TXS_API int txs_shape_parse_sizes(struct txs_shape *sh, const char *s, int family, char *err, size_t errlen)
{
	uint32_t maxlen = family == AF_INET6 ? 65527 : 65507;
	uint32_t hdrs = 18 + (family == AF_INET6 ? 40 : 20) + 8;
	sh->n_sizes = 0;
	if (strcmp(s, "imix") == 0) {
		static const uint32_t fr[3] = { 64, 594, 1518 }, w[3] = { 7, 4, 1 };
		for (unsigned k = 0; k < 3; k++) {
			sh->sizes[k] = fr[k] >= hdrs + TXS_PH_COMPACT_LEN ? fr[k] - hdrs : TXS_PH_COMPACT_LEN;
			sh->weights[k] = w[k];
		}
		sh->n_sizes = 3;
		return 0;
	}
	char buf[512];
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	strcpy(buf, s);
	char *dash = strchr(buf, '-');
	if (dash) {
		/* LO-HI[/STEP] */
		char *slash = strchr(dash, '/'), *end;
		if (slash)
			*slash++ = 0;
		*dash++ = 0;
		unsigned long long lo = strtoull(buf, &end, 10), hi, step = 1;
		bool bad = end == buf || *end;
		hi = strtoull(dash, &end, 10);
		bad |= end == dash || *end;
		if (slash) {
			step = strtoull(slash, &end, 10);
			bad |= end == slash || *end || step == 0;
		}
		if (bad || hi < lo || hi > maxlen) {
			snprintf(err, errlen, "expected LO-HI[/STEP] with LO <= HI <= %u", maxlen);
			return -EINVAL;
		}
		if ((hi - lo) / step + 1 > TXS_SHAPE_MAX_SIZES) {
			snprintf(err, errlen, "%llu sizes: at most %u (give a larger /STEP)", (hi - lo) / step + 1,
				 TXS_SHAPE_MAX_SIZES);
			return -EINVAL;
		}
		for (unsigned long long v = lo; v <= hi; v += step) {
			sh->sizes[sh->n_sizes] = (uint32_t)v;
			sh->weights[sh->n_sizes++] = 1;
		}
		return 0;
	}
	char *colon = strchr(buf, ':');
	if (colon)
		*colon++ = 0;
	unsigned n, nw;
	if (parse_u32_list(buf, sh->sizes, &n, 0, maxlen) < 0) {
		snprintf(err, errlen, "expected sizes N[,N...] (at most %u, each <= %u), LO-HI[/STEP] or imix",
			 TXS_SHAPE_MAX_SIZES, maxlen);
		return -EINVAL;
	}
	if (colon) {
		if (parse_u32_list(colon, sh->weights, &nw, 1, 1000000) < 0 || nw != n) {
			snprintf(err, errlen, "expected %u weights from 1 to 1000000 after ':'", n);
			return -EINVAL;
		}
	} else {
		for (unsigned k = 0; k < n; k++)
			sh->weights[k] = 1;
	}
	for (unsigned a = 0; a < n; a++)
		for (unsigned b = a + 1; b < n; b++)
			if (sh->sizes[a] == sh->sizes[b]) {
				snprintf(err, errlen, "size %u given twice", sh->sizes[a]);
				return -EINVAL;
			}
	sh->n_sizes = n;
	return 0;
}

TXS_API uint32_t txs_shape_max_size(const struct txs_shape *sh, uint32_t payload_len)
{
	if (!sh || !sh->n_sizes)
		return payload_len;
	uint32_t m = 0;
	for (unsigned k = 0; k < sh->n_sizes; k++)
		if (sh->sizes[k] > m)
			m = sh->sizes[k];
	return m;
}

static uint64_t walk_off(const struct txs_range *r, uint64_t g, uint64_t *rng)
{
	if (r->span <= 1)
		return 0;
	switch (r->walk) {
	case TXS_WALK_RANDOM:
		return txs_rng_next(rng) % r->span;
	case TXS_WALK_STRIDE:
		return (uint64_t)(((unsigned __int128)g * r->stride) % r->span);
	default:
		return g % r->span;
	}
}

TXS_API void txs_shape_flow(const struct txs_shape *sh, const struct txs_flow_spec *base, bool spread_sport,
			    unsigned worker, uint32_t i, uint64_t *rng, struct txs_flow_spec *out)
{
	*out = *base;
	uint32_t flows = sh && sh->flows ? sh->flows : 1;
	uint64_t g = (uint64_t)worker * flows + i;
	out->flow_id = (uint32_t)(base->flow_id + g);
	static const struct txs_range none = { 0 };
	const struct txs_range *sp = sh ? &sh->sport : &none;
	if (sp->span > 1)
		out->sport = (uint16_t)(base->sport + walk_off(sp, g, rng));
	else if (spread_sport)
		out->sport = (uint16_t)(base->sport + worker);
	if (sh) {
		out->dport = (uint16_t)(base->dport + walk_off(&sh->dport, g, rng));
		txs_range_addr(&out->src, walk_off(&sh->src, g, rng));
		txs_range_addr(&out->dst, walk_off(&sh->dst, g, rng));
	}
}

static uint32_t gcd32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

TXS_API int txs_shape_pattern(const struct txs_shape *sh, uint8_t **pat, uint32_t *len)
{
	*pat = NULL;
	*len = 0;
	unsigned n = sh ? sh->n_sizes : 0;
	if (n == 0) {
		*pat = calloc(1, 1);
		*len = 1;
		return *pat ? 0 : -ENOMEM;
	}
	uint32_t g = 0;
	uint64_t sum = 0;
	for (unsigned k = 0; k < n; k++)
		g = gcd32(g, sh->weights[k]);
	if (!g)
		return -EINVAL;
	for (unsigned k = 0; k < n; k++)
		sum += sh->weights[k] / g;
	if (sum > PATTERN_MAX)
		return -EINVAL;
	uint8_t *p = malloc(sum);
	if (!p)
		return -ENOMEM;
	/* smooth weighted round robin (nginx): each step every size gains its
	 * weight, the richest is sent and pays the cycle; exact per cycle */
	int64_t cur[TXS_SHAPE_MAX_SIZES] = { 0 };
	for (uint64_t t = 0; t < sum; t++) {
		unsigned best = 0;
		for (unsigned k = 0; k < n; k++) {
			cur[k] += sh->weights[k] / g;
			if (cur[k] > cur[best])
				best = k;
		}
		cur[best] -= (int64_t)sum;
		p[t] = (uint8_t)best;
	}
	*pat = p;
	*len = (uint32_t)sum;
	return 0;
}

TXS_API void txs_shape_count(const struct txs_shape *sh, const uint8_t *pat, uint32_t len, uint64_t count,
			     uint64_t *pkts, uint64_t *bytes)
{
	if (!sh || !sh->n_sizes || !len)
		return;
	uint64_t full = count / len, rem = count % len;
	uint64_t per[TXS_SHAPE_MAX_SIZES] = { 0 };
	for (uint32_t t = 0; t < len; t++)
		per[pat[t]] += full + (t < rem);
	for (unsigned k = 0; k < sh->n_sizes; k++) {
		pkts[k] += per[k];
		if (bytes)
			bytes[k] += per[k] * sh->sizes[k];
	}
}

TXS_API uint64_t txs_shape_rng_seed(uint64_t seed, unsigned worker)
{
	uint64_t v = seed;
	if (!v && getrandom(&v, sizeof(v), 0) != sizeof(v)) {
		v = txs_now_mono_ns();
	}
	v ^= 0x5348415045ull * (worker + 1); /* "SHAPE" */
	return txs_rng_next(&v);
}
