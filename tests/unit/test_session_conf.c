/* SPDX-License-Identifier: MIT */
/* The session structs as a library user fills them (issue 30, item 2):
 * a zeroed config and NULL strings take the defaults, every range is
 * refused by the check (and by open) before anything starts, with one line
 * naming the option by its long name and the value; CPUs the process may
 * not use are refused at check and open, never at run; a receive check
 * leaves RLIMIT_NOFILE alone; txs_strerror speaks the library's meanings. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <txscale/session_send.h>
#include <txscale/session_recv.h>
#include <txscale/version.h>
#include "test_util.h"

/* ---- send ------------------------------------------------------------------------- */

static void send_base(struct txs_send_conf *c)
{
	txs_send_conf_init(c);
	c->dest = "198.18.0.2";
	c->seed = 7;
	c->interval = 0;
	c->count = 100;
}

/* Refused by the check and by open, both with exactly want. */
static void send_refused(const struct txs_send_conf *c, const char *want)
{
	char err[512] = "";
	int rc = txs_send_conf_check(c, NULL, err, sizeof(err));
	if (rc != -EINVAL || strcmp(err, want) != 0)
		fail_msg("check: %d '%s', want -EINVAL '%s'", rc, err, want);
	struct txs_send *s = (struct txs_send *)1;
	err[0] = 0;
	rc = txs_send_open(&s, c, err, sizeof(err));
	if (rc != -EINVAL || strcmp(err, want) != 0)
		fail_msg("open: %d '%s', want -EINVAL '%s'", rc, err, want);
	assert_null(s);
}

/* Opened, run to its count on the dummy device: exact, not failed. */
static void send_runs(const struct txs_send_conf *c, uint64_t want)
{
	char err[512] = "";
	struct txs_send *s = NULL;
	int rc = txs_send_open(&s, c, err, sizeof(err));
	if (rc)
		fail_msg("open: %d (%s)", rc, err);
	const struct txs_send_result *r;
	assert_int_equal(txs_send_run(s, NULL, &r), 0);
	assert_false(r->failed);
	assert_int_equal(r->sum.packets, want);
	txs_send_close(s);
}

/* A zeroed config crashes nothing: refused for its missing destination,
 * then, with a destination and a port, it runs on the defaults. */
static void send_zeroed(void **st)
{
	(void)st;
	struct txs_send_conf c;
	memset(&c, 0, sizeof(c));
	send_refused(&c, "bad value for --port: '0': expected a port 1..65535 (or a --dport range)");
	c.port = 5201;
	send_refused(&c, "no destination: give dest (DEST) or --dst ADDRS");
	c.dest = "198.18.0.2";
	struct txs_send_plan pl;
	char err[512] = "";
	assert_int_equal(txs_send_conf_check(&c, &pl, err, sizeof(err)), 0);
	assert_int_equal(pl.length, 16);
	assert_int_equal(pl.threads, 1);
	assert_true(pl.time == 10);
	c.count = 50;
	send_runs(&c, 50);
}

/* Each string NULL on its own: the default, no crash, the run exact. */
static void send_null_strings(void **st)
{
	(void)st;
	for (int i = 0; i < 7; i++) {
		struct txs_send_conf c;
		send_base(&c);
		const char **f[] = { &c.sport, &c.length, &c.dev, &c.ident, &c.pace, &c.timestamps, &c.pace_slack };
		*f[i] = NULL;
		char err[512] = "";
		int rc = txs_send_conf_check(&c, NULL, err, sizeof(err));
		if (rc)
			fail_msg("string %d NULL: %d (%s)", i, rc, err);
		send_runs(&c, 100);
	}
	/* all of them at once, and the dport range standing for the port */
	struct txs_send_conf c;
	send_base(&c);
	c.sport = c.length = c.dev = c.ident = c.pace = c.timestamps = c.pace_slack = NULL;
	c.port = 0;
	c.dport = "6000-6003";
	send_runs(&c, 100);
}

struct send_case {
	const char *want;
	void (*set)(struct txs_send_conf *c);
};


static void s_rate_nan(struct txs_send_conf *c) { c->rate.value = NAN; }
static void s_rate_inf(struct txs_send_conf *c) { c->rate.value = INFINITY; }
static void s_rate_neg(struct txs_send_conf *c) { c->rate.value = -5; }
static void s_rate_huge(struct txs_send_conf *c) { c->rate.value = 2e12; }
static void s_time_neg(struct txs_send_conf *c) { c->time = -1; }
static void s_time_nan(struct txs_send_conf *c) { c->time = NAN; }
static void s_time_inf(struct txs_send_conf *c) { c->time = -INFINITY; }
static void s_interval_nan(struct txs_send_conf *c) { c->interval = NAN; }
static void s_ramp_neg(struct txs_send_conf *c) { c->ramp.secs = -1; }
static void s_ramp_to_nan(struct txs_send_conf *c)
{
	c->ramp.secs = 2;
	c->ramp.from.value = 10;
	c->ramp.to.value = NAN;
}
static void s_burst_off_neg(struct txs_send_conf *c) { c->burst_on = 4; c->burst_off_us = -3; }
static void s_replay_speed_neg(struct txs_send_conf *c) { c->replay_speed = -2; }
static void s_burst(struct txs_send_conf *c) { c->burst = 100000; }
static void s_burst_257(struct txs_send_conf *c) { c->burst = 257; }
static void s_threads(struct txs_send_conf *c) { c->threads = 300; }
static void s_ncpus(struct txs_send_conf *c) { c->n_cpus = TXS_MAX_CORES + 1; }
static void s_cpu_neg(struct txs_send_conf *c) { c->n_cpus = 1; c->cpus[0] = -5; }
static void s_cpu_far(struct txs_send_conf *c) { c->n_cpus = 1; c->cpus[0] = CPU_SETSIZE - 1; }
static void s_cpu_beyond(struct txs_send_conf *c) { c->n_cpus = 1; c->cpus[0] = CPU_SETSIZE + 7; }
static void s_ttl(struct txs_send_conf *c) { c->ttl = 300; }
static void s_tos(struct txs_send_conf *c) { c->tos = 999; }
static void s_mtu(struct txs_send_conf *c) { c->mtu = 10; }
static void s_port0(struct txs_send_conf *c) { c->port = 0; }
static void s_links(struct txs_send_conf *c) { c->links = 17; }
static void s_flow_base(struct txs_send_conf *c) { c->flow_base = 1ull << 33; }
static void s_dest_bad(struct txs_send_conf *c) { c->dest = "198.18.0.300"; }
static void s_mac_bad(struct txs_send_conf *c) { c->dst_mac = "00:11"; }
static void s_par_aff(struct txs_send_conf *c)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	int first = 0;
	while (!CPU_ISSET(first, &set))
		first++;
	c->threads = 4;
	c->n_cpus = 1;
	c->cpus[0] = first;
}

static void send_ranges(void **st)
{
	(void)st;
	char far[128], beyond[128];
	snprintf(far, sizeof(far), "bad value for --affinity: CPU %d (entry 0): not a CPU this process may run on",
		 CPU_SETSIZE - 1);
	snprintf(beyond, sizeof(beyond), "bad value for --affinity: CPU %d (entry 0): not a CPU this process may "
		 "run on", CPU_SETSIZE + 7);
	char ncpus[96];
	snprintf(ncpus, sizeof(ncpus), "bad value for --affinity: %u CPUs: at most %u", TXS_MAX_CORES + 1,
		 TXS_MAX_CORES);
	const struct send_case cases[] = {
		{ "bad value for --bitrate: 'nan': expected bits/s of UDP payload or datagrams/s, 0 (unlimited) .. 1e12", s_rate_nan },
		{ "bad value for --bitrate: 'inf': expected bits/s of UDP payload or datagrams/s, 0 (unlimited) .. 1e12", s_rate_inf },
		{ "bad value for --bitrate: '-5': expected bits/s of UDP payload or datagrams/s, 0 (unlimited) .. 1e12", s_rate_neg },
		{ "bad value for --bitrate: '2e+12': expected bits/s of UDP payload or datagrams/s, 0 (unlimited) .. 1e12", s_rate_huge },
		{ "bad value for --time: '-1': expected seconds 0 .. 1e7 (0: 10 s unless --packets)", s_time_neg },
		{ "bad value for --time: 'nan': expected seconds 0 .. 1e7 (0: 10 s unless --packets)", s_time_nan },
		{ "bad value for --time: '-inf': expected seconds 0 .. 1e7 (0: 10 s unless --packets)", s_time_inf },
		{ "bad value for --interval: 'nan': expected seconds 0 (none) .. 1e7", s_interval_nan },
		{ "bad value for --ramp: '-1': expected ramp seconds 0 (no ramp) .. 1e7", s_ramp_neg },
		{ "bad value for --ramp: 'nan': expected TO in packets/s or bits/s, 0 .. 1e12", s_ramp_to_nan },
		{ "bad value for --burst-off: '-3': expected microseconds 0 .. 1e12", s_burst_off_neg },
		{ "bad value for --replay-speed: '-2': expected a factor over 0, at most 1e9", s_replay_speed_neg },
		{ "bad value for --burst: '100000': expected 0..256", s_burst },
		{ "bad value for --burst: '257': expected 0..256", s_burst_257 },
		{ "bad value for --parallel: '300': expected 0..256", s_threads },
		{ ncpus, s_ncpus },
		{ "bad value for --affinity: CPU -5 (entry 0): not a CPU this process may run on", s_cpu_neg },
		{ far, s_cpu_far },
		{ beyond, s_cpu_beyond },
		{ "bad value for --ttl: '300': expected 1..255", s_ttl },
		{ "bad value for --tos: '999': expected 0..255", s_tos },
		{ "bad value for --mtu: '10': expected 576..65535 bytes (0: the device's)", s_mtu },
		{ "bad value for --port: '0': expected a port 1..65535 (or a --dport range)", s_port0 },
		{ "bad value for --links: '17': expected 0..16", s_links },
		{ "bad value for --flow-base: '8589934592': expected 0..4294967295", s_flow_base },
		{ "bad value for dest (DEST): '198.18.0.300': expected an IPv4 or IPv6 address", s_dest_bad },
		{ "bad value for --dst-mac: '00:11': expected a MAC address, six hex bytes separated by ':'", s_mac_bad },
		{ "--parallel 4 needs at least 4 CPUs in --affinity (got 1)", s_par_aff },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct txs_send_conf c;
		send_base(&c);
		cases[i].set(&c);
		send_refused(&c, cases[i].want);
	}
}

/* -A: a CPU given twice is refused; a CPU the process may use runs pinned,
 * exact and not failed. The CPU outside the mask (if there is one) fails at
 * open, not at run. */
static void send_cpus(void **st)
{
	(void)st;
	cpu_set_t set;
	CPU_ZERO(&set);
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	int first = -1, outside = -1;
	for (int i = 0; i < CPU_SETSIZE && (first < 0 || outside < 0); i++) {
		if (CPU_ISSET(i, &set) && first < 0)
			first = i;
		if (!CPU_ISSET(i, &set) && outside < 0)
			outside = i;
	}
	assert_true(first >= 0);
	struct txs_send_conf c;
	send_base(&c);
	c.n_cpus = 2;
	c.cpus[0] = c.cpus[1] = first;
	char want[128];
	snprintf(want, sizeof(want), "bad value for --affinity: CPU %d given twice (entries 0 and 1)", first);
	send_refused(&c, want);
	send_base(&c);
	c.n_cpus = 1;
	c.cpus[0] = outside;
	snprintf(want, sizeof(want), "bad value for --affinity: CPU %d (entry 0): not a CPU this process may run on",
		 outside);
	send_refused(&c, want);
	send_base(&c);
	c.n_cpus = 1;
	c.cpus[0] = first;
	send_runs(&c, 100);
}

/* A run that fails says why: its rc, failed, and the problem line naming
 * the device and the reason (a pcap file on /dev/full: ENOSPC). */
static void send_run_failure_reason(void **st)
{
	(void)st;
	if (access("/dev/full", W_OK) != 0)
		skip();
	struct txs_send_conf c;
	send_base(&c);
	c.dev = "pcap:/dev/full";
	c.count = 100000;
	char err[512] = "";
	struct txs_send *s = NULL;
	int rc = txs_send_open(&s, &c, err, sizeof(err));
	if (rc)
		fail_msg("open: %d (%s)", rc, err);
	const struct txs_send_result *r;
	assert_int_equal(txs_send_run(s, NULL, &r), -ENOSPC);
	assert_int_equal(r->rc, -ENOSPC);
	assert_true(r->failed);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	txs_send_result_problems(f, "", false, r);
	fclose(f);
	assert_non_null(strstr(buf, "--dev pcap:/dev/full: "));
	assert_non_null(strstr(buf, strerror(ENOSPC)));
	free(buf);
	txs_send_close(s);
}

/* A check leaves the config as it was (it works on a copy). */
static void send_check_pure(void **st)
{
	(void)st;
	struct txs_send_conf c, before;
	memset(&c, 0, sizeof(c));
	c.dest = "198.18.0.2";
	c.port = 9;
	before = c;
	char err[512];
	assert_int_equal(txs_send_conf_check(&c, NULL, err, sizeof(err)), 0);
	assert_memory_equal(&c, &before, sizeof(c));
}

/* ---- recv ------------------------------------------------------------------------- */

static void recv_refused(const struct txs_recv_conf *c, const char *want)
{
	char err[512] = "";
	int rc = txs_recv_conf_check(c, err, sizeof(err));
	if (rc != -EINVAL || strcmp(err, want) != 0)
		fail_msg("check: %d '%s', want -EINVAL '%s'", rc, err, want);
	struct txs_recv *s = (struct txs_recv *)1;
	err[0] = 0;
	rc = txs_recv_open(&s, c, err, sizeof(err));
	if (rc != -EINVAL || strcmp(err, want) != 0)
		fail_msg("open: %d '%s', want -EINVAL '%s'", rc, err, want);
	assert_null(s);
}

struct recv_case {
	const char *want;
	void (*set)(struct txs_recv_conf *c);
};

static void r_time_neg(struct txs_recv_conf *c) { c->time = -2; }
static void r_time_nan(struct txs_recv_conf *c) { c->time = NAN; c->idle = 1; }
static void r_time_inf(struct txs_recv_conf *c) { c->time = INFINITY; }
static void r_forever(struct txs_recv_conf *c) { c->time = TXS_RECV_NO_TIME_LIMIT; c->idle = 0; }
static void r_forever_expect(struct txs_recv_conf *c) { c->time = TXS_RECV_NO_TIME_LIMIT; c->expect = 10; }
static void r_idle_neg(struct txs_recv_conf *c) { c->idle = -0.5; }
static void r_idle_nan(struct txs_recv_conf *c) { c->idle = NAN; }
static void r_interval_inf(struct txs_recv_conf *c) { c->interval = INFINITY; }
static void r_outage_neg(struct txs_recv_conf *c) { c->outage_min = -1; }
static void r_outage_nan(struct txs_recv_conf *c) { c->outage_min = NAN; }
static void r_threads(struct txs_recv_conf *c) { c->threads = 300; }
static void r_naff(struct txs_recv_conf *c) { c->n_affinity = 300; }
static void r_cpu_far(struct txs_recv_conf *c) { c->cpu[0] = 100000; }
static void r_cpu_neg(struct txs_recv_conf *c) { c->threads = 2; c->cpu[1] = -7; }
static void r_window(struct txs_recv_conf *c) { c->window = 32; }
static void r_batch(struct txs_recv_conf *c) { c->batch = 5000; }
static void r_max_flows(struct txs_recv_conf *c) { c->max_flows = 1u << 23; }
static void r_port0(struct txs_recv_conf *c) { c->port = "0"; }
static void r_rcvbuf(struct txs_recv_conf *c) { c->rcvbuf = 1ull << 40; }

static void recv_ranges(void **st)
{
	(void)st;
	const struct recv_case cases[] = {
		{ "bad value for --time: '-2': expected seconds 0 (-t 0: no limit, needs --idle) .. 1e7", r_time_neg },
		{ "bad value for --time: 'nan': expected seconds 0 (-t 0: no limit, needs --idle) .. 1e7", r_time_nan },
		{ "bad value for --time: 'inf': expected seconds 0 (-t 0: no limit, needs --idle) .. 1e7", r_time_inf },
		{ "--time 0 (no time limit) needs --idle SEC to end the run", r_forever },
		{ "--time 0 (no time limit) needs --idle SEC to end the run", r_forever_expect },
		{ "bad value for --idle: '-0.5': expected seconds 0 (never) .. 1e7", r_idle_neg },
		{ "bad value for --idle: 'nan': expected seconds 0 (never) .. 1e7", r_idle_nan },
		{ "bad value for --interval: 'inf': expected seconds 0 (none) .. 1e7", r_interval_inf },
		{ "bad value for --outage-min: '-1': expected at most 3600 seconds", r_outage_neg },
		{ "bad value for --outage-min: 'nan': expected at most 3600 seconds", r_outage_nan },
		{ "bad value for --parallel: '300': at most 256", r_threads },
		{ "bad value for --affinity: 300 CPUs: at most 256", r_naff },
		{ "bad value for --affinity: CPU 100000 (entry 0): not a CPU this process may run on", r_cpu_far },
		{ "bad value for --affinity: CPU -7 (entry 1): not a CPU this process may run on", r_cpu_neg },
		{ "bad value for --window: '32': expected a power of two 64..1048576", r_window },
		{ "bad value for --batch: '5000': at most 1024", r_batch },
		{ "bad value for --max-flows: '8388608': at most 4194304", r_max_flows },
		{ "bad value for --port: '0': expected a port 1..65535 or a range LO-HI", r_port0 },
		{ "bad value for --rcvbuf: '1099511627776': at most 2147483647 bytes", r_rcvbuf },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct txs_recv_conf c;
		txs_recv_conf_init(&c);
		c.bind = "127.0.0.1";
		cases[i].set(&c);
		recv_refused(&c, cases[i].want);
	}
}

/* A zeroed receive config: every string NULL (udp, port 5201, kernel
 * stamps, txscale payload); its cpu[0] is 0, refused only where CPU 0 is
 * not the process's. */
static void recv_zeroed(void **st)
{
	(void)st;
	struct txs_recv_conf c;
	memset(&c, 0, sizeof(c));
	cpu_set_t set;
	CPU_ZERO(&set);
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	char err[512] = "";
	int rc = txs_recv_conf_check(&c, err, sizeof(err));
	if (CPU_ISSET(0, &set))
		assert_int_equal(rc, 0);
	else
		assert_string_equal(err, "bad value for --affinity: CPU 0 (entry 0): not a CPU this process may run on");
	c.cpu[0] = -1;
	assert_int_equal(txs_recv_conf_check(&c, err, sizeof(err)), 0);
}

/* The check leaves RLIMIT_NOFILE as it was even when a port range needs a
 * higher soft limit; a range the hard limit cannot hold is -EMFILE. */
static void recv_check_keeps_nofile(void **st)
{
	(void)st;
	struct rlimit saved, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 2200)
		skip();
	low = saved;
	low.rlim_cur = 256;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	struct txs_recv_conf c;
	txs_recv_conf_init(&c);
	c.bind = "127.0.0.1";
	c.port = "61000-61999";
	c.threads = 2;
	char err[512] = "";
	int rc = txs_recv_conf_check(&c, err, sizeof(err));
	struct rlimit now;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(now.rlim_cur, 256);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	/* a hard limit below the need, in a child (lowering it is for good):
	 * refused, still unchanged */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit hard = { 256, 1024 };
		if (setrlimit(RLIMIT_NOFILE, &hard) != 0)
			_exit(2);
		rc = txs_recv_conf_check(&c, err, sizeof(err));
		if (rc != -EMFILE || strcmp(err, "bad value for --port: '61000-61999': a socket per port and thread "
				    "needs 2064 open files, the hard limit is 1024 (ulimit -Hn)") != 0)
			_exit(3);
		if (getrlimit(RLIMIT_NOFILE, &now) != 0 || now.rlim_cur != 256 || now.rlim_max != 1024)
			_exit(4);
		_exit(0);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
}

/* ---- txs_strerror -------------------------------------------------------------------- */

static void strerror_own(void **st)
{
	(void)st;
	assert_string_not_equal(txs_strerror(-EINVAL), strerror(EINVAL));
	assert_non_null(strstr(txs_strerror(-EINVAL), "names the option"));
	assert_string_equal(txs_strerror(EALREADY), txs_strerror(-EALREADY));
	assert_non_null(strstr(txs_strerror(-EALREADY), "runs once"));
	assert_non_null(strstr(txs_strerror(-EMFILE), "RLIMIT_NOFILE"));
	assert_non_null(strstr(txs_strerror(-ESTALE), "summary"));
	assert_string_equal(txs_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(txs_strerror(0), "success");
}

/* The headers' version is the library's (one source: txscale/version.h). */
static void version_parts(void **st)
{
	(void)st;
	char want[32];
	snprintf(want, sizeof(want), "%d.%d.%d", txs_version_major(), txs_version_minor(), txs_version_patch());
	assert_string_equal(txs_version(), want);
	assert_string_equal(txs_version(), TXS_VERSION_STRING);
	assert_int_equal(txs_version_major(), TXS_VERSION_MAJOR);
	assert_int_equal(txs_version_minor(), TXS_VERSION_MINOR);
	assert_int_equal(txs_version_patch(), TXS_VERSION_PATCH);
	assert_true(TXS_VERSION_CHECK(TXS_VERSION_MAJOR, TXS_VERSION_MINOR, TXS_VERSION_PATCH));
	assert_false(TXS_VERSION_CHECK(TXS_VERSION_MAJOR + 1, 0, 0));
}

T_MAIN(cmocka_unit_test(send_zeroed),
       cmocka_unit_test(send_null_strings),
       cmocka_unit_test(send_ranges),
       cmocka_unit_test(send_cpus),
       cmocka_unit_test(send_run_failure_reason),
       cmocka_unit_test(send_check_pure),
       cmocka_unit_test(recv_ranges),
       cmocka_unit_test(recv_zeroed),
       cmocka_unit_test(recv_check_keeps_nofile),
       cmocka_unit_test(strerror_own),
       cmocka_unit_test(version_parts))
