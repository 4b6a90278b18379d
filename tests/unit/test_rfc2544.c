/* SPDX-License-Identifier: MIT */
/* The RFC 2544 session (lib/session/rfc2544*.c, <txscale/session_rfc2544.h>):
 * frame sizes to payloads, the size and test lists, the frame-loss steps,
 * the configuration's checks, and whole runs against tests/unit/rfc2544_dut.sh,
 * a stand-in for the txscale program whose device under test is a token
 * bucket (rate T, bucket B): the session's throughput, latency, frame loss
 * and back-to-back figures against the bucket's truth, its trial lines and
 * result line, and the report directory's numbers against the JSON. */
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <txscale/common.h>
#include <txscale/session_rfc2544.h>
#include "common/jsonpath.h"
#define T_TMPDIR_NAME "txs_rfc2544"
#include "test_tmpdir.h"

static void payloads(void **st)
{
	(void)st;
	unsigned p, w;
	assert_int_equal(txs_rfc2544_payload(64, AF_INET, &p, &w), 0);
	assert_int_equal(p, 18);
	assert_int_equal(w, 64);
	assert_int_equal(txs_rfc2544_payload(1518, AF_INET, &p, &w), 0);
	assert_int_equal(p, 1472);
	assert_int_equal(w, 1518);
	assert_int_equal(txs_rfc2544_payload(1518, AF_INET6, &p, &w), 0);
	assert_int_equal(p, 1452);
	/* IPv6: 66 bytes of headers and FCS leave no room for the 16-byte payload header */
	assert_int_equal(txs_rfc2544_payload(64, AF_INET6, &p, &w), 0);
	assert_int_equal(p, 16);
	assert_int_equal(w, 82);
	assert_int_equal(txs_rfc2544_payload(128, AF_INET6, &p, &w), 0);
	assert_int_equal(p, 62);
	assert_int_equal(txs_rfc2544_payload(63, AF_INET, &p, &w), -EINVAL);
	assert_int_equal(txs_rfc2544_payload(9019, AF_INET, &p, &w), -EINVAL);
	assert_int_equal(txs_rfc2544_payload(9018, AF_INET, &p, &w), 0);
	assert_true(fabs(txs_rfc2544_frame_bytes(TXS_RFC2544_IMIX, AF_INET) - (7 * 64 + 4 * 594 + 1518) / 12.0) < 1e-9);
	assert_true(fabs(txs_rfc2544_frame_bytes(TXS_RFC2544_IMIX, AF_INET6) - (7 * 82 + 4 * 594 + 1518) / 12.0) < 1e-9);
	assert_true(txs_rfc2544_frame_bytes(512, AF_INET) == 512);
}

static void size_and_test_lists(void **st)
{
	(void)st;
	unsigned s[TXS_RFC2544_MAX_SIZES], n, m;
	char err[128];
	assert_int_equal(txs_rfc2544_parse_sizes("default", s, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 7);
	assert_int_equal(s[0], 64);
	assert_int_equal(s[6], 1518);
	assert_int_equal(txs_rfc2544_parse_sizes("128,imix,9018", s, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(s[1], TXS_RFC2544_IMIX);
	assert_int_equal(s[2], 9018);
	static const char *const bad[] = { "63", "9019", "64,64", "64,", ",64", "", "x", "-64", "64,,128", "1e3",
					   "64,128,256,512,1024,1280,1518,65,66,67,68,69,70,71,72,73,74" };
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(bad); i++) {
		err[0] = 0;
		assert_int_equal(txs_rfc2544_parse_sizes(bad[i], s, &n, err, sizeof(err)), -EINVAL);
		assert_true(err[0]);
	}
	assert_int_equal(txs_rfc2544_parse_sizes("63", s, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'63'"));
	assert_int_equal(txs_rfc2544_parse_tests("all", &m, err, sizeof(err)), 0);
	assert_int_equal(m, TXS_RFC2544_ALL);
	assert_int_equal(txs_rfc2544_parse_tests("latency,back-to-back", &m, err, sizeof(err)), 0);
	assert_int_equal(m, TXS_RFC2544_LATENCY | TXS_RFC2544_BACK_TO_BACK);
	assert_int_equal(txs_rfc2544_parse_tests("throughput,jitter", &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'jitter'"));
	assert_int_equal(txs_rfc2544_parse_tests("", &m, err, sizeof(err)), -EINVAL);
	assert_string_equal(txs_rfc2544_test_str(TXS_RFC2544_FRAME_LOSS), "frame-loss");
}

/* The frame-loss steps against a path that loses above T (of top 100) */
static unsigned fl_steps(double T, double *last)
{
	struct txs_rfc2544_fl f;
	txs_rfc2544_fl_init(&f, 1000);
	double r, pct;
	unsigned n = 0;
	while (txs_rfc2544_fl_next(&f, &r, &pct)) {
		assert_true(fabs(r - 10 * pct) < 1e-9);
		assert_true(fabs(pct - (100 - 10.0 * n)) < 1e-9);
		txs_rfc2544_fl_report(&f, r > T ? 1 : 0);
		*last = r;
		n++;
		assert_true(n <= TXS_RFC2544_MAX_FL);
	}
	return n;
}

static void frame_loss_steps(void **st)
{
	(void)st;
	double last = 0;
	assert_int_equal(fl_steps(2000, &last), 2); /* 100 %, 90 %: no loss twice */
	assert_int_equal(fl_steps(350, &last), 9);  /* 1000..400 lose, 300 and 200 do not */
	assert_true(last == 200);
	assert_int_equal(fl_steps(0, &last), 10);   /* loses down to 10 %: the last step */
	assert_true(last == 100);
	assert_int_equal(fl_steps(950, &last), 3);  /* 1000 loses, 900, 800 do not */
	struct txs_rfc2544_fl f;
	txs_rfc2544_fl_init(&f, 0.5); /* no top rate: nothing to step */
	double r, p;
	assert_false(txs_rfc2544_fl_next(&f, &r, &p));
}

/* conf_check refuses c after set, naming `what` */
#define REFUSED(what, stmt)                                                        \
	do {                                                                       \
		struct txs_rfc2544_conf x = good;                                  \
		stmt;                                                              \
		err[0] = 0;                                                        \
		assert_int_equal(txs_rfc2544_conf_check(&x, err, sizeof(err)), -EINVAL); \
		if (!strstr(err, what))                                            \
			fail_msg("%s: '%s' does not name %s", #stmt, err, what);   \
	} while (0)

static void conf_checks(void **st)
{
	(void)st;
	struct txs_rfc2544_conf good;
	char err[256];
	txs_rfc2544_conf_init(&good);
	assert_int_equal(txs_rfc2544_conf_check(&good, err, sizeof(err)), -EINVAL); /* no exe, no dest */
	good.exe = "/bin/true";
	good.dest = "198.18.0.2";
	assert_int_equal(txs_rfc2544_conf_check(&good, err, sizeof(err)), 0);
	assert_int_equal(good.n_sizes, 7);
	assert_int_equal(good.tests, TXS_RFC2544_ALL);
	REFUSED("'nowhere'", x.dest = "nowhere");
	REFUSED("trial", x.trial_s = 0.05);
	REFUSED("search-trial", x.search_s = 20);
	REFUSED("loss", x.loss_pct = 100);
	REFUSED("settle", x.settle_s = -1);
	REFUSED("precision", x.precision = 0);
	REFUSED("lo", x.lo_fps = 0.5);
	REFUSED("hi", x.hi_fps = 50);
	REFUSED("max-trials", x.max_trials = 2);
	REFUSED("repeat", x.repeat = 0);
	REFUSED("repeat", x.repeat = TXS_RFC2544_MAX_REPEAT + 1);
	REFUSED("latency-trials", x.latency_trials = 0);
	REFUSED("b2b-trials", x.b2b_trials = TXS_RFC2544_MAX_B2B + 1);
	REFUSED("b2b-max", x.b2b_max = 1);
	REFUSED("frame size 20", x.sizes[0] = 20);
	REFUSED("sizes", x.n_sizes = 0);
	REFUSED("test", x.tests = 16);
	static const struct txs_rfc2544_remote half = { 0 };
	REFUSED("hooks", x.remote = &half);
}

/* ---- whole runs against the token bucket of rfc2544_dut.sh -------------------------------- */

#define DUT_T 50000.0
#define DUT_B 1000.0
#define DUT_TOP 400000.0

static char dut[512];

static void dut_env(void)
{
	const char *src = getenv("TXS_SRCDIR");
	if (src)
		snprintf(dut, sizeof(dut), "%s/tests/unit/rfc2544_dut.sh", src);
	else
		snprintf(dut, sizeof(dut), "%s", __FILE__);
	if (!src) { /* .../tests/unit/test_rfc2544.c -> .../tests/unit/rfc2544_dut.sh */
		char *slash = strrchr(dut, '/');
		snprintf(slash ? slash + 1 : dut, sizeof(dut) - (size_t)(slash ? slash + 1 - dut : 0), "rfc2544_dut.sh");
	}
	char v[32];
	snprintf(v, sizeof(v), "%.0f", DUT_T);
	setenv("FAKE_T", v, 1);
	snprintf(v, sizeof(v), "%.0f", DUT_B);
	setenv("FAKE_B", v, 1);
	snprintf(v, sizeof(v), "%.0f", DUT_TOP);
	setenv("FAKE_TOP", v, 1);
}

struct seen {
	FILE *f;        /* the trial lines, as written */
	unsigned n, tests[5];
	unsigned last_index;
	bool ordered;
};

static void seen_trial(const struct txs_rfc2544_trial *t, void *arg)
{
	struct seen *s = arg;
	txs_rfc2544_write_trial(s->f, true, t);
	s->ordered &= t->index == s->last_index + 1;
	s->last_index = t->index;
	s->n++;
	for (unsigned i = 0; i < 4; i++)
		if (t->test == 1u << i)
			s->tests[i]++;
}

static json_t *load_line(const char *path, const char *type)
{
	size_t n = 0;
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *line = NULL;
	json_t *found = NULL;
	while (getline(&line, &n, f) > 0) {
		json_t *j = json_loads(line, 0, NULL);
		assert_non_null(j);
		if (strcmp(json_string_value(json_object_get(j, "type")), type) == 0) {
			json_decref(found);
			found = j;
		} else {
			json_decref(j);
		}
	}
	free(line);
	fclose(f);
	return found;
}

static double jd(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	if (!json_is_number(v))
		fail_msg("no number '%s'", k);
	return json_number_value(v);
}

static void suite_against_bucket(void **st)
{
	(void)st;
	dut_env();
	struct txs_rfc2544_conf c;
	txs_rfc2544_conf_init(&c);
	c.exe = dut;
	c.dest = "198.18.0.2";
	c.sizes[0] = 64;
	c.sizes[1] = TXS_RFC2544_IMIX;
	c.n_sizes = 2;
	c.trial_s = 10;
	c.search_s = 1;
	c.repeat = 2;
	c.latency_trials = 2;
	c.b2b_trials = 2;
	c.settle_s = 0;
	char err[512], lines[512], repdir[512];
	t_tmppath(lines, sizeof(lines), "trials.json");
	t_tmppath(repdir, sizeof(repdir), "report");
	struct txs_rfc2544 *s;
	int rc = txs_rfc2544_open(&s, &c, err, sizeof(err));
	if (rc < 0)
		fail_msg("open: %s", err);
	struct seen sn = { .f = fopen(lines, "w"), .ordered = true };
	assert_non_null(sn.f);
	struct txs_rfc2544_hooks h = { .trial = seen_trial, .arg = &sn };
	rc = txs_rfc2544_run(s, &h, err, sizeof(err));
	if (rc < 0)
		fail_msg("run: %s", err);
	const struct txs_rfc2544_result *r = txs_rfc2544_result(s);
	txs_rfc2544_write_result(sn.f, true, r, &c);
	fclose(sn.f);
	assert_true(r->complete);
	assert_true(sn.ordered);
	assert_int_equal(sn.n, r->trials);
	for (unsigned i = 0; i < 4; i++)
		assert_true(sn.tests[i] > 0);
	assert_int_equal(sn.tests[1], 2 * c.latency_trials); /* latency: 2 sizes x 2 */
	assert_int_equal(r->n_sizes, 2);
	/* throughput: the bucket passes a full trial of r frames/s iff r <= T + B / trial */
	double truth = DUT_T + DUT_B / c.trial_s;
	for (unsigned i = 0; i < 2; i++) {
		const struct txs_rfc2544_tput *tp = &r->tput[i];
		assert_int_equal(tp->n_runs, 2);
		assert_true(tp->top_fps == DUT_TOP);
		for (unsigned k = 0; k < tp->n_runs; k++) {
			if (!(tp->runs[k] <= truth && tp->runs[k] > truth * (1 - c.precision)))
				fail_msg("size %u run %u: %g fps, truth %g", tp->size, k, tp->runs[k], truth);
			assert_true(tp->confirmed[k]);
		}
		assert_true(tp->fps >= tp->fps_min && tp->fps <= tp->fps_max);
		assert_true(tp->have_lat);
		assert_int_equal(tp->n_lat, 2);
		assert_true(tp->lat.mean == 2000 && tp->lat.min == 1000 && tp->lat.max == 6000 && tp->lat.p999 == 5119);
		/* frame loss from the top rate down: the bucket's loss at each step */
		const struct txs_rfc2544_floss *fl = &r->floss[i];
		assert_true(fl->top_fps == DUT_TOP);
		assert_int_equal(fl->n_points, 10); /* 400k..80k lose, 40k does not: the 10 % step ends it */
		for (unsigned k = 0; k < fl->n_points; k++) {
			const struct txs_rfc2544_fl_point *p = &fl->points[k];
			double sent = floor(p->offered_fps * c.trial_s + 0.5);
			double ok = p->offered_fps > DUT_T ? fmin(sent, floor(DUT_T * c.trial_s + DUT_B)) : sent;
			assert_true(p->offered_fps == floor(DUT_TOP * (100 - 10 * k) / 100));
			assert_true(p->sent == sent);
			assert_true(p->lost == sent - ok);
			assert_true(fabs(p->loss_pct - (sent - ok) / sent * 100) < 1e-9);
		}
		assert_int_equal(fl->points[9].lost, 0);
		/* back-to-back: a burst at the top rate passes iff n <= B / (1 - T / top) */
		const struct txs_rfc2544_b2b *bb = &r->b2b[i];
		double b2b = DUT_B / (1 - DUT_T / DUT_TOP);
		assert_int_equal(bb->n_trials, 2);
		for (unsigned k = 0; k < bb->n_trials; k++) {
			double f = (double)bb->trials[k].frames;
			if (!(f <= b2b && f > b2b * (1 - c.b2b_precision)))
				fail_msg("size %u burst search %u: %g frames, truth %g", bb->size, k, f, b2b);
			assert_true(bb->trials[k].burst_fps == DUT_TOP);
			assert_true(bb->trials[k].confirmed);
		}
		assert_true(fabs(bb->buffer_s - bb->frames / DUT_TOP) < 1e-12);
	}
	/* the result line: the shape, the numbers of the result */
	json_t *res = load_line(lines, "result");
	assert_non_null(res);
	assert_string_equal(json_string_value(json_object_get(res, "kind")), "rfc2544");
	const json_t *tp = json_object_get(res, "throughput"), *bb = json_object_get(res, "back_to_back"),
		     *fl = json_object_get(res, "frame_loss");
	assert_int_equal(json_array_size(tp), 2);
	assert_int_equal(json_array_size(bb), 2);
	assert_int_equal(json_array_size(fl), 2);
	const json_t *t0 = json_array_get(tp, 0);
	assert_int_equal(json_integer_value(json_object_get(t0, "size")), 64);
	assert_string_equal(json_string_value(json_object_get(json_array_get(tp, 1), "size")), "imix");
	assert_true(jd(t0, "fps") == r->tput[0].fps);
	assert_true(fabs(jd(t0, "bits") - r->tput[0].fps * 64 * 8) < 1e-6);
	const json_t *lat = json_object_get(t0, "latency_ns");
	assert_true(jd(lat, "mean") == 2000 && jd(lat, "p99.9") == 5119);
	const json_t *b0 = json_array_get(bb, 0);
	assert_true(jd(b0, "frames") == r->b2b[0].frames && jd(b0, "burst_fps") == DUT_TOP);
	assert_int_equal(json_array_size(json_object_get(b0, "trials")), 2);
	const json_t *p0 = json_array_get(json_object_get(json_array_get(fl, 0), "points"), 0);
	assert_true(jd(p0, "offered_fps") == DUT_TOP && jd(p0, "loss_pct") == r->floss[0].points[0].loss_pct);
	/* every trial line names its test, size and verdict */
	json_t *tr = load_line(lines, "trial");
	assert_non_null(tr);
	assert_string_equal(json_string_value(json_object_get(tr, "kind")), "rfc2544");
	assert_non_null(json_object_get(tr, "pass"));
	json_decref(tr);

	/* the report: its files, and its CSVs' numbers are the JSON's */
	unsigned plots = 0;
	rc = txs_rfc2544_report(repdir, r, &c, &plots, err, sizeof(err));
	if (rc < 0)
		fail_msg("report: %s", err);
	static const char *const files[] = { "report.md", "report.html", "result.json", "throughput.csv",
					     "frame_loss.csv", "back_to_back.csv" };
	char path[600];
	struct stat sb;
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", repdir, files[i]);
		if (stat(path, &sb) < 0 || sb.st_size == 0)
			fail_msg("report: no %s", files[i]);
	}
	if (access("/usr/bin/gnuplot", X_OK) == 0) {
		assert_int_equal(plots, 3);
		static const char *const png[] = { "throughput.png", "frame_loss.png", "latency.png" };
		for (unsigned i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), "%s/%s", repdir, png[i]);
			assert_int_equal(stat(path, &sb), 0);
			assert_true(sb.st_size > 1000);
		}
	}
	snprintf(path, sizeof(path), "%s/throughput.csv", repdir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[1024];
	assert_non_null(fgets(line, sizeof(line), f)); /* header */
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	double csv_fps, csv_bits, csv_frame;
	assert_int_equal(sscanf(line, "64,%lf,%lf,%lf,", &csv_frame, &csv_fps, &csv_bits), 3);
	assert_true(csv_fps == jd(t0, "fps") && csv_bits == jd(t0, "bits"));
	snprintf(path, sizeof(path), "%s/result.json", repdir);
	json_t *again = load_line(path, "result");
	assert_non_null(again);
	json_object_del(again, "seconds");
	json_object_del(res, "seconds");
	assert_true(json_equal(again, res));
	json_decref(again);
	json_decref(res);
	snprintf(path, sizeof(path), "%s/report.md", repdir);
	size_t n = 0;
	FILE *md = fopen(path, "r");
	assert_non_null(md);
	char *text = malloc(1 << 16);
	n = fread(text, 1, (1 << 16) - 1, md);
	text[n] = 0;
	fclose(md);
	char want[64];
	snprintf(want, sizeof(want), "| 64 | %.0f |", r->tput[0].fps);
	if (!strstr(text, want))
		fail_msg("report.md has no row '%s'", want);
	snprintf(want, sizeof(want), "| 64 | %.0f | 2 | 2000 | 1000 | 2047 | 3071 | 4095 | 5119 | 6000 |", r->tput[0].fps);
	if (!strstr(text, want))
		fail_msg("report.md has no latency row '%s'", want);
	free(text);
	txs_rfc2544_close(s);
}

/* ---- the stop flag and a remote receiver ------------------------------------------------ */

static volatile sig_atomic_t g_stop;

struct stopper {
	unsigned after, seen;
};

static void stop_after(const struct txs_rfc2544_trial *t, void *arg)
{
	struct stopper *st = arg;
	(void)t;
	if (++st->seen == st->after)
		g_stop = 1;
}

/* The stop flag set by the 5th trial's hook: the run ends with -EINTR before
 * a 6th, its result incomplete and holding what ran */
static void stop_mid_run(void **st)
{
	(void)st;
	dut_env();
	struct txs_rfc2544_conf c;
	txs_rfc2544_conf_init(&c);
	c.exe = dut;
	c.dest = "198.18.0.2";
	c.sizes[0] = 128;
	c.n_sizes = 1;
	c.settle_s = 0;
	c.stop = &g_stop;
	g_stop = 0;
	char err[512];
	struct txs_rfc2544 *s;
	assert_int_equal(txs_rfc2544_open(&s, &c, err, sizeof(err)), 0);
	struct stopper sp = { .after = 5 };
	struct txs_rfc2544_hooks h = { .trial = stop_after, .arg = &sp };
	assert_int_equal(txs_rfc2544_run(s, &h, err, sizeof(err)), -EINTR);
	assert_int_equal(sp.seen, 5);
	const struct txs_rfc2544_result *r = txs_rfc2544_result(s);
	assert_false(r->complete);
	assert_int_equal(r->trials, 5);
	assert_int_equal(r->tput[0].n_runs, 0); /* the search did not end */
	txs_rfc2544_close(s);
	g_stop = 0;
}

/* A remote receiver: the session's hooks in place of a local recv. This one
 * answers with the bucket of rfc2544_dut.sh, computed here from the
 * sender's summary the session hands it. */
struct remote_dut {
	unsigned begins, ends;
	uint16_t port;
	double secs;
	bool bad_order;
};

static int rd_begin(void *arg, uint16_t port, const char *dev, double secs, char *err, size_t errlen)
{
	struct remote_dut *d = arg;
	(void)err;
	(void)errlen;
	d->bad_order |= d->begins != d->ends || strcmp(dev, "udp") != 0;
	d->begins++;
	d->port = port;
	d->secs = secs;
	return 0;
}

static int rd_end(void *arg, const char *sj, const char *rj, char *err, size_t errlen)
{
	struct remote_dut *d = arg;
	d->bad_order |= d->begins != d->ends + 1;
	d->ends++;
	FILE *f = fopen(sj, "r");
	if (!f) {
		snprintf(err, errlen, "no sender summary");
		return -EIO;
	}
	char line[512];
	char *got = fgets(line, sizeof(line), f);
	fclose(f);
	json_t *j = got ? json_loads(line, 0, NULL) : NULL;
	if (!j) {
		snprintf(err, errlen, "bad sender summary");
		return -EIO;
	}
	double p = json_number_value(json_object_get(j, "packets")), r = json_number_value(json_object_get(j, "pps"));
	json_decref(j);
	double ok = p;
	if (r > DUT_T)
		ok = fmin(p, floor(DUT_T * p / r + DUT_B));
	FILE *o = fopen(rj, "w");
	if (!o)
		return -EIO;
	fprintf(o, "{\"type\":\"summary\",\"kind\":\"recv\",\"received\":%.0f,\"lost\":%.0f,\"lost_exact\":true,\"pps\":%g}\n", ok,
		p - ok, r);
	fclose(o);
	return 0;
}

static void remote_receiver(void **st)
{
	(void)st;
	dut_env();
	struct remote_dut d = { 0 };
	struct txs_rfc2544_remote rem = { .begin = rd_begin, .end = rd_end, .arg = &d };
	struct txs_rfc2544_conf c;
	txs_rfc2544_conf_init(&c);
	c.exe = dut;
	c.dest = "2001:2::2";
	c.port = 6000;
	c.sizes[0] = 1518;
	c.n_sizes = 1;
	c.tests = TXS_RFC2544_THROUGHPUT | TXS_RFC2544_LATENCY;
	c.repeat = 1;
	c.latency_trials = 1;
	c.settle_s = 0;
	c.remote = &rem;
	char err[512];
	struct txs_rfc2544 *s;
	assert_int_equal(txs_rfc2544_open(&s, &c, err, sizeof(err)), 0);
	int rc = txs_rfc2544_run(s, NULL, err, sizeof(err));
	if (rc < 0)
		fail_msg("run: %s", err);
	const struct txs_rfc2544_result *r = txs_rfc2544_result(s);
	assert_false(d.bad_order);
	assert_int_equal(d.begins, r->trials);
	assert_int_equal(d.ends, r->trials);
	assert_int_equal(d.port, 6000);
	assert_true(d.secs == c.trial_s); /* the last trial: latency, full length */
	assert_int_equal(r->family, AF_INET6);
	assert_int_equal(r->tput[0].payload, 1452);
	double truth = DUT_T + DUT_B / c.trial_s;
	assert_true(r->tput[0].fps <= truth && r->tput[0].fps > truth * (1 - c.precision));
	assert_false(r->tput[0].have_lat); /* this receiver reports no latency */
	txs_rfc2544_close(s);
}

/* A trial that cannot run ends the run with -EIO naming it; the result holds what ran */
static void failing_child(void **st)
{
	(void)st;
	struct txs_rfc2544_conf c;
	txs_rfc2544_conf_init(&c);
	c.exe = "/bin/false";
	c.dest = "198.18.0.2";
	char err[512];
	struct txs_rfc2544 *s;
	/* the sender's check (send --dry-run) fails first */
	assert_int_equal(txs_rfc2544_open(&s, &c, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "sender check failed"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(payloads),         cmocka_unit_test(size_and_test_lists),
		cmocka_unit_test(frame_loss_steps), cmocka_unit_test(conf_checks),
		cmocka_unit_test(suite_against_bucket), cmocka_unit_test(failing_child),
		cmocka_unit_test(stop_mid_run),     cmocka_unit_test(remote_receiver),
	};
	return cmocka_run_group_tests(tests, t_tmpdir_setup, t_tmpdir_teardown);
}
