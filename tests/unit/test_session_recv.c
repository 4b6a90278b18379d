/* SPDX-License-Identifier: MIT */
/* The receive session through the library alone (<txscale/session_recv.h>):
 * a pcap file written here, read with exact counts against a sender summary
 * (a file, or the text the sender_summary hook hands over, or none when it
 * never comes); configs refused with their messages; a live udp session on loopback ended
 * by the stop hook and by txs_recv_stop, its interval callback's counts
 * adding up to the result's. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/rx.h>
#include <txscale/session_recv.h>
#define T_TMPDIR_NAME "txs_sess_recv"
#include "test_tmpdir.h"
#include "test_util.h"

static uint32_t mkframe(uint8_t *buf, uint32_t flow, uint64_t seq)
{
	struct txs_flow_spec sp = { 0 };
	txs_addr_parse(&sp.src, "198.18.0.1");
	txs_addr_parse(&sp.dst, "198.18.0.2");
	sp.sport = 40000;
	sp.dport = 5201;
	sp.payload_len = 32;
	sp.flow_id = flow;
	struct txs_tmpl t;
	assert_int_equal(txs_tmpl_build(&t, &sp), 0);
	uint32_t n = txs_tmpl_patch(&t, buf, (uint16_t)seq, seq, 1000);
	txs_tmpl_free(&t);
	return n;
}

/* Two flows of 500 datagrams: flow 1's sequence 100 missing, flow 0's
 * sequence 5 twice: 1000 records. */
static void write_pcap(const char *path)
{
	uint8_t *buf = malloc(1 << 20), fr[256];
	assert_non_null(buf);
	size_t off = txs_pcap_write_hdr(buf, 65535);
	for (uint64_t s = 0; s < 500; s++)
		for (uint32_t f = 0; f < 2; f++) {
			if (f == 1 && s == 100)
				continue;
			unsigned copies = f == 0 && s == 5 ? 2 : 1;
			for (unsigned c = 0; c < copies; c++) {
				uint32_t n = mkframe(fr, f, s);
				off += txs_pcap_write_rec(buf + off, fr, n, 1700000000000000000ull + s * 1000 + f);
			}
		}
	FILE *o = fopen(path, "wb");
	assert_non_null(o);
	assert_int_equal(fwrite(buf, 1, off, o), off);
	assert_int_equal(fclose(o), 0);
	free(buf);
}

static const char send_summary[] =
	"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":1000,\"drops\":0,"
	"\"threads\":[{\"id\":0,\"packets\":500},{\"id\":1,\"packets\":500}]}\n";

static void write_text(const char *path, const char *text)
{
	FILE *o = fopen(path, "w");
	assert_non_null(o);
	fputs(text, o);
	assert_int_equal(fclose(o), 0);
}

struct seen {
	struct txs_recv *s;
	unsigned ticks, intervals, ready, summaries, msgs;
	uint64_t iv_received;
	unsigned stop_after_ticks;     /* the stop hook's answer turns true then (0: never) */
	unsigned stop_after_intervals; /* txs_recv_stop from the interval hook (0: never) */
	int fd;                        /* live: the sending socket, one datagram per tick up to `send` */
	unsigned send, sent;
	struct sockaddr_in to;
	bool give;                     /* the sender_summary hook has the summary */
	unsigned asked;                /* ... and was asked this often */
	char msg1[256];                /* the first message */
};

static bool h_stop(void *u)
{
	struct seen *k = u;
	return k->stop_after_ticks && k->ticks >= k->stop_after_ticks;
}

static void h_tick(void *u, double el)
{
	struct seen *k = u;
	assert_true(el >= 0);
	k->ticks++;
	if (k->fd >= 0 && k->sent < k->send) {
		uint8_t p[64];
		struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = 7, .seq = k->sent, .ts_ns = txs_now_real_ns() };
		txs_ph_write(p, sizeof(p), &ph);
		assert_int_equal(sendto(k->fd, p, sizeof(p), 0, (struct sockaddr *)&k->to, sizeof(k->to)), sizeof(p));
		k->sent++;
	}
}

static void h_interval(void *u, const struct txs_recv_interval *iv)
{
	struct seen *k = u;
	assert_true(iv->end >= iv->start);
	assert_int_equal(iv->n, 1);
	assert_int_equal(iv->thread[0].received, iv->sum.received);
	k->intervals++;
	k->iv_received += iv->sum.received;
	if (k->stop_after_intervals && k->intervals == k->stop_after_intervals)
		txs_recv_stop(k->s);
}

static void h_ready(void *u)
{
	((struct seen *)u)->ready++;
}

static void h_summary(void *u, const char *text, size_t len)
{
	struct seen *k = u;
	assert_int_equal(len, strlen(send_summary));
	assert_memory_equal(text, send_summary, len);
	k->summaries++;
}

static void h_msg(void *u, const char *line)
{
	struct seen *k = u;
	fprintf(stderr, "msg: %s\n", line);
	if (!k->msgs++)
		snprintf(k->msg1, sizeof(k->msg1), "%s", line);
}

static int h_sender_summary(void *u, char **text, size_t *len)
{
	struct seen *k = u;
	k->asked++;
	if (!k->give)
		return -EAGAIN;
	*text = strdup(send_summary);
	*len = strlen(send_summary);
	return 0;
}

static struct txs_recv_hooks hooks_for(struct seen *k)
{
	return (struct txs_recv_hooks){ .user = k, .stop = h_stop, .tick = h_tick, .interval = h_interval,
					.ready = h_ready, .summary = h_summary, .msg = h_msg };
}

/* The pcap of pcap_exact without a summary file: the hook's text gives the
 * exact loss; a hook without one fails the run, named. */
static void summary_hook(void **st)
{
	(void)st;
	char pcap[128], dev[140], err[256];
	t_tmppath(pcap, sizeof(pcap), "hook.pcap");
	write_pcap(pcap);
	snprintf(dev, sizeof(dev), "pcap:%s", pcap);
	for (int give = 1; give >= 0; give--) {
		struct txs_recv_conf c;
		txs_recv_conf_init(&c);
		c.dev = dev;
		struct txs_recv *s;
		assert_int_equal(txs_recv_open(&s, &c, err, sizeof(err)), 0);
		struct seen k = { .s = s, .fd = -1, .give = give };
		struct txs_recv_hooks h = hooks_for(&k);
		h.sender_summary = h_sender_summary;
		int rc = txs_recv_run(s, &h);
		const struct txs_recv_result *r = txs_recv_result(s);
		assert_non_null(r);
		assert_int_equal(k.asked, 1); /* a file would be read at the end (an offline input never idles) */
		assert_int_equal(r->rx->received, 1000);
		if (give) {
			assert_int_equal(rc, 0);
			assert_int_equal(k.summaries, 1);
			assert_int_equal(k.msgs, 0);
			assert_true(r->rx->lost_exact);
			assert_int_equal(r->rx->expected, 1000);
			assert_int_equal(r->rx->lost, 1);
		} else {
			assert_int_equal(rc, -EAGAIN);
			assert_int_equal(k.summaries, 0);
			assert_int_equal(k.msgs, 2);
			assert_string_equal(k.msg1, "the sender's summary did not come");
			assert_false(r->rx->lost_exact && r->rx->expected == 1000);
		}
		txs_recv_close(s);
	}
}

static void pcap_exact(void **st)
{
	(void)st;
	char pcap[128], sum[128], dev[140], err[256];
	t_tmppath(pcap, sizeof(pcap), "in.pcap");
	t_tmppath(sum, sizeof(sum), "send.json");
	write_pcap(pcap);
	write_text(sum, send_summary);
	snprintf(dev, sizeof(dev), "pcap:%s", pcap);
	struct txs_recv_conf c;
	txs_recv_conf_init(&c);
	c.dev = dev;
	c.sender_summary = sum;
	assert_int_equal(txs_recv_conf_check(&c, err, sizeof(err)), 0);
	struct txs_recv *s;
	assert_int_equal(txs_recv_open(&s, &c, err, sizeof(err)), 0);
	assert_null(txs_recv_result(s));
	assert_int_equal(txs_recv_threads(s), 1);
	assert_true(txs_recv_input(s)->offline);
	struct seen k = { .s = s, .fd = -1 };
	struct txs_recv_hooks h = hooks_for(&k);
	assert_int_equal(txs_recv_run(s, &h), 0);
	assert_int_equal(txs_recv_run(s, &h), -EALREADY);
	assert_int_equal(k.ready, 1);
	assert_int_equal(k.summaries, 2); /* read at open, and at the end */
	assert_int_equal(k.msgs, 0);
	const struct txs_recv_result *r = txs_recv_result(s);
	assert_non_null(r);
	assert_int_equal(r->rx->received, 1000);
	assert_int_equal(r->rx->unique, 999);
	assert_int_equal(r->rx->duplicates, 1);
	assert_true(r->rx->lost_exact);
	assert_int_equal(r->rx->expected, 1000);
	assert_int_equal(r->rx->lost, 1);
	assert_int_equal(r->rx->n_flows, 2);
	assert_int_equal(r->is.pcap.records, 1000);
	assert_int_equal(r->n_threads, 1);
	assert_int_equal(r->thread[0].live.received, 1000);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	txs_recv_summary(f, true, r);
	fclose(f);
	assert_non_null(strstr(buf, "{\"type\":\"summary\",\"kind\":\"recv\",\"device\":\"pcap:"));
	assert_non_null(strstr(buf, "\"received\":1000,"));
	assert_non_null(strstr(buf, "\"records\":1000,"));
	assert_int_equal(buf[len - 1], '\n');
	free(buf);
	f = open_memstream(&buf, &len);
	txs_recv_result_text(f, r);
	fclose(f);
	assert_non_null(strstr(buf, "recv: pcap:"));
	free(buf);
	txs_recv_close(s);
}

/* Case i of refused(): a config with one fault. */
static void bad_conf(struct txs_recv_conf *c, unsigned i, const char *pcap_dev)
{
	txs_recv_conf_init(c);
	switch (i) {
	case 0: c->window = 100; break;
	case 1: c->v4 = c->v6 = true; break;
	case 2: c->port = "70000"; break;
	case 3: c->dev = pcap_dev; c->threads = 2; break;
	case 4: c->time = TXS_RECV_NO_TIME_LIMIT; break;
	case 5: c->payload = "iperf3"; c->verify = true; break;
	case 6: c->expect = 5; c->sender_summary = "x"; break;
	case 7: c->bind = "198.18.0.1"; c->v6 = true; break;
	case 8: c->rx_ts = "sometimes"; break;
	case 9: c->threads = 4; c->n_affinity = 2; break;
	default: c->outage_min = 4000; break;
	}
}

static void refused(void **st)
{
	(void)st;
	static const char *const want[] = {
		"bad value for --window: '100': expected a power of two",
		"--ipv4 and --ipv6 exclude each other",
		"bad value for --port: '70000': expected a port 1..65535 or a range LO-HI",
		"--dev pcap: is read by one thread: --parallel/--affinity give 2",
		"--time 0 (no time limit) needs --idle SEC to end the run",
		"--verify checks txscale's fill pattern: not with --payload iperf3 (a txscale sender's; use --expect N)",
		"--expect and --sender-summary exclude each other",
		"bad value for --bind: '198.18.0.1': not IPv6 (--ipv6)",
		"bad value for --rx-timestamps: 'sometimes': valid are kernel, user, hardware[:IFACE]",
		"--parallel 4 needs at least 4 CPUs in --affinity (got 2)",
		"bad value for --outage-min: '4000': expected at most 3600 seconds",
	};
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct txs_recv_conf c;
		char err[256] = "";
		bad_conf(&c, i, "pcap:/nonexistent.pcap");
		assert_int_equal(txs_recv_conf_check(&c, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, want[i]);
		struct txs_recv *s = (struct txs_recv *)&c;
		err[0] = 0;
		assert_int_equal(txs_recv_open(&s, &c, err, sizeof(err)), -EINVAL);
		assert_null(s);
		assert_string_equal(err, want[i]);
	}
	/* an input that cannot open, a sender summary that is not one */
	char bad[128], dev[140], err[256];
	struct txs_recv_conf c;
	struct txs_recv *s;
	txs_recv_conf_init(&c);
	c.dev = "pcap:/nonexistent/in.pcap";
	assert_int_equal(txs_recv_open(&s, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--dev pcap:/nonexistent/in.pcap: cannot open"));
	t_tmppath(bad, sizeof(bad), "bad.json");
	write_text(bad, "{\"type\":\"interval\"}\n");
	t_tmppath(dev, sizeof(dev), "in.pcap");
	char pdev[160];
	snprintf(pdev, sizeof(pdev), "pcap:%s", dev);
	write_pcap(dev);
	c.dev = pdev;
	c.sender_summary = bad;
	assert_int_equal(txs_recv_open(&s, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no valid txscale send summary line"));
}

static void summary_read(void **st)
{
	(void)st;
	char p[128], err[256], *text = NULL;
	size_t len = 0;
	struct txs_rx_expect *e = calloc(1, sizeof(*e));
	t_tmppath(p, sizeof(p), "s.json");
	write_text(p, send_summary);
	assert_int_equal(txs_recv_summary_read(p, 0, e, &text, &len, err, sizeof(err)), 0);
	assert_true(e->have_total);
	assert_int_equal(e->total, 1000);
	assert_int_equal(e->per_flow[1], 500);
	assert_int_equal(len, strlen(send_summary));
	free(text);
	/* a file older than the run: refused, e untouched */
	memset(e, 0, sizeof(*e));
	assert_int_equal(txs_recv_summary_read(p, txs_now_real_ns() + 60000000000ull, e, NULL, NULL, err, sizeof(err)),
			 -ESTALE);
	assert_false(e->have_total);
	assert_non_null(strstr(err, "was written before this recv started"));
	t_tmppath(p, sizeof(p), "missing.json");
	assert_int_equal(txs_recv_summary_read(p, 0, e, NULL, NULL, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot read --sender-summary"));
	free(e);
}

/* A live udp session on 127.0.0.1:20000 + (pid % 20000) + off that runs
 * at most 30 s, with the given interval and idle time (0: the defaults),
 * and k aimed at it: 20 datagrams to send, its socket open. Skips when the
 * port is taken. */
static struct txs_recv *live_open(struct seen *k, unsigned off, double interval, double idle)
{
	uint16_t port = (uint16_t)(20000 + getpid() % 20000 + off);
	char ps[8], err[256];
	snprintf(ps, sizeof(ps), "%u", port);
	struct txs_recv_conf c;
	txs_recv_conf_init(&c);
	c.dev = "udp";
	c.bind = "127.0.0.1";
	c.port = ps;
	c.time = 30;
	if (interval)
		c.interval = interval;
	if (idle)
		c.idle = idle;
	c.rcvbuf = 1 << 20;
	struct txs_recv *s;
	int rc = txs_recv_open(&s, &c, err, sizeof(err));
	if (rc == -EADDRINUSE)
		T_SKIP("port %u in use", port);
	assert_int_equal(rc, 0);
	*k = (struct seen){ .s = s, .send = 20 };
	k->fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(k->fd >= 0);
	k->to.sin_family = AF_INET;
	k->to.sin_port = htons(port);
	k->to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return s;
}

/* A live udp session on 127.0.0.1: 20 datagrams sent from the tick hook,
 * ended by the stop hook (by_hook) or by txs_recv_stop from the interval
 * hook; the run's time limit (30 s) is never reached. */
static void live_run(bool by_hook)
{
	struct seen k;
	struct txs_recv *s = live_open(&k, by_hook ? 0 : 1, 0.05, 0);
	if (by_hook)
		k.stop_after_ticks = 60;
	else
		k.stop_after_intervals = 8;
	struct txs_recv_hooks h = hooks_for(&k);
	uint64_t t0 = txs_now_mono_ns();
	assert_int_equal(txs_recv_run(s, &h), 0);
	assert_true(txs_now_mono_ns() - t0 < 20000000000ull);
	close(k.fd);
	assert_int_equal(k.ready, 1);
	assert_int_equal(k.sent, 20);
	assert_int_equal(k.msgs, 0);
	if (by_hook)
		assert_int_equal(k.ticks, 60);
	else
		assert_true(k.intervals >= 8);
	assert_true(k.intervals >= 2);
	const struct txs_recv_result *r = txs_recv_result(s);
	assert_non_null(r);
	assert_int_equal(r->rx->received, 20);
	assert_int_equal(r->rx->unique, 20);
	assert_int_equal(r->rx->lost, 0);
	assert_int_equal(k.iv_received, 20);
	assert_false(r->in->offline);
	txs_recv_close(s);
}

/* A live run with a sender summary (the hook's, once the 20 datagrams
 * were sent) ends as soon as they all arrived, not --idle (10 s) after the
 * last: the summary is read while the run goes on. */
static const char live_summary[] = "{\"type\":\"summary\",\"kind\":\"send\",\"packets\":20,\"drops\":0,"
				   "\"flow_base\":7,\"threads\":[{\"id\":0,\"packets\":20}]}";

static int h_live_summary(void *u, char **text, size_t *len)
{
	struct seen *k = u;
	k->asked++;
	if (k->sent < k->send)
		return -EAGAIN;
	*text = strdup(live_summary);
	*len = strlen(live_summary);
	return 0;
}

static void summary_ends_live_run(void **st)
{
	(void)st;
	struct seen k;
	struct txs_recv *s = live_open(&k, 2, 0, 10);
	struct txs_recv_hooks h = { .user = &k, .tick = h_tick, .msg = h_msg, .sender_summary = h_live_summary };
	uint64_t t0 = txs_now_mono_ns();
	assert_int_equal(txs_recv_run(s, &h), 0);
	assert_true(txs_now_mono_ns() - t0 < 5000000000ull); /* not the idle 10 s */
	close(k.fd);
	assert_true(k.asked >= 2); /* -EAGAIN before the datagrams were all sent */
	assert_int_equal(k.msgs, 0);
	const struct txs_recv_result *r = txs_recv_result(s);
	assert_non_null(r);
	assert_int_equal(r->rx->received, 20);
	assert_true(r->rx->lost_exact);
	assert_int_equal(r->rx->expected, 20);
	assert_int_equal(r->rx->lost, 0);
	txs_recv_close(s);
}

static void stop_hook(void **st)
{
	(void)st;
	live_run(true);
}

static void stop_call(void **st)
{
	(void)st;
	live_run(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pcap_exact),
		cmocka_unit_test(summary_hook),
		cmocka_unit_test(summary_ends_live_run),
		cmocka_unit_test(refused),
		cmocka_unit_test(summary_read),
		cmocka_unit_test(stop_hook),
		cmocka_unit_test(stop_call),
	};
	return cmocka_run_group_tests(tests, t_tmpdir_setup, t_tmpdir_teardown);
}
