/* SPDX-License-Identifier: MIT */
/* lib/rx udp input, receive timestamps: the per-datagram choice of
 * arrival time from hand-built SO_TIMESTAMPING control data (the NIC's raw
 * hardware stamp when there and on our clock, else the kernel's software
 * stamp, else our clock), the plausibility bounds of a hardware stamp, that
 * a chosen stamp meets the analysis' skew rule like any other, and the
 * refusals of --rx-timestamps hardware where no hardware stamps exist
 * (loopback here; veth in tests/integration/recv_rxts.sh). No test here can
 * produce a real hardware stamp: that needs a NIC with a PHC. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <txscale/rx.h>
#include "rx/rx_priv.h"
#include "rx/rxts.h"
#include "test_util.h"

#define NOW 1780000000000000000ull /* CLOCK_REALTIME ns, 2026 */
#define SEC 1000000000ull

/* A control buffer as recvmmsg fills it: optionally a foreign control message
 * first, then SCM_TIMESTAMPING with ts[0] = sw, ts[2] = hw (0 = absent), its
 * cmsg_len cut by `cut` bytes. */
struct ctl {
	union {
		uint64_t align[4]; /* cmsghdr alignment (it ends in a flexible array: not a member) */
		uint8_t b[256]; /* >= CMSG_SPACE(int) + CMSG_SPACE(scm_timestamping), checked */
	} u;
	struct msghdr h;
};

static struct timespec tsp(uint64_t ns)
{
	struct timespec t = { .tv_sec = (time_t)(ns / SEC), .tv_nsec = (long)(ns % SEC) };
	return t;
}

static struct msghdr *mkctl(struct ctl *c, bool foreign, bool stamped, uint64_t sw, uint64_t hw, size_t cut)
{
	memset(c, 0, sizeof(*c));
	assert_true(CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct scm_timestamping)) <= sizeof(c->u.b));
	c->h.msg_control = c->u.b;
	c->h.msg_controllen = 0;
	uint8_t *p = c->u.b;
	if (foreign) {
		struct cmsghdr *cm = (struct cmsghdr *)p;
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_TOS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		int tos = 0x10;
		memcpy(CMSG_DATA(cm), &tos, sizeof(tos));
		p += CMSG_SPACE(sizeof(int));
		c->h.msg_controllen += CMSG_SPACE(sizeof(int));
	}
	if (stamped) {
		struct cmsghdr *cm = (struct cmsghdr *)p;
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_TIMESTAMPING;
		cm->cmsg_len = CMSG_LEN(sizeof(struct scm_timestamping)) - cut;
		struct scm_timestamping st;
		memset(&st, 0, sizeof(st));
		if (sw)
			st.ts[0] = tsp(sw);
		if (hw)
			st.ts[2] = tsp(hw);
		st.ts[1] = tsp(NOW - 123 * SEC); /* deprecated "syshw": never read */
		memcpy(CMSG_DATA(cm), &st, sizeof(st));
		c->h.msg_controllen += CMSG_SPACE(sizeof(struct scm_timestamping));
	}
	return &c->h;
}

static struct rx_arrival arr(bool foreign, bool stamped, uint64_t sw, uint64_t hw, bool want_hw)
{
	struct ctl c;
	return rx_arrival_of(mkctl(&c, foreign, stamped, sw, hw, 0), want_hw, NOW);
}

/* which stamp times a datagram */
static void source_choice(void **st)
{
	(void)st;
	const uint64_t sw = NOW - 40000, hw = NOW - 52000; /* the NIC stamps 12 us before the stack */
	struct rx_arrival a = arr(false, true, sw, hw, true);
	assert_int_equal(a.src, RX_TS_HW);
	assert_int_equal(a.at, hw);
	assert_false(a.hw_skewed);
	/* kernel mode never takes ts[2], even when a driver put one there */
	a = arr(false, true, sw, hw, false);
	assert_int_equal(a.src, RX_TS_SW);
	assert_int_equal(a.at, sw);
	assert_false(a.hw_skewed);
	/* no hardware stamp on this datagram (another interface): software */
	a = arr(false, true, sw, 0, true);
	assert_int_equal(a.src, RX_TS_SW);
	assert_int_equal(a.at, sw);
	/* a hardware stamp alone */
	a = arr(false, true, 0, hw, true);
	assert_int_equal(a.src, RX_TS_HW);
	assert_int_equal(a.at, hw);
	/* an all-zero scm_timestamping, no control message, a foreign one only: our clock */
	a = arr(false, true, 0, 0, true);
	assert_int_equal(a.src, RX_TS_USER);
	assert_int_equal(a.at, NOW);
	a = arr(false, false, 0, 0, true);
	assert_int_equal(a.src, RX_TS_USER);
	assert_int_equal(a.at, NOW);
	a = arr(true, false, 0, 0, true);
	assert_int_equal(a.src, RX_TS_USER);
	/* the stamp behind a foreign control message is found */
	a = arr(true, true, sw, hw, true);
	assert_int_equal(a.src, RX_TS_HW);
	assert_int_equal(a.at, hw);
	/* a control message too short for scm_timestamping is not read */
	struct ctl c;
	a = rx_arrival_of(mkctl(&c, false, true, sw, hw, 8), true, NOW);
	assert_int_equal(a.src, RX_TS_USER);
	assert_int_equal(a.at, NOW);
	/* nanoseconds carried whole */
	a = arr(false, true, 0, NOW - SEC + 999999999ull, true);
	assert_int_equal(a.at, NOW - 1);
}

/* a hardware stamp off CLOCK_REALTIME is not used */
static void hw_off_clock(void **st)
{
	(void)st;
	const uint64_t sw = NOW - 40000;
	/* a PHC in PTP time (TAI): 37 s ahead of the software stamp */
	struct rx_arrival a = arr(false, true, sw, sw + 37 * SEC, true);
	assert_int_equal(a.src, RX_TS_SW);
	assert_int_equal(a.at, sw);
	assert_true(a.hw_skewed);
	assert_int_equal(a.hw_off, (int64_t)(37 * SEC));
	/* a free-running PHC counting from boot (1970 + uptime) */
	a = arr(false, true, sw, 3600 * SEC, true);
	assert_int_equal(a.src, RX_TS_SW);
	assert_true(a.hw_skewed);
	assert_true(a.hw_off < 0);
	/* bounds against the software stamp: 1 ms ahead, 1 s behind */
	a = arr(false, true, sw, sw + TXS_RX_HW_TS_AHEAD_NS, true);
	assert_int_equal(a.src, RX_TS_HW);
	a = arr(false, true, sw, sw + TXS_RX_HW_TS_AHEAD_NS + 1, true);
	assert_int_equal(a.src, RX_TS_SW);
	assert_true(a.hw_skewed);
	a = arr(false, true, sw, sw - TXS_RX_HW_TS_BEHIND_NS, true);
	assert_int_equal(a.src, RX_TS_HW);
	a = arr(false, true, sw, sw - TXS_RX_HW_TS_BEHIND_NS - 1, true);
	assert_int_equal(a.src, RX_TS_SW);
	assert_true(a.hw_skewed);
	assert_int_equal(a.hw_off, -(int64_t)(TXS_RX_HW_TS_BEHIND_NS + 1));
	/* without a software stamp: against our read, 1 ms ahead, 60 s behind */
	a = arr(false, true, 0, NOW + TXS_RX_HW_TS_AHEAD_NS + 1, true);
	assert_int_equal(a.src, RX_TS_USER);
	assert_int_equal(a.at, NOW);
	assert_true(a.hw_skewed);
	a = arr(false, true, 0, NOW - 59 * SEC, true); /* a long wait in the socket buffer */
	assert_int_equal(a.src, RX_TS_HW);
	a = arr(false, true, 0, NOW - TXS_RX_MAX_LATENCY_DEFAULT - 1, true);
	assert_int_equal(a.src, RX_TS_USER);
	assert_true(a.hw_skewed);
	assert_true(rx_hw_skewed(NOW + 2 * TXS_RX_HW_TS_AHEAD_NS, NOW, NOW));
	assert_false(rx_hw_skewed(NOW, NOW, NOW));
}

/* a chosen hardware stamp is a latency sample under the analysis' skew rule:
 * before the sender's stamp it is skew_future, not a sample */
static void hw_stamp_meets_skew_rule(void **st)
{
	(void)st;
	struct txs_rx_core *c;
	struct txs_rx_conf cf = { 0 };
	assert_int_equal(txs_rx_core_create(&c, &cf), 0);
	static const struct txs_rx_tuple t = {
		.src = { .family = AF_INET, .bytes = { 198, 18, 0, 1 } },
		.dst = { .family = AF_INET, .bytes = { 198, 18, 0, 2 } },
		.sport = 40000,
		.dport = 5201,
	};
	const uint64_t sent = NOW - 100000;
	/* seq 0: hw stamp 30 us after sending; seq 1: a PHC 400 us behind
	 * (within the plausibility bounds, so used): before the sender's stamp */
	uint64_t hws[2] = { sent + 30000, sent - 400000 };
	for (uint64_t seq = 0; seq < 2; seq++) {
		struct ctl ctl;
		struct rx_arrival a = rx_arrival_of(mkctl(&ctl, false, true, hws[seq] + 20000, hws[seq], 0), true, NOW);
		assert_int_equal(a.src, RX_TS_HW);
		uint8_t p[32];
		struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = 0, .seq = seq, .ts_ns = sent };
		txs_ph_write(p, sizeof(p), &ph);
		txs_rx_dgram(c, p, sizeof(p), &t, 0, a.at);
	}
	struct txs_rx_result *r;
	struct txs_rx_core *cs[1] = { c };
	assert_int_equal(txs_rx_result_build(&r, cs, 1, NULL), 0);
	assert_int_equal(r->lat.count, 1);
	assert_int_equal(r->lat.max, 30000);
	assert_int_equal(r->lat_negative, 1);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

/* --rx-timestamps hardware where there are none: refused before anything is received */
static void hw_refused_on_loopback(void **st)
{
	(void)st;
	struct txs_rx_input_conf ic = { .n_queues = 1, .port = (uint16_t)(40000 + getpid() % 20000),
					.rx_ts = TXS_RX_TS_HARDWARE };
	struct txs_rx_input *in = NULL;
	char err[320];
	/* no interface named, no address bound: which one? */
	assert_int_equal(txs_rx_input_open(&in, "udp", &ic, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "hardware receive timestamps: which interface"));
	assert_null(in);
	/* a wildcard bind names none either */
	ic.have_bind = true;
	txs_addr_parse(&ic.bind, "0.0.0.0");
	assert_int_equal(txs_rx_input_open(&in, "udp", &ic, err, sizeof(err)), -EINVAL);
	/* an address no interface holds */
	txs_addr_parse(&ic.bind, "198.18.255.254");
	assert_int_equal(txs_rx_input_open(&in, "udp", &ic, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no interface holds 198.18.255.254"));
	/* 127.0.0.1 is lo's, and lo stamps in software only */
	txs_addr_parse(&ic.bind, "127.0.0.1");
	assert_int_equal(txs_rx_input_open(&in, "udp", &ic, err, sizeof(err)), -EOPNOTSUPP);
	assert_non_null(strstr(err, "interface lo has no hardware receive timestamps"));
	/* so is ::1 */
	txs_addr_parse(&ic.bind, "::1");
	int rc = txs_rx_input_open(&in, "udp", &ic, err, sizeof(err));
	if (rc != -EINVAL) /* a host without IPv6 on lo: no interface holds ::1 */
		assert_int_equal(rc, -EOPNOTSUPP);
	/* named */
	ic.have_bind = false;
	snprintf(ic.hw_ifname, sizeof(ic.hw_ifname), "lo");
	assert_int_equal(txs_rx_input_open(&in, "udp", &ic, err, sizeof(err)), -EOPNOTSUPP);
	assert_non_null(strstr(err, "interface lo has"));
	snprintf(ic.hw_ifname, sizeof(ic.hw_ifname), "nosuchif0");
	assert_int_equal(txs_rx_input_open(&in, "udp", &ic, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "no interface 'nosuchif0'"));
	/* no mode beyond the enum */
	ic.rx_ts = (enum txs_rx_ts_mode)7;
	assert_int_equal(txs_rx_input_open(&in, "udp", &ic, err, sizeof(err)), -EINVAL);
	/* the port was never taken: kernel mode opens it at once */
	ic.rx_ts = TXS_RX_TS_KERNEL;
	ic.hw_ifname[0] = 0;
	ic.have_bind = true;
	txs_addr_parse(&ic.bind, "127.0.0.1");
	rc = txs_rx_input_open(&in, "udp", &ic, err, sizeof(err));
	if (rc == -EADDRINUSE)
		T_SKIP("port %u taken by someone else", ic.port);
	assert_int_equal(rc, 0);
	struct txs_rx_input_stats is;
	txs_rx_input_stats(in, &is);
	assert_int_equal(is.phc_index, -1);
	assert_int_equal(is.hw_ifname[0], 0);
	assert_int_equal(is.ts_hardware, 0);
	txs_rx_input_close(in);
}

T_MAIN(cmocka_unit_test(source_choice),
       cmocka_unit_test(hw_off_clock),
       cmocka_unit_test(hw_stamp_meets_skew_rule),
       cmocka_unit_test(hw_refused_on_loopback))
