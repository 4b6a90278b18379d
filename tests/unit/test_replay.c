/* SPDX-License-Identifier: MIT */
/* lib/replay: the pcap loader on good and hostile files (both byte orders,
 * micro- and nanosecond timestamps, cut records, truncated frames, link
 * types), the schedule (offsets, speed, loop period, out-of-order times), and
 * the generator through the engine into the dummy device (frames as they
 * are, looping, -n counts frames, refusals). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/replay.h>
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
	struct txs_engine *e;
	assert_int_equal(txs_engine_create(&e, &ec), 0);
	assert_int_equal(txs_engine_start(e), 0);
	assert_int_equal(txs_engine_wait(e), 0);
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
	assert_int_equal(txs_engine_create(&e, &ec), 0);
	assert_int_equal(txs_engine_start(e), 0);
	assert_int_equal(txs_engine_wait(e), -EMSGSIZE);
	txs_engine_destroy(e);
	txs_netdev_close(dev);
	txs_replay_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loads_both_orders),
		cmocka_unit_test(out_of_order_times),
		cmocka_unit_test(refuses_bad_files),
		cmocka_unit_test(engine_sends_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
