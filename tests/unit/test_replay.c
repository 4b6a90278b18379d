/* SPDX-License-Identifier: MIT */
/* lib/replay: the pcap loader on good and hostile files (both byte orders,
 * micro- and nanosecond timestamps, cut records, truncated frames, link
 * types), the schedule (offsets, speed, loop period, out-of-order times), and
 * the generator through the engine into the dummy device (frames as they
 * are, looping, -n counts frames, refusals); through the udp device: which
 * frames are datagrams (and why the others are skipped), their schedule, and
 * their payloads arriving at a loopback socket in file order. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/replay.h>
#include "test_engine.h"
#include "test_sock.h"
#include "test_util.h"

static char g_path[64];

static uint32_t sw32(uint32_t v, bool be)
{
	return be ? __builtin_bswap32(v) : v;
}

/* A capture of n frames: frame i is 60 + 10 i bytes of (i + k) at time
 * 100 s + ts_us[i] us (ns files: the same instants). */
static void write_pcap(bool be, bool nano, uint32_t linktype, unsigned n, const uint64_t *ts_us, int cut, int trunc)
{
	strcpy(g_path, "/tmp/txs_test_replay_XXXXXX");
	int fd = mkstemp(g_path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	uint32_t gh[6] = { sw32(nano ? 0xa1b23c4d : 0xa1b2c3d4, be), 0, 0, 0, sw32(65535, be), sw32(linktype, be) };
	uint16_t ver[2] = { (uint16_t)(be ? 0x0200 : 2), (uint16_t)(be ? 0x0400 : 4) };
	memcpy(&gh[1], ver, 4);
	fwrite(gh, 4, 6, f);
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = 60 + 10 * i;
		uint64_t ns = 100000000000ull + ts_us[i] * 1000;
		uint32_t rh[4] = { sw32((uint32_t)(ns / 1000000000u), be),
				   sw32((uint32_t)(nano ? ns % 1000000000u : ns % 1000000000u / 1000u), be),
				   sw32(len, be), sw32((int)i == trunc ? len + 4 : len, be) };
		fwrite(rh, 4, 4, f);
		uint8_t buf[2048];
		memset(buf, (int)(i + 1), len);
		fwrite(buf, 1, (int)i == cut ? len / 2 : len, f);
		if ((int)i == cut)
			break;
	}
	fclose(f);
}

static void loads_both_orders(void **st)
{
	(void)st;
	static const uint64_t ts[] = { 0, 1000, 1500, 4000 };
	for (int v = 0; v < 4; v++) {
		bool be = v & 1, nano = v & 2;
		write_pcap(be, nano, 1, 4, ts, -1, -1);
		struct txs_replay *r;
		char err[256];
		assert_int_equal(txs_replay_load(&r, g_path, err, sizeof(err)), 0);
		assert_int_equal(txs_replay_frames(r), 4);
		uint64_t idx;
		assert_int_equal(txs_replay_max_len(r, &idx), 90);
		assert_int_equal(idx, 3);
		for (unsigned i = 0; i < 4; i++) {
			uint32_t len;
			const uint8_t *p = txs_replay_frame(r, i, &len);
			assert_int_equal(len, 60 + 10 * i);
			assert_int_equal(p[0], i + 1);
			assert_int_equal(p[len - 1], i + 1);
		}
		struct txs_pace_conf pc;
		assert_int_equal(txs_replay_schedule(r, 2.0, &pc), 0);
		assert_int_equal(pc.kind, TXS_PACE_TABLE);
		assert_int_equal(pc.table_n, 4);
		assert_int_equal(pc.table_ns[0], 0);
		assert_int_equal(pc.table_ns[1], 500000);
		assert_int_equal(pc.table_ns[2], 750000);
		assert_int_equal(pc.table_ns[3], 2000000);
		/* span 2 ms + one mean gap (2 ms / 3) */
		assert_int_equal(pc.table_period_ns, 2000000 + 2000000 / 3);
		assert_int_equal(txs_replay_schedule(r, 0, &pc), -EINVAL);
		txs_replay_free(r);
		unlink(g_path);
	}
}

static void out_of_order_times(void **st)
{
	(void)st;
	static const uint64_t ts[] = { 1000, 3000, 2000, 5000 };
	write_pcap(false, false, 1, 4, ts, -1, -1);
	struct txs_replay *r;
	assert_int_equal(txs_replay_load(&r, g_path, NULL, 0), 0);
	struct txs_pace_conf pc;
	assert_int_equal(txs_replay_schedule(r, 1.0, &pc), 0);
	/* file order kept; a time earlier than the one before counts as equal */
	assert_int_equal(pc.table_ns[1], 2000000);
	assert_int_equal(pc.table_ns[2], 2000000);
	assert_int_equal(pc.table_ns[3], 4000000);
	txs_replay_free(r);
	unlink(g_path);
}

static void refuses_bad_files(void **st)
{
	(void)st;
	static const uint64_t ts[] = { 0, 1, 2, 3 };
	struct txs_replay *r;
	char err[256];
	write_pcap(false, false, 1, 4, ts, 2, -1); /* frame 2 cut by the end of the file */
	assert_int_equal(txs_replay_load(&r, g_path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "frame 2"));
	unlink(g_path);
	write_pcap(false, false, 1, 4, ts, -1, 1); /* frame 1 truncated by a snap length */
	assert_int_equal(txs_replay_load(&r, g_path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "frame 1"));
	unlink(g_path);
	write_pcap(false, false, 113, 4, ts, -1, -1); /* Linux cooked capture */
	assert_int_equal(txs_replay_load(&r, g_path, err, sizeof(err)), -ENOTSUP);
	unlink(g_path);
	write_pcap(false, false, 1, 0, ts, -1, -1); /* header only */
	assert_int_equal(txs_replay_load(&r, g_path, err, sizeof(err)), -ENODATA);
	unlink(g_path);
	assert_int_equal(txs_replay_load(&r, "/nonexistent/x.pcap", err, sizeof(err)), -ENOENT);
	/* every prefix of a good file: refused or loaded, never read past the end */
	write_pcap(true, true, 1, 4, ts, -1, -1);
	FILE *f = fopen(g_path, "rb");
	uint8_t whole[1024];
	size_t n = fread(whole, 1, sizeof(whole), f);
	fclose(f);
	for (size_t k = 0; k < n; k++) {
		f = fopen(g_path, "wb");
		fwrite(whole, 1, k, f);
		fclose(f);
		int rc = txs_replay_load(&r, g_path, err, sizeof(err));
		if (rc == 0)
			txs_replay_free(r);
		else
			assert_true(rc == -EINVAL || rc == -ENODATA);
	}
	unlink(g_path);
}

static void engine_sends_frames(void **st)
{
	(void)st;
	static const uint64_t ts[] = { 0, 100, 200, 300, 400 };
	write_pcap(false, true, 1, 5, ts, -1, -1);
	struct txs_replay *r;
	assert_int_equal(txs_replay_load(&r, g_path, NULL, 0), 0);
	unlink(g_path);
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 2048 };
	assert_int_equal(txs_netdev_open(&dev, "dummy", &dc, NULL, 0), 0);
	struct txs_engine_conf ec = { .n_workers = 1, .count = 12, .dev = dev, .gen = &txs_replay_gen_ops,
				      .gen_conf = r };
	assert_int_equal(txs_replay_schedule(r, 1.0, &ec.pace), 0);
	struct txs_engine *e = t_engine_done(&ec);
	struct txs_stat_row row;
	double secs = txs_engine_read(e, &row);
	assert_int_equal(row.packets, 12);
	/* 12 frames: two passes (60+70+80+90+100 bytes) and two more */
	assert_int_equal(row.bytes, 2 * 400 + 60 + 70);
	/* frame 11 = pass 2 (period 0.4 + 0.1 ms), offset 0.1 ms: due at 1.1 ms */
	assert_true(secs >= 0.0011);
	txs_engine_destroy(e);
	/* a table for two workers is refused */
	ec.n_workers = 2;
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	txs_netdev_close(dev);
	/* frames over the device MTU + 14: the worker refuses to start */
	dc.max_queues = 1;
	assert_int_equal(txs_netdev_open(&dev, "dummy:mtu=600", &dc, NULL, 0), 0);
	dev->mtu = 60; /* lowered after open, as send --mtu may: 74-byte frames at most */
	ec.n_workers = 1;
	ec.dev = dev;
	assert_int_equal(t_engine_run(&ec), -EMSGSIZE);
	txs_netdev_close(dev);
	txs_replay_free(r);
}


/* ---- through the udp device ------------------------------------------------ */

static uint8_t g_fr[16][4200];
static uint32_t g_len[16];

/* Frames of a capture: Ethernet (tags: 0, 1 or 2) + body */
static uint32_t put_eth(uint8_t *f, uint16_t type, unsigned tags)
{
	memset(f, 0x02, 12);
	uint32_t o = 12;
	for (unsigned t = 0; t < tags; t++) {
		txs_put_be16(f + o, tags == 2 && t == 0 ? 0x88a8 : 0x8100);
		txs_put_be16(f + o + 2, (uint16_t)(10 + t));
		o += 4;
	}
	txs_put_be16(f + o, type);
	return o + 2;
}

/* IPv4 (ihl_words 5 or more) around a UDP datagram of plen bytes of `fill`,
 * UDP length ulen_delta more than true; frag: the flags/offset field */
static uint32_t frame4(uint8_t *f, unsigned tags, unsigned ihl_words, uint8_t proto, uint16_t frag, uint32_t plen,
		       uint8_t fill, int ulen_delta)
{
	uint32_t o = put_eth(f, 0x0800, tags), ihl = ihl_words * 4, ulen = 8 + plen;
	memset(f + o, 0, ihl);
	f[o] = (uint8_t)(0x40 | ihl_words);
	txs_put_be16(f + o + 2, (uint16_t)(ihl + ulen));
	txs_put_be16(f + o + 6, frag);
	f[o + 8] = 64;
	f[o + 9] = proto;
	uint8_t *u = f + o + ihl;
	txs_put_be16(u, 1111);
	txs_put_be16(u + 2, 2222);
	txs_put_be16(u + 4, (uint16_t)((int)ulen + ulen_delta));
	txs_put_be16(u + 6, 0xbeef); /* wrong on purpose: not looked at */
	memset(u + 8, fill, plen);
	return o + ihl + ulen;
}

/* IPv6, next headers `nh` (ext: one 8-byte extension header of type ext first, 255 none) */
static uint32_t frame6(uint8_t *f, unsigned tags, uint8_t ext, uint8_t nh, uint32_t plen, uint8_t fill)
{
	uint32_t o = put_eth(f, 0x86dd, tags), e = ext != 255 ? 8 : 0, ulen = 8 + plen;
	memset(f + o, 0, 40 + e);
	f[o] = 0x60;
	txs_put_be16(f + o + 4, (uint16_t)(e + ulen));
	f[o + 6] = ext != 255 ? ext : nh;
	f[o + 7] = 64;
	if (e)
		f[o + 40] = nh; /* hdr ext len 0: 8 bytes */
	uint8_t *u = f + o + 40 + e;
	txs_put_be16(u, 1111);
	txs_put_be16(u + 2, 2222);
	txs_put_be16(u + 4, (uint16_t)ulen);
	memset(u + 8, fill, plen);
	return o + 40 + e + ulen;
}

static void write_frames(unsigned n)
{
	strcpy(g_path, "/tmp/txs_test_replay_XXXXXX");
	int fd = mkstemp(g_path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	uint32_t gh[6] = { 0xa1b2c3d4, 2 | 4u << 16, 0, 0, 65535, 1 };
	fwrite(gh, 4, 6, f);
	for (unsigned i = 0; i < n; i++) {
		uint32_t rh[4] = { 100, 1000 * i, g_len[i], g_len[i] }; /* 1 ms apart */
		fwrite(rh, 4, 4, f);
		fwrite(g_fr[i], 1, g_len[i], f);
	}
	fclose(f);
}

/* 14 frames: 5 IPv4 datagrams (0, 3, 7, 10, 12), 3 IPv6 ones (5, 8, 13),
 * the rest skipped for each reason */
static unsigned mixed_capture(void)
{
	unsigned n = 0;
#define ADD(frame)                   \
	do {                         \
		g_len[n] = (frame);  \
		n++;                 \
	} while (0)
	uint8_t *f;
	ADD(frame4(g_fr[n], 0, 5, 17, 0x4000, 100, 'a', 0)); /* 0 v4 */
	f = g_fr[n];
	memset(f, 0, 42);
	ADD(put_eth(f, 0x0806, 0) + 28);                     /* 1 ARP: not IP */
	ADD(frame4(g_fr[n], 0, 5, 6, 0, 40, 't', 0));        /* 2 TCP: not UDP */
	ADD(frame4(g_fr[n], 1, 6, 17, 0, 0, 'b', 0));        /* 3 v4, a tag, options, empty */
	ADD(frame4(g_fr[n], 0, 5, 17, 0x2000, 64, 'f', 0));  /* 4 MF: fragment */
	ADD(frame6(g_fr[n], 2, 0, 17, 300, 'c'));            /* 5 v6, QinQ, hop-by-hop */
	ADD(frame4(g_fr[n], 0, 5, 17, 0x0010, 64, 'g', 0));  /* 6 offset: fragment */
	ADD(frame4(g_fr[n], 0, 5, 17, 0, 4000, 'd', 0));     /* 7 v4, over any 1500 MTU */
	ADD(frame6(g_fr[n], 0, 255, 17, 1, 'e'));            /* 8 v6 */
	ADD(frame6(g_fr[n], 0, 44, 17, 50, 'h'));            /* 9 v6 fragment header */
	ADD(frame4(g_fr[n], 0, 5, 17, 0, 20, 'i', 0));       /* 10 v4 */
	ADD(frame4(g_fr[n], 0, 5, 17, 0, 20, 'j', 1));       /* 11 UDP length past the IP end */
	ADD(frame4(g_fr[n], 0, 5, 17, 0, 10, 'k', -10));     /* 12 v4, UDP length 8 inside 18 bytes */
	ADD(frame6(g_fr[n], 1, 255, 58, 8, 'l'));            /* 13 ICMPv6: not UDP */
	ADD(frame6(g_fr[n], 0, 60, 17, 2, 'm'));             /* 14 v6, destination options */
	return n;
}

static void spec_for(struct txs_flow_spec *sp, int family)
{
	memset(sp, 0, sizeof(*sp));
	if (family == AF_INET) {
		txs_addr_parse(&sp->src, "127.0.0.1");
		txs_addr_parse(&sp->dst, "127.0.0.1");
	} else {
		txs_addr_parse(&sp->src, "::1");
		txs_addr_parse(&sp->dst, "::1");
	}
	sp->dport = 9;
}

static void udp_datagrams(void **st)
{
	(void)st;
	unsigned n = mixed_capture();
	write_frames(n);
	struct txs_replay *r;
	assert_int_equal(txs_replay_load(&r, g_path, NULL, 0), 0);
	unlink(g_path);
	struct txs_flow_spec sp;
	struct txs_replay_udp_info in;
	spec_for(&sp, AF_INET);
	assert_int_equal(txs_replay_datagrams(r), 0);
	assert_int_equal(txs_replay_udp(r, &sp, &in), 0);
	static const uint64_t v4_frames[] = { 0, 3, 7, 10, 12 };
	static const uint32_t v4_len[] = { 100, 0, 4000, 20, 0 };
	static const char v4_fill[] = { 'a', 'b', 'd', 'i', 'k' };
	assert_int_equal(in.datagrams, 5);
	assert_int_equal(txs_replay_datagrams(r), 5);
	assert_int_equal(in.skipped_total, n - 5);
	assert_int_equal(in.skipped[TXS_REPLAY_NOT_IP], 1);
	assert_int_equal(in.first_skipped[TXS_REPLAY_NOT_IP], 1);
	assert_int_equal(in.skipped[TXS_REPLAY_NOT_UDP], 2);
	assert_int_equal(in.skipped[TXS_REPLAY_FRAGMENT], 3);
	assert_int_equal(in.skipped[TXS_REPLAY_MALFORMED], 1);
	assert_int_equal(in.first_skipped[TXS_REPLAY_MALFORMED], 11);
	assert_int_equal(in.skipped[TXS_REPLAY_FAMILY], 3);
	assert_int_equal(in.max_payload, 4000);
	assert_int_equal(in.max_index, 7);
	assert_int_equal(in.payload_bytes, 4120);
	assert_int_equal(txs_replay_udp_frame_max(r), 14 + 20 + 8 + 4000);
	for (unsigned j = 0; j < 5; j++) {
		uint32_t len;
		uint64_t fr;
		const uint8_t *p = txs_replay_datagram(r, j, &len, &fr);
		assert_non_null(p);
		assert_int_equal(fr, v4_frames[j]);
		assert_int_equal(len, v4_len[j]);
		for (uint32_t b = 0; b < len; b++)
			assert_int_equal(p[b], v4_fill[j]);
	}
	assert_null(txs_replay_datagram(r, 5, &(uint32_t){ 0 }, NULL));
	/* the schedule: the datagrams at their own frames' times, the file's period */
	struct txs_pace_conf pc;
	assert_int_equal(txs_replay_schedule(r, 2.0, &pc), 0);
	assert_int_equal(pc.table_n, 5);
	for (unsigned j = 0; j < 5; j++)
		assert_int_equal(pc.table_ns[j], v4_frames[j] * 1000000 / 2);
	assert_int_equal(pc.table_period_ns, (14 * 1000000 + 14 * 1000000 / 14) / 2);
	/* IPv6: frame 5 first, so its datagram is due 5 ms in (2.5 at 2x) */
	spec_for(&sp, AF_INET6);
	assert_int_equal(txs_replay_udp(r, &sp, &in), 0);
	assert_int_equal(in.datagrams, 3);
	assert_int_equal(in.skipped[TXS_REPLAY_FAMILY], 5);
	assert_int_equal(in.skipped[TXS_REPLAY_FRAGMENT], 3);
	assert_int_equal(in.skipped[TXS_REPLAY_NOT_UDP], 2);
	assert_int_equal(txs_replay_schedule(r, 2.0, &pc), 0);
	assert_int_equal(pc.table_n, 3);
	assert_int_equal(pc.table_ns[0], 2500000);
	assert_int_equal(pc.table_ns[1], 4000000);
	assert_int_equal(pc.table_ns[2], 7000000);
	uint32_t len;
	assert_int_equal(txs_replay_datagram(r, 2, &len, NULL)[0], 'm');
	assert_int_equal(len, 2);
	txs_replay_free(r);
	/* a capture with no datagram of the family: -ENODATA, the skips filled */
	g_len[0] = frame4(g_fr[0], 0, 5, 17, 0x2000, 64, 'f', 0);
	g_len[1] = frame6(g_fr[1], 0, 255, 17, 1, 'e');
	write_frames(2);
	assert_int_equal(txs_replay_load(&r, g_path, NULL, 0), 0);
	unlink(g_path);
	spec_for(&sp, AF_INET);
	assert_int_equal(txs_replay_udp(r, &sp, &in), -ENODATA);
	assert_int_equal(in.datagrams, 0);
	assert_int_equal(in.skipped[TXS_REPLAY_FRAGMENT], 1);
	assert_int_equal(in.skipped[TXS_REPLAY_FAMILY], 1);
	assert_int_equal(txs_replay_datagrams(r), 0); /* still a frame replay */
	txs_replay_free(r);
}

/* Every prefix of every frame of the mixed capture, as a frame of its own:
 * classified without reading past it (ASan) and never a datagram whose
 * payload leaves the frame. */
static void udp_hostile_frames(void **st)
{
	(void)st;
	unsigned n = mixed_capture();
	static uint8_t cut[16][4200];
	static uint32_t cut_len[16];
	struct txs_flow_spec sp;
	struct txs_replay_udp_info in;
	for (unsigned i = 0; i < n; i++) {
		memcpy(cut, g_fr, sizeof(cut));
		memcpy(cut_len, g_len, sizeof(cut_len));
		for (uint32_t k = 14; k < g_len[i]; k += k < 80 ? 1 : 97) {
			memcpy(g_fr, cut, sizeof(cut));
			g_len[0] = k;
			memcpy(g_fr[0], cut[i], k);
			write_frames(1);
			struct txs_replay *r;
			assert_int_equal(txs_replay_load(&r, g_path, NULL, 0), 0);
			unlink(g_path);
			for (int fam = 0; fam < 2; fam++) {
				spec_for(&sp, fam ? AF_INET6 : AF_INET);
				int rc = txs_replay_udp(r, &sp, &in);
				assert_true(rc == 0 || rc == -ENODATA);
				if (rc == 0) {
					uint32_t len;
					uint64_t fr;
					const uint8_t *p = txs_replay_datagram(r, 0, &len, &fr);
					const uint8_t *f = txs_replay_frame(r, 0, &(uint32_t){ 0 });
					assert_true(p >= f + 14 && p + len <= f + k);
				}
			}
			txs_replay_free(r);
		}
		memcpy(g_fr, cut, sizeof(cut));
		memcpy(g_len, cut_len, sizeof(cut_len));
	}
}

static int rx_sock(int family, uint16_t *port)
{
	int fd = socket(family, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	if (!t_lo_bind(fd, family, port)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Through the udp device over loopback: -n 12 datagrams = the 5 IPv4
 * payloads of the capture in file order, looping; counts exact. */
static void udp_engine_loopback(void **st)
{
	(void)st;
	write_frames(mixed_capture());
	for (int fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;
		struct txs_replay *r;
		assert_int_equal(txs_replay_load(&r, g_path, NULL, 0), 0);
		uint16_t port;
		int rx = rx_sock(family, &port);
		if (rx < 0) {
			assert_true(fam == 1); /* no IPv6 loopback here */
			txs_replay_free(r);
			break;
		}
		struct txs_flow_spec sp;
		spec_for(&sp, family);
		sp.dport = port;
		struct txs_replay_udp_info in;
		struct txs_netdev *dev;
		struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 2048, .dst = sp.dst, .dport = port };
		struct txs_engine_conf ec = { .n_workers = 1, .count = 12, .gen = &txs_replay_gen_ops, .gen_conf = r };
		struct txs_engine *e;
		/* a frame replay through udp: is refused by the worker (a device
		 * serves one engine: a new one for each run) */
		assert_int_equal(txs_netdev_open(&dev, "udp", &dc, NULL, 0), 0);
		ec.dev = dev;
		assert_int_equal(txs_replay_schedule(r, 50.0, &ec.pace), 0);
		assert_int_equal(t_engine_run(&ec), -EPROTOTYPE);
		txs_netdev_close(dev);
		assert_int_equal(txs_replay_udp(r, &sp, &in), 0);
		assert_int_equal(txs_replay_schedule(r, 50.0, &ec.pace), 0);
		/* IPv4: buffers too small for the 4000-byte datagram (the third):
		 * the fill fails there, never cuts it */
		static uint8_t buf[70000];
		if (family == AF_INET) {
			assert_int_equal(txs_netdev_open(&dev, "udp", &dc, NULL, 0), 0);
			ec.dev = dev;
			assert_int_equal(t_engine_run(&ec), -EMSGSIZE);
			txs_netdev_close(dev);
			for (unsigned k = 0; k < 2; k++) /* the two before it */
				assert_int_equal(recv(rx, buf, sizeof(buf), 0), k ? 0 : 100);
		}
		dc.frame_size = txs_replay_udp_frame_max(r);
		assert_int_equal(txs_netdev_open(&dev, "udp", &dc, NULL, 0), 0);
		ec.dev = dev;
		e = t_engine_done(&ec);
		struct txs_stat_row row;
		txs_engine_read(e, &row);
		assert_int_equal(row.packets, 12);
		txs_engine_destroy(e);
		struct txs_link_counters lc;
		txs_netdev_link_stats(dev, 0, &lc);
		assert_int_equal(lc.packets, 12);
		uint64_t dg = txs_replay_datagrams(r);
		for (unsigned k = 0; k < 12; k++) {
			struct pollfd p = { .fd = rx, .events = POLLIN };
			assert_int_equal(poll(&p, 1, 2000), 1);
			ssize_t got = recv(rx, buf, sizeof(buf), 0);
			uint32_t len;
			const uint8_t *want = txs_replay_datagram(r, k % dg, &len, NULL);
			assert_int_equal(got, len);
			assert_memory_equal(buf, want, len);
		}
		struct pollfd p = { .fd = rx, .events = POLLIN };
		assert_int_equal(poll(&p, 1, 100), 0); /* nothing more */
		close(rx);
		txs_netdev_close(dev);
		txs_replay_free(r);
	}
	unlink(g_path);
}

T_MAIN(cmocka_unit_test(loads_both_orders),
       cmocka_unit_test(out_of_order_times),
       cmocka_unit_test(refuses_bad_files),
       cmocka_unit_test(engine_sends_frames),
       cmocka_unit_test(udp_datagrams),
       cmocka_unit_test(udp_hostile_frames),
       cmocka_unit_test(udp_engine_loopback))
