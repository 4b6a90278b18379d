/* SPDX-License-Identifier: MIT */
/* RFC 2544 suite (<txscale/session_rfc2544.h>): frame sizes, the test list,
 * the frame-loss steps and the configuration's defaults and checks. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <txscale/pkt.h>
#include <txscale/session_rfc2544.h>

#define ETH_FCS_HDRS 18u /* 14 Ethernet + 4 FCS */
#define FRAME_MIN 64u
#define FRAME_MAX 9018u

int txs_rfc2544_payload(unsigned frame, int family, unsigned *payload, unsigned *wire)
{
	if (frame < FRAME_MIN || frame > FRAME_MAX)
		return -EINVAL;
	unsigned hdrs = ETH_FCS_HDRS + (family == AF_INET6 ? 40u : 20u) + 8u;
	unsigned p = frame >= hdrs + TXS_PH_COMPACT_LEN ? frame - hdrs : TXS_PH_COMPACT_LEN;
	*payload = p;
	*wire = p + hdrs;
	return 0;
}

double txs_rfc2544_frame_bytes(unsigned size, int family)
{
	unsigned p, w;
	if (size == TXS_RFC2544_IMIX) {
		static const unsigned fr[3] = { 64, 594, 1518 }, wt[3] = { 7, 4, 1 };
		double sum = 0;
		for (unsigned k = 0; k < 3; k++) {
			txs_rfc2544_payload(fr[k], family, &p, &w);
			sum += (double)w * wt[k];
		}
		return sum / 12.0;
	}
	if (txs_rfc2544_payload(size, family, &p, &w) < 0)
		return 0;
	return w;
}

int txs_rfc2544_parse_sizes(const char *s, unsigned *sizes, unsigned *n, char *err, size_t errlen)
{
	static const unsigned def[] = { 64, 128, 256, 512, 1024, 1280, 1518 };
	*n = 0;
	if (!s || strcmp(s, "default") == 0) {
		memcpy(sizes, def, sizeof(def));
		*n = TXS_ARRAY_SIZE(def);
		return 0;
	}
	const char *p = s;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char item[32];
		if (len == 0 || len >= sizeof(item)) {
			snprintf(err, errlen, "empty or overlong item in '%s'", s);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = 0;
		unsigned v;
		if (strcmp(item, "imix") == 0) {
			v = TXS_RFC2544_IMIX;
		} else {
			char *end;
			errno = 0;
			unsigned long x = strtoul(item, &end, 10);
			if (errno || *end || end == item || item[0] == '-' || x < FRAME_MIN || x > FRAME_MAX) {
				snprintf(err, errlen, "'%s': expected a frame size %u..%u (bytes with the FCS) or imix", item,
					 FRAME_MIN, FRAME_MAX);
				return -EINVAL;
			}
			v = (unsigned)x;
		}
		for (unsigned i = 0; i < *n; i++)
			if (sizes[i] == v) {
				snprintf(err, errlen, "'%s' given twice", item);
				return -EINVAL;
			}
		if (*n == TXS_RFC2544_MAX_SIZES) {
			snprintf(err, errlen, "more than %u sizes", TXS_RFC2544_MAX_SIZES);
			return -EINVAL;
		}
		sizes[(*n)++] = v;
		p += len;
		if (*p == ',' && !*++p) {
			snprintf(err, errlen, "trailing comma in '%s'", s);
			return -EINVAL;
		}
	}
	if (!*n) {
		snprintf(err, errlen, "no sizes");
		return -EINVAL;
	}
	return 0;
}

static const char *const test_names[] = { "throughput", "latency", "frame-loss", "back-to-back" };

const char *txs_rfc2544_test_str(enum txs_rfc2544_test t)
{
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(test_names); i++)
		if (t == 1u << i)
			return test_names[i];
	return "?";
}

int txs_rfc2544_parse_tests(const char *s, unsigned *mask, char *err, size_t errlen)
{
	*mask = 0;
	if (!s || strcmp(s, "all") == 0) {
		*mask = TXS_RFC2544_ALL;
		return 0;
	}
	const char *p = s;
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned i;
		for (i = 0; i < TXS_ARRAY_SIZE(test_names); i++)
			if (strlen(test_names[i]) == len && strncmp(p, test_names[i], len) == 0)
				break;
		if (i == TXS_ARRAY_SIZE(test_names)) {
			snprintf(err, errlen, "'%.*s': expected throughput, latency, frame-loss, back-to-back or all",
				 (int)(len > 40 ? 40 : len), p);
			return -EINVAL;
		}
		*mask |= 1u << i;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!*mask) {
		snprintf(err, errlen, "no tests");
		return -EINVAL;
	}
	return 0;
}

/* ---- frame loss ----------------------------------------------------------------- */

void txs_rfc2544_fl_init(struct txs_rfc2544_fl *f, double top_fps)
{
	memset(f, 0, sizeof(*f));
	f->top = top_fps;
	f->done = !(top_fps >= 1);
}

bool txs_rfc2544_fl_next(struct txs_rfc2544_fl *f, double *rate, double *pct)
{
	if (f->done || f->step >= TXS_RFC2544_MAX_FL || f->zero_run >= 2) {
		f->done = true;
		return false;
	}
	double p = 100.0 - 10.0 * f->step;
	double r = floor(f->top * p / 100.0);
	*rate = r >= 1 ? r : 1;
	*pct = p;
	return true;
}

void txs_rfc2544_fl_report(struct txs_rfc2544_fl *f, uint64_t lost)
{
	if (f->done)
		return;
	f->step++;
	f->zero_run = lost ? 0 : f->zero_run + 1;
	if (f->zero_run >= 2 || f->step >= TXS_RFC2544_MAX_FL)
		f->done = true;
}

/* ---- configuration ------------------------------------------------------------------ */

void txs_rfc2544_conf_init(struct txs_rfc2544_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->port = 5201;
	c->dev = "udp";
	c->recv_dev = "udp";
	txs_rfc2544_parse_sizes(NULL, c->sizes, &c->n_sizes, NULL, 0);
	c->tests = TXS_RFC2544_ALL;
	c->trial_s = 10;
	c->search_s = 1;
	c->settle_s = 2;
	c->precision = 0.01;
	c->lo_fps = 100;
	c->max_trials = 30;
	c->repeat = 3;
	c->latency_trials = 3;
	c->b2b_trials = 5;
	c->b2b_precision = 0.02;
}

#define BAD(...)                                      \
	do {                                          \
		snprintf(err, errlen, __VA_ARGS__);   \
		return -EINVAL;                       \
	} while (0)

int txs_rfc2544_conf_check(const struct txs_rfc2544_conf *c, char *err, size_t errlen)
{
	struct txs_addr a;
	if (!c->exe || !*c->exe)
		BAD("no program to run the trials (exe)");
	if (!c->dest || txs_addr_parse(&a, c->dest) < 0)
		BAD("bad destination address '%s'", c->dest ? c->dest : "");
	if (!c->port)
		BAD("bad value for port: 0");
	if (!c->dev || !*c->dev || !c->recv_dev || !*c->recv_dev)
		BAD("no device");
	if (!c->n_sizes || c->n_sizes > TXS_RFC2544_MAX_SIZES)
		BAD("bad number of sizes: %u (1..%u)", c->n_sizes, TXS_RFC2544_MAX_SIZES);
	for (unsigned i = 0; i < c->n_sizes; i++)
		if (c->sizes[i] != TXS_RFC2544_IMIX && (c->sizes[i] < FRAME_MIN || c->sizes[i] > FRAME_MAX))
			BAD("bad frame size %u (%u..%u)", c->sizes[i], FRAME_MIN, FRAME_MAX);
	if (!c->tests || (c->tests & ~(unsigned)TXS_RFC2544_ALL))
		BAD("bad test set 0x%x", c->tests);
	if (!(c->trial_s >= 0.1) || c->trial_s > 3600)
		BAD("bad value for trial: '%g': expected 0.1 to 3600 seconds", c->trial_s);
	if (!(c->search_s >= 0.1) || c->search_s > c->trial_s)
		BAD("bad value for search-trial: '%g': expected 0.1 s up to the trial (%g s)", c->search_s, c->trial_s);
	if (!(c->settle_s >= 0) || c->settle_s > 60)
		BAD("bad value for settle: '%g': expected 0 to 60 seconds", c->settle_s);
	if (!(c->loss_pct >= 0) || !(c->loss_pct < 100))
		BAD("bad value for loss: '%g': expected 0 <= PCT < 100", c->loss_pct);
	if (!(c->precision > 0) || !(c->precision < 1))
		BAD("bad value for precision: '%g%%': expected 0 < PCT < 100", c->precision * 100);
	if (!(c->lo_fps >= 1) || !isfinite(c->lo_fps))
		BAD("bad value for lo: '%g': expected at least 1 frame/s", c->lo_fps);
	if (c->hi_fps != 0 && !(c->hi_fps > c->lo_fps && isfinite(c->hi_fps)))
		BAD("bad value for hi: '%g': must be above lo %g", c->hi_fps, c->lo_fps);
	if (c->max_trials < 3 || c->max_trials > TXS_NDR_MAX_TRIALS)
		BAD("bad value for max-trials: %u (3..%u)", c->max_trials, TXS_NDR_MAX_TRIALS);
	if (c->repeat < 1 || c->repeat > TXS_RFC2544_MAX_REPEAT)
		BAD("bad value for repeat: %u (1..%u)", c->repeat, TXS_RFC2544_MAX_REPEAT);
	if (c->latency_trials < 1 || c->latency_trials > TXS_RFC2544_MAX_LAT)
		BAD("bad value for latency-trials: %u (1..%u)", c->latency_trials, TXS_RFC2544_MAX_LAT);
	if (c->b2b_trials < 1 || c->b2b_trials > TXS_RFC2544_MAX_B2B)
		BAD("bad value for b2b-trials: %u (1..%u)", c->b2b_trials, TXS_RFC2544_MAX_B2B);
	if (!(c->b2b_precision > 0) || !(c->b2b_precision < 1))
		BAD("bad value for b2b-precision: '%g%%': expected 0 < PCT < 100", c->b2b_precision * 100);
	if (c->b2b_max == 1 || c->b2b_max > 1000000000ull)
		BAD("bad value for b2b-max: %llu (2..1G frames)", (unsigned long long)c->b2b_max);
	if (c->remote && (!c->remote->begin || !c->remote->end))
		BAD("remote receiver without its hooks");
	if (c->remote && c->recv_netns)
		BAD("a remote receiver and recv-netns exclude each other");
	if (c->recv_args && strlen(c->recv_args) >= 1024)
		BAD("recv-args is too long (at most 1023 characters)");
	if (c->n_cpus && c->threads > c->n_cpus)
		BAD("-P %u needs at least %u CPUs (got %u)", c->threads, c->threads, c->n_cpus);
	for (unsigned i = 0; i < c->n_sizes; i++) {
		unsigned p, w;
		if (c->sizes[i] != TXS_RFC2544_IMIX && txs_rfc2544_payload(c->sizes[i], a.family, &p, &w) < 0)
			BAD("bad frame size %u", c->sizes[i]);
	}
	return 0;
}
