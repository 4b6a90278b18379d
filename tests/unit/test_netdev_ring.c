/* SPDX-License-Identifier: MIT */
/* The frame devices (packet:, xdp:): spec grammar and errors without
 * privileges; with root, in a private network namespace on its loopback,
 * every registered frame device sends exactly what it counts (the
 * interface's RX counter agrees), and a frame the kernel refuses
 * (TP_STATUS_WRONG_FORMAT) is counted as an error without stalling the
 * ring. */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include "test_util.h"

static const char *const frame_devs[] = { "packet:lo", "packet:lo,novnet", "packet:lo,qdisc", "packet:lo,ring=64",
					  "xdp:lo", "xdp:lo,aligned" };

static bool have_netns;

static int open_dev(struct txs_netdev **d, const char *spec, unsigned queues, char *err, size_t el)
{
	struct txs_netdev_conf c = { .max_queues = queues, .frame_size = 1514 };
	txs_addr_parse(&c.dst, "127.0.0.1");
	return txs_netdev_open(d, spec, &c, err, el);
}

static void test_spec_errors(void **st)
{
	(void)st;
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "packet:", "no interface" },
		{ "packet:a+", "" },
		{ "packet:lo,bogus", "unknown packet option 'bogus'" },
		{ "packet:lo,ring=100", "ring=100" },
		{ "packet:lo:1", "bad interface name" },
		{ "packet:no-such-if0", "no interface 'no-such-if0'" },
		{ "xdp:lo:x", "bad queue 'x'" },
		{ "xdp:lo,ring=7", "ring=7" },
		{ "xdp:lo,zcc", "unknown xdp option 'zcc'" },
		{ "packet:a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p+q", "too many links" },
	};
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(bad); i++) {
		struct txs_netdev *d = (void *)1;
		char err[256];
		int rc = open_dev(&d, bad[i].spec, 1, err, sizeof(err));
		if (rc == 0)
			fail_msg("'%s' opened", bad[i].spec);
		assert_null(d);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].spec, err, bad[i].msg);
	}
}

/* The loopback's RX packets, from /proc/net/dev (this thread's namespace). */
static uint64_t lo_rx(void)
{
	FILE *f = fopen("/proc/net/dev", "r");
	assert_non_null(f);
	char line[512];
	uint64_t v = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "lo:");
		unsigned long long b, pk;
		if (p && sscanf(p + 3, "%llu %llu", &b, &pk) == 2)
			v = pk;
	}
	fclose(f);
	return v;
}

static void set_lo_mtu(int mtu)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr = { 0 };
	strcpy(ifr.ifr_name, "lo");
	ifr.ifr_mtu = mtu;
	assert_int_equal(ioctl(fd, SIOCSIFMTU, &ifr), 0);
	close(fd);
}

/* Build and send n frames of len bytes through q in bursts. */
static uint64_t push(struct txs_txq *q, unsigned n, uint32_t len)
{
	struct txs_pktbuf b[32];
	uint64_t sent = 0;
	unsigned spins = 0;
	while (n && spins < 1000000) {
		unsigned want = n < 32 ? n : 32;
		unsigned got = txs_txq_alloc(q, b, want);
		if (!got) {
			txs_txq_flush(q);
			spins++;
			continue;
		}
		for (unsigned i = 0; i < got; i++) {
			memset(b[i].data, 0, len);
			b[i].data[12] = 0x08; /* IPv4 ethertype; the body is not parsed on lo */
			b[i].len = len;
		}
		unsigned s = txs_txq_send(q, b, got);
		if (s < got)
			txs_txq_release(q, b + s, got - s);
		sent += s;
		n -= got;
	}
	txs_txq_flush(q);
	return sent;
}

static void test_exact_counts(void **st)
{
	(void)st;
	if (!have_netns)
		skip();
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(frame_devs); i++) {
		struct txs_netdev *d;
		char err[256];
		int rc = open_dev(&d, frame_devs[i], 1, err, sizeof(err));
		if (rc < 0 && strncmp(frame_devs[i], "xdp", 3) == 0) {
			print_message("note: %s unavailable here: %s\n", frame_devs[i], err);
			continue;
		}
		if (rc < 0)
			fail_msg("%s: %s", frame_devs[i], err);
		assert_true(d->l2_needed);
		struct txs_txq *q;
		assert_int_equal(txs_txq_open(d, 0, &q), 0);
		uint64_t rx0 = lo_rx();
		uint64_t sent = push(q, 5000, 60) + push(q, 300, 1514);
		txs_txq_close(q);
		struct txs_link_counters c;
		txs_netdev_link_stats(d, 0, &c);
		uint64_t rx = lo_rx() - rx0;
		if (c.packets != sent || rx != sent || c.drop_err || c.drop_full ||
		    c.bytes != 5000ull * 60 + 300ull * 1514)
			fail_msg("%s: sent %llu, counted %llu (%llu bytes, %llu full, %llu err), lo RX +%llu",
				 frame_devs[i], (unsigned long long)sent, (unsigned long long)c.packets,
				 (unsigned long long)c.bytes, (unsigned long long)c.drop_full,
				 (unsigned long long)c.drop_err, (unsigned long long)rx);
		txs_netdev_close(d);
	}
}

/* The MTU shrinks under an open ring: the kernel refuses the big frames
 * (WRONG_FORMAT); they count as errors, and the ring keeps working. */
static void test_wrong_format(void **st)
{
	(void)st;
	if (!have_netns)
		skip();
	struct txs_netdev *d;
	char err[256];
	if (open_dev(&d, "packet:lo,novnet", 1, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	struct txs_txq *q;
	assert_int_equal(txs_txq_open(d, 0, &q), 0);
	set_lo_mtu(1280);
	uint64_t rx0 = lo_rx();
	uint64_t a = push(q, 40, 1514); /* accepted by the ring, refused by the kernel */
	uint64_t b = push(q, 100, 60);  /* must still go out */
	set_lo_mtu(65536);
	txs_txq_close(q);
	struct txs_link_counters c;
	txs_netdev_link_stats(d, 0, &c);
	uint64_t rx = lo_rx() - rx0;
	assert_int_equal(a + b, 140);
	if (c.packets != rx || c.packets + c.drop_err != 140 || c.drop_err < 40 || rx < 1)
		fail_msg("counted %llu sent + %llu errors, lo RX +%llu", (unsigned long long)c.packets,
			 (unsigned long long)c.drop_err, (unsigned long long)rx);
	txs_netdev_close(d);
}

static void set_if_up(const char *name, bool up)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	assert_int_equal(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags = (short)(up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP);
	assert_int_equal(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
}

/* active-backup, packet:lo+txsd0 (a veth of this namespace): frames chosen for txsd0 before
 * it went down reach the device after its ring died. They go out on the
 * backup (lo), counted there: none refused (the failover run that exited 1
 * on "1 of 200000 packets not sent: device errors") */
static void test_backup_takes_refused(void **st)
{
	(void)st;
	if (!have_netns)
		skip();
	if (system("ip link add txsd0 type veth peer name txsd1 2>/dev/null && ip link set txsd0 up 2>/dev/null && "
		   "ip link set txsd1 up 2>/dev/null") != 0) {
		print_message("note: no veth pair here (ip link add type veth): skipped\n");
		skip();
	}
	struct txs_netdev *d;
	char err[256];
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 1514, .have_dst_mac = true,
				      .dst_mac = { 0x02, 0, 0, 0, 0, 1 } };
	txs_addr_parse(&dc.dst, "127.0.0.1");
	if (txs_netdev_open(&d, "packet:lo+txsd0", &dc, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	struct txs_linksel *ls;
	struct txs_linksel_conf lc = { .mode = "active-backup", .n_links = 2, .max_cores = 1 };
	assert_int_equal(txs_linksel_create(&ls, &lc, err, sizeof(err)), 0);
	struct txs_linkmon *m;
	struct txs_linkmon_conf mc = { .linksel = ls, .miimon_ms = 10 };
	if (txs_linkmon_start(&m, d, &mc, err, sizeof(err)) < 0)
		fail_msg("linkmon: %s", err);
	struct txs_txq *q;
	assert_int_equal(txs_txq_open(d, 0, &q), 0);
	set_if_up("txsd0", false);
	for (int i = 0; i < 300 && (txs_linkmon_up_mask(m) & 2); i++)
		usleep(10 * 1000);
	assert_int_equal(txs_linkmon_up_mask(m), 1);
	uint64_t rx0 = lo_rx();
	struct txs_pktbuf b[8];
	unsigned got = txs_txq_alloc(q, b, 8); /* the queue takes the link's death here */
	assert_true(got > 0);
	for (unsigned i = 0; i < got; i++) {
		memset(b[i].data, 0, 60);
		b[i].data[12] = 0x08;
		b[i].len = 60;
		b[i].link = 1; /* chosen before the link went down */
	}
	unsigned s = txs_txq_send(q, b, got);
	if (s < got)
		txs_txq_release(q, b + s, got - s);
	txs_txq_flush(q);
	txs_txq_close(q);
	struct txs_link_counters c0, c1;
	txs_netdev_link_stats(d, 0, &c0);
	txs_netdev_link_stats(d, 1, &c1);
	uint64_t rx = lo_rx() - rx0;
	if (s != got || c0.packets != got || c1.drop_err || c1.packets || rx != got)
		fail_msg("%u frames for the dead link: %u taken; backup counted %llu, dead link %llu sent %llu errors; lo RX +%llu",
			 got, s, (unsigned long long)c0.packets, (unsigned long long)c1.packets,
			 (unsigned long long)c1.drop_err, (unsigned long long)rx);
	txs_linkmon_stop(m);
	txs_netdev_close(d);
	txs_linksel_destroy(ls);
	if (system("ip link del txsd0 2>/dev/null") != 0)
		print_message("note: txsd0 not removed (the namespace goes with the test)\n");
}

int main(void)
{
	/* a private namespace: its loopback is ours to send on and reconfigure */
	if (geteuid() == 0 && unshare(CLONE_NEWNET) == 0) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		struct ifreq ifr = { 0 };
		strcpy(ifr.ifr_name, "lo");
		if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
			ifr.ifr_flags |= IFF_UP;
			have_netns = ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
		}
		if (fd >= 0)
			close(fd);
	}
	if (!have_netns)
		fprintf(stderr, "note: not root or no network namespaces: sending tests skipped\n");
	T_RUN(cmocka_unit_test(test_spec_errors),
	      cmocka_unit_test(test_exact_counts),
	      cmocka_unit_test(test_wrong_format),
	      cmocka_unit_test(test_backup_takes_refused));
}
