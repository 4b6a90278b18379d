/* SPDX-License-Identifier: MIT */
/* Traffic shapes: ranges and walks stay in what the user gave,
 * size cycles hold their weights exactly, the template fast path and the
 * sendmsg path make the same datagrams for the same flows and sizes (the
 * one semantic core held against its fast path), the shaped fill's tagged
 * buffers give the very bytes of a whole copy, and recv's merge of a flow
 * split over cores is exact. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/txscale.h>
#include "test_util.h"

/* ---- ranges, walks ---------------------------------------------------------- */
static void range_parse(void **st)
{
	(void)st;
	char err[128];
	uint16_t lo;
	struct txs_range r;
	struct txs_addr a;
	assert_int_equal(txs_range_parse_port("40000-40999", &lo, &r, err, sizeof(err)), 0);
	assert_int_equal(lo, 40000);
	assert_int_equal(r.span, 1000);
	assert_int_equal(r.walk, TXS_WALK_INC);
	assert_int_equal(txs_range_parse_port("7", &lo, &r, err, sizeof(err)), 0);
	assert_int_equal(r.span, 1);
	assert_int_equal(txs_range_parse_port("100-200,random", &lo, &r, err, sizeof(err)), 0);
	assert_int_equal(r.walk, TXS_WALK_RANDOM);
	assert_int_equal(txs_range_parse_port("100-200,stride=7", &lo, &r, err, sizeof(err)), 0);
	assert_int_equal(r.walk, TXS_WALK_STRIDE);
	assert_int_equal(r.stride, 7);
	const char *badp[] = { "0", "200-100", "1-65536", "1-", "-5", "1-2,foo", "1-2,stride=0", "x", "" };
	for (size_t i = 0; i < sizeof(badp) / sizeof(badp[0]); i++)
		assert_int_equal(txs_range_parse_port(badp[i], &lo, &r, err, sizeof(err)), -EINVAL);
	assert_int_equal(txs_range_parse_addr("198.18.0.1-198.18.0.254", &a, &r, err, sizeof(err)), 0);
	assert_int_equal(r.span, 254);
	assert_int_equal(txs_range_parse_addr("198.18.0.0-198.19.255.255", &a, &r, err, sizeof(err)), 0);
	assert_int_equal(r.span, 131072);
	assert_int_equal(txs_range_parse_addr("2001:2::1-2001:2::ff", &a, &r, err, sizeof(err)), 0);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(r.span, 255);
	const char *bada[] = { "198.18.0.9-198.18.0.1", "198.18.0.1-2001:2::1", "2001:2::1-2001:3::1",
			       "0.0.0.0-255.255.255.255", "198.18.0.1-", "nope" };
	for (size_t i = 0; i < sizeof(bada) / sizeof(bada[0]); i++)
		assert_int_equal(txs_range_parse_addr(bada[i], &a, &r, err, sizeof(err)), -EINVAL);
}

/* Every walk keeps every value inside [lo, lo + span); inc and a coprime
 * stride visit each value once per span; flow ids are base + k*flows + i. */
static void walks_stay_in_range(void **st)
{
	(void)st;
	char err[128];
	static const char *const walks[] = { "", ",inc", ",random", ",stride=7", ",stride=10" };
	for (size_t wk = 0; wk < sizeof(walks) / sizeof(walks[0]); wk++) {
		struct txs_shape sh = { .flows = 300 };
		struct txs_flow_spec base = { 0 }, f;
		char s1[64], s2[64];
		snprintf(s1, sizeof(s1), "40000-40099%s", walks[wk]);
		snprintf(s2, sizeof(s2), "198.18.1.10-198.18.1.59%s", walks[wk]);
		assert_int_equal(txs_range_parse_port(s1, &base.sport, &sh.sport, err, sizeof(err)), 0);
		assert_int_equal(txs_range_parse_addr(s2, &base.dst, &sh.dst, err, sizeof(err)), 0);
		assert_int_equal(txs_addr_parse(&base.src, "198.18.0.1"), 0);
		base.dport = 5201;
		base.flow_id = 1000;
		for (unsigned k = 0; k < 3; k++) {
			uint64_t rng = txs_shape_rng_seed(5, k);
			unsigned seen_p[100] = { 0 }, seen_a[50] = { 0 };
			for (uint32_t i = 0; i < sh.flows; i++) {
				txs_shape_flow(&sh, &base, true, k, i, &rng, &f);
				assert_in_range(f.sport, 40000, 40099);
				uint32_t d = ntohl(f.dst.v4.s_addr);
				assert_in_range(d, 0xc612010au, 0xc612013bu);
				assert_int_equal(f.dport, 5201);
				assert_int_equal(f.flow_id, 1000 + k * 300 + i);
				assert_int_equal(f.src.v4.s_addr, base.src.v4.s_addr);
				seen_p[f.sport - 40000]++;
				seen_a[d - 0xc612010au]++;
			}
			if (sh.sport.walk == TXS_WALK_INC || (sh.sport.walk == TXS_WALK_STRIDE && sh.sport.stride == 7)) {
				for (unsigned v = 0; v < 100; v++)
					assert_int_equal(seen_p[v], 3); /* 300 flows over 100 ports: each 3 times */
				for (unsigned v = 0; v < 50; v++)
					assert_int_equal(seen_a[v], 6);
			}
		}
	}
	/* no range: the spec's values, source port spread per worker */
	struct txs_flow_spec base = { .sport = 40000, .dport = 9 }, f;
	uint64_t rng = 1;
	txs_shape_flow(NULL, &base, true, 3, 0, &rng, &f);
	assert_int_equal(f.sport, 40003);
	assert_int_equal(f.flow_id, 3);
}

/* ---- sizes ---------------------------------------------------------------------- */
static void sizes_parse(void **st)
{
	(void)st;
	char err[128];
	struct txs_shape sh = { 0 };
	assert_int_equal(txs_shape_parse_sizes(&sh, "imix", AF_INET, err, sizeof(err)), 0);
	assert_int_equal(sh.n_sizes, 3);
	/* 64/594/1518-byte frames with FCS: payload = frame - 4 - 14 - 20 - 8 */
	assert_int_equal(sh.sizes[0], 18);
	assert_int_equal(sh.sizes[1], 548);
	assert_int_equal(sh.sizes[2], 1472);
	assert_int_equal(sh.weights[0], 7);
	assert_int_equal(sh.weights[1], 4);
	assert_int_equal(sh.weights[2], 1);
	assert_int_equal(txs_shape_parse_sizes(&sh, "imix", AF_INET6, err, sizeof(err)), 0);
	assert_int_equal(sh.sizes[0], 16); /* no room in 64 bytes: the smallest with a header */
	assert_int_equal(sh.sizes[1], 528);
	assert_int_equal(sh.sizes[2], 1452);
	assert_int_equal(txs_shape_parse_sizes(&sh, "64,594,1518:7,4,1", AF_INET, err, sizeof(err)), 0);
	assert_int_equal(sh.n_sizes, 3);
	assert_int_equal(sh.sizes[2], 1518);
	assert_int_equal(sh.weights[0], 7);
	assert_int_equal(txs_shape_parse_sizes(&sh, "100-200/25", AF_INET, err, sizeof(err)), 0);
	assert_int_equal(sh.n_sizes, 5);
	assert_int_equal(sh.sizes[4], 200);
	assert_int_equal(txs_shape_max_size(&sh, 0), 200);
	assert_int_equal(txs_shape_parse_sizes(&sh, "16", AF_INET, err, sizeof(err)), 0);
	assert_int_equal(sh.n_sizes, 1);
	const char *bad[] = { "", "a", "1,2:1", "1,1", "65508", "10-5", "0-1000", "1,2:0,1", "5:", "1-2/0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(txs_shape_parse_sizes(&sh, bad[i], AF_INET, err, sizeof(err)), -EINVAL);
}

/* A cycle holds each size exactly weight / gcd times, interleaved; the
 * count after any number of datagrams matches a direct count. */
static void pattern_exact(void **st)
{
	(void)st;
	uint64_t rng = 77;
	for (int iter = 0; iter < 200; iter++) {
		struct txs_shape sh = { 0 };
		sh.n_sizes = 1 + (unsigned)(txs_rng_next(&rng) % 8);
		uint32_t g = 1 + (uint32_t)(txs_rng_next(&rng) % 3);
		for (unsigned k = 0; k < sh.n_sizes; k++) {
			sh.sizes[k] = 16 + 10 * k;
			sh.weights[k] = g * (1 + (uint32_t)(txs_rng_next(&rng) % 20));
		}
		uint8_t *pat;
		uint32_t len;
		assert_int_equal(txs_shape_pattern(&sh, &pat, &len), 0);
		uint32_t sum = 0, cnt[TXS_SHAPE_MAX_SIZES] = { 0 };
		for (unsigned k = 0; k < sh.n_sizes; k++)
			sum += sh.weights[k];
		for (uint32_t t = 0; t < len; t++)
			cnt[pat[t]]++;
		uint32_t gg = 0;
		for (unsigned k = 0; k < sh.n_sizes; k++) {
			uint32_t a = gg, b = sh.weights[k];
			while (b) {
				uint32_t tt = a % b;
				a = b;
				b = tt;
			}
			gg = a;
		}
		assert_int_equal(len, sum / gg);
		for (unsigned k = 0; k < sh.n_sizes; k++)
			assert_int_equal(cnt[k], sh.weights[k] / gg);
		uint64_t n = txs_rng_next(&rng) % 5000, pk[TXS_SHAPE_MAX_SIZES] = { 0 }, by[TXS_SHAPE_MAX_SIZES] = { 0 },
			 direct[TXS_SHAPE_MAX_SIZES] = { 0 };
		txs_shape_count(&sh, pat, len, n, pk, by);
		for (uint64_t t = 0; t < n; t++)
			direct[pat[t % len]]++;
		for (unsigned k = 0; k < sh.n_sizes; k++) {
			assert_int_equal(pk[k], direct[k]);
			assert_int_equal(by[k], direct[k] * sh.sizes[k]);
		}
		free(pat);
	}
	/* imix: 7:4:1 interleaved, never seven small ones in a row */
	struct txs_shape sh = { 0 };
	char err[64];
	assert_int_equal(txs_shape_parse_sizes(&sh, "imix", AF_INET, err, sizeof(err)), 0);
	uint8_t *pat;
	uint32_t len;
	assert_int_equal(txs_shape_pattern(&sh, &pat, &len), 0);
	assert_int_equal(len, 12);
	unsigned run = 0, maxrun = 0;
	for (uint32_t t = 0; t < 2 * len; t++) {
		run = pat[t % len] == 0 ? run + 1 : 0;
		if (run > maxrun)
			maxrun = run;
	}
	assert_true(maxrun <= 3);
	free(pat);
}

/* ---- the two send paths against each other ------------------------------------- */
enum { NB = 64, CAP = 2048 };
struct fake {
	struct txs_netdev dev;
	struct txs_txq q;
	struct txs_worker w;
	uint8_t *mem;
	struct txs_pktbuf b[NB];
};

static const struct txs_netdev_ops fake_ops = { 0 }; /* no device calls: the fills are driven here */

static void fake_init(struct fake *f, unsigned k)
{
	memset(f, 0, sizeof(*f));
	f->dev.ops = &fake_ops;
	f->dev.n_links = 1;
	f->dev.mtu = 1500;
	f->dev.conf.frame_size = CAP;
	f->dev.conf.max_queues = 4;
	f->q.dev = &f->dev;
	f->w.id = k;
	f->w.txq = &f->q;
	f->w.frames_per_dgram = f->w.min_frames = 1;
	f->mem = calloc(NB, CAP);
	assert_non_null(f->mem);
}

/* A fake worker k on the heap, set up (fake_init); fake_free releases it. */
static struct fake *fake_new(unsigned k)
{
	struct fake *f = malloc(sizeof(*f));
	assert_non_null(f);
	fake_init(f, k);
	return f;
}

static void fake_free(struct fake *f)
{
	free(f->mem);
	free(f);
}

static void bufs(struct fake *f, unsigned n, uint32_t cap)
{
	for (unsigned i = 0; i < n; i++)
		f->b[i] = (struct txs_pktbuf){ .data = f->mem + (size_t)i * CAP, .cap = cap, .segs = 1 };
}

struct dg {
	struct txs_pkt_info pi;
	struct txs_ph ph;
	uint32_t len;
	uint8_t body[2048];
};

static void parse_dg(const struct txs_pktbuf *b, struct dg *d)
{
	assert_int_equal(txs_parse(b->data, b->len, TXS_L2_ETH, &d->pi), TXS_PERR_OK);
	assert_int_not_equal(txs_ph_read(d->pi.payload, d->pi.payload_len, &d->ph), TXS_PH_NONE);
	d->len = d->pi.payload_len;
	memcpy(d->body, d->pi.payload, d->len);
	memset(d->body + 8, 0, 8 + 8); /* seq (compared apart) and timestamp */
}

static void paths_agree_case(int family, const char *sizes, unsigned n_vlan)
{
	char err[128];
	static struct txs_shape sh;
	memset(&sh, 0, sizeof(sh));
	sh.flows = 37;
	struct txs_flow_spec sp = { 0 };
	int rc = family == AF_INET ? txs_range_parse_addr("198.18.4.1-198.18.4.20,random", &sp.dst, &sh.dst, err, 128)
				   : txs_range_parse_addr("2001:2::10-2001:2::30,stride=3", &sp.dst, &sh.dst, err, 128);
	assert_int_equal(rc, 0);
	assert_int_equal(txs_range_parse_port("41000-41009", &sp.sport, &sh.sport, err, sizeof(err)), 0);
	assert_int_equal(txs_range_parse_port("6000-6002,stride=2", &sp.dport, &sh.dport, err, sizeof(err)), 0);
	assert_int_equal(txs_addr_parse(&sp.src, family == AF_INET ? "198.18.0.1" : "2001:2::1"), 0);
	assert_int_equal(txs_shape_parse_sizes(&sh, sizes, family, err, sizeof(err)), 0);
	sp.payload_len = txs_shape_max_size(&sh, 0);
	sp.ttl = 64;
	sp.flow_id = 500;
	sp.n_vlan = (uint8_t)n_vlan;
	sp.vlan_tci[0] = 5 << 13 | 200;
	sp.vlan_tci[1] = 300;
	struct txs_gen_conf gc = { .spec = sp, .spread_sport = true, .seed = 42, .shape = &sh };
	struct txs_udp_gen_conf uc = { .spec = sp, .spread_sport = true, .connected = true, .seed = 42, .shape = &sh,
				       .max_segs = 64 };
	for (unsigned k = 0; k < 2; k++) {
		struct fake *fa = fake_new(k), *fb = fake_new(k);
		assert_int_equal(txs_udp_gen_ops.init(&fa->w, &gc), 0);
		assert_int_equal(txs_udp_sock_gen_ops.init(&fb->w, &uc), 0);
		struct dg *da = malloc(sizeof(*da)), *db = malloc(sizeof(*db));
		for (int round = 0; round < 20; round++) {
			unsigned n = 1 + (unsigned)round % NB;
			bufs(fa, n, CAP);
			bufs(fb, n, CAP);
			fb->w.left = UINT64_MAX;
			assert_int_equal(txs_udp_gen_ops.fill(&fa->w, fa->b, n, 7), n);
			assert_int_equal(txs_udp_sock_gen_ops.fill(&fb->w, fb->b, n, 7), n);
			for (unsigned i = 0; i < n; i++) {
				parse_dg(&fa->b[i], da);
				parse_dg(&fb->b[i], db);
				/* the same datagram: addresses, ports, TOS/TTL, DF, flow id,
				 * sequence, payload bytes (IDs come from two allocators) */
				assert_memory_equal(&da->pi.src, &db->pi.src, sizeof(da->pi.src));
				assert_memory_equal(&da->pi.dst, &db->pi.dst, sizeof(da->pi.dst));
				assert_int_equal(da->pi.sport, db->pi.sport);
				assert_int_equal(da->pi.dport, db->pi.dport);
				assert_int_equal(da->pi.ttl, db->pi.ttl);
				assert_int_equal(da->pi.tos, db->pi.tos);
				assert_int_equal(da->pi.df, db->pi.df);
				assert_int_equal(da->ph.flow, db->ph.flow);
				assert_int_equal(da->ph.seq, db->ph.seq);
				assert_int_equal(da->len, db->len);
				assert_memory_equal(da->body, db->body, da->len);
				assert_int_equal(fa->b[i].len, fb->b[i].len);
				assert_int_equal(fa->b[i].l4_off, fb->b[i].l4_off);
				/* the same tags, in the same place: the whole L2 header */
				assert_int_equal(da->pi.n_vlan, n_vlan);
				assert_int_equal(db->pi.n_vlan, n_vlan);
				assert_memory_equal(fa->b[i].data, fb->b[i].data, 14 + 4 * n_vlan);
				assert_in_range(da->ph.flow, 500 + k * 37, 500 + k * 37 + 36);
			}
		}
		txs_udp_gen_ops.fini(&fa->w);
		txs_udp_sock_gen_ops.fini(&fb->w);
		free(da);
		free(db);
		fake_free(fa);
		fake_free(fb);
	}
}

static void paths_agree(void **st)
{
	(void)st;
	for (unsigned v = 0; v <= 2; v++) {
		paths_agree_case(AF_INET, "imix", v);
		paths_agree_case(AF_INET, "16,100,1000:3,2,1", v);
		paths_agree_case(AF_INET6, "imix", v);
		paths_agree_case(AF_INET6, "24-1024/100", v);
	}
}

/* The shaped fill into buffers that keep their bytes between bursts (tags:
 * only headers copied) against the same fill into zeroed buffers too small
 * for a tag (whole copies), byte for byte, while frames are moved between
 * buffers as a device's copy-in does. */
static void tagged_buffers_exact(void **st)
{
	(void)st;
	char err[128];
	static struct txs_shape sh;
	memset(&sh, 0, sizeof(sh));
	sh.flows = 5;
	struct txs_flow_spec sp = { 0 };
	assert_int_equal(txs_addr_parse(&sp.src, "198.18.0.1"), 0);
	assert_int_equal(txs_addr_parse(&sp.dst, "198.18.0.2"), 0);
	sp.sport = 40000;
	sp.dport = 5201;
	assert_int_equal(txs_shape_parse_sizes(&sh, "16,100,700,1472,300:5,1,2,1,3", AF_INET, err, sizeof(err)), 0);
	sp.payload_len = 1472;
	struct txs_gen_conf gc = { .spec = sp, .seed = 3, .shape = &sh };
	struct fake *fa = fake_new(0), *fb = fake_new(0);
	assert_int_equal(txs_udp_gen_ops.init(&fa->w, &gc), 0);
	assert_int_equal(txs_udp_gen_ops.init(&fb->w, &gc), 0);
	uint64_t rng = 11;
	for (int round = 0; round < 400; round++) {
		unsigned n = 1 + (unsigned)(txs_rng_next(&rng) % NB);
		bufs(fa, n, CAP);
		/* a rotating start: buffer i meets every size */
		unsigned rot = (unsigned)(txs_rng_next(&rng) % NB);
		for (unsigned i = 0; i < n; i++)
			fa->b[i].data = fa->mem + (size_t)((i + rot) % NB) * CAP;
		memset(fb->mem, 0xa5, (size_t)NB * CAP);
		bufs(fb, n, 1514); /* no room for a tag: whole copies */
		assert_int_equal(txs_udp_gen_ops.fill(&fa->w, fa->b, n, 100 + round), n);
		assert_int_equal(txs_udp_gen_ops.fill(&fb->w, fb->b, n, 100 + round), n);
		for (unsigned i = 0; i < n; i++) {
			assert_int_equal(fa->b[i].len, fb->b[i].len);
			assert_memory_equal(fa->b[i].data, fb->b[i].data, fa->b[i].len);
		}
		/* a device's copy-in: one frame moved into another buffer */
		unsigned from = (unsigned)(txs_rng_next(&rng) % n), to = (unsigned)(txs_rng_next(&rng) % NB);
		uint8_t *dst = fa->mem + (size_t)to * CAP;
		if (dst != fa->b[from].data)
			memmove(dst, fa->b[from].data, fa->b[from].len);
	}
	txs_udp_gen_ops.fini(&fa->w);
	txs_udp_gen_ops.fini(&fb->w);
	fake_free(fa);
	fake_free(fb);
}

/* Each flow's IPv4 ID comes from the bucket of its own destination: with
 * the "atomic" allocator (one shared counter per bucket, +1 per datagram),
 * every bucket advanced by exactly the datagrams sent to the destinations
 * that hash into it, and those datagrams carry its consecutive IDs. */
static void ids_per_destination(void **st)
{
	(void)st;
	char err[128];
	struct txs_ident *id;
	struct txs_ident_conf ic = { .strategy = "atomic", .max_cores = 1, .seed = 5, .table_size = 64,
				     .fixed_key = true, .key = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 } };
	assert_int_equal(txs_ident_create(&id, &ic), 0);
	static struct txs_shape sh;
	memset(&sh, 0, sizeof(sh));
	sh.flows = 12;
	struct txs_flow_spec sp = { 0 };
	assert_int_equal(txs_addr_parse(&sp.src, "198.18.0.1"), 0);
	assert_int_equal(txs_range_parse_addr("198.18.5.1-198.18.5.6", &sp.dst, &sh.dst, err, sizeof(err)), 0);
	sp.sport = 40000;
	sp.dport = 5201;
	sp.payload_len = 32;
	struct txs_gen_conf gc = { .spec = sp, .seed = 1, .shape = &sh, .ident_inst = id, .ident = "atomic" };
	struct fake *f = fake_new(0);
	uint32_t hash[6], before[6], after[6];
	unsigned pk[6] = { 0 };
	uint16_t last[6] = { 0 };
	for (unsigned d = 0; d < 6; d++) {
		hash[d] = txs_ident_hash4(id, htonl(0xc6120501u + d), sp.src.v4.s_addr, 17);
		before[d] = txs_ident_bucket_position(id, hash[d]);
	}
	assert_int_equal(txs_udp_gen_ops.init(&f->w, &gc), 0);
	for (int round = 0; round < 10; round++) {
		bufs(f, 60, CAP);
		assert_int_equal(txs_udp_gen_ops.fill(&f->w, f->b, 60, 1), 60);
		for (unsigned i = 0; i < 60; i++) {
			struct txs_pkt_info pi;
			assert_int_equal(txs_parse(f->b[i].data, f->b[i].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
			unsigned d = ntohl(pi.dst.v4.s_addr) - 0xc6120501u;
			assert_true(d < 6);
			/* consecutive within the destination's bucket (shared only
			 * with destinations hashing there: checked by the sums below) */
			bool shared = false;
			for (unsigned e = 0; e < 6; e++)
				shared |= e != d && (hash[e] & 63) == (hash[d] & 63);
			if (pk[d] && !shared)
				assert_int_equal(pi.ip_id, (uint16_t)(last[d] + 1));
			last[d] = pi.ip_id;
			pk[d]++;
		}
	}
	txs_udp_gen_ops.fini(&f->w);
	unsigned groups = 0;
	for (unsigned d = 0; d < 6; d++) {
		after[d] = txs_ident_bucket_position(id, hash[d]);
		unsigned sum = 0;
		bool first = true;
		for (unsigned e = 0; e < 6; e++)
			if ((hash[e] & 63) == (hash[d] & 63)) { /* the same bucket (64 buckets: hash & 63) */
				sum += pk[e];
				first &= e >= d;
			}
		groups += first;
		assert_int_equal(after[d] - before[d], sum);
		assert_int_equal(pk[d], 100); /* 12 flows over 6 destinations, 600 datagrams */
	}
	assert_true(groups >= 2); /* several buckets exercised */
	fake_free(f);
	txs_ident_destroy(id);
}

T_MAIN(cmocka_unit_test(range_parse),
       cmocka_unit_test(walks_stay_in_range),
       cmocka_unit_test(sizes_parse),
       cmocka_unit_test(pattern_exact),
       cmocka_unit_test(paths_agree),
       cmocka_unit_test(tagged_buffers_exact),
       cmocka_unit_test(ids_per_destination))
