/* SPDX-License-Identifier: MIT */
/* pcap replay: load a classic libpcap capture, send its frames as they are
 * (include/txscale/replay.h, docs/replay.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/replay.h>

struct txs_replay {
	uint8_t *data;      /* the whole file */
	size_t size;
	uint64_t n;
	uint64_t *off;      /* frame i at data + off[i] */
	uint32_t *len;
	uint64_t *ts_ns;    /* capture time, ns (as in the file) */
	uint64_t *table;    /* txs_replay_schedule's due times */
	uint32_t max_len;
	uint64_t max_idx;
};

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAPNG_MAGIC 0x0a0d0d0au
#define LINKTYPE_ETHERNET 1u

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static int load_file(const char *path, uint8_t **data, size_t *size, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "'%s': %s", path, strerror(e));
		return -e;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	bool bad = ferror(f);
	fclose(f);
	if (!buf) {
		snprintf(err, errlen, "'%s': out of memory", path);
		return -ENOMEM;
	}
	if (bad) {
		free(buf);
		snprintf(err, errlen, "'%s': read error", path);
		return -EIO;
	}
	*data = buf;
	*size = n;
	return 0;
}

TXS_API int txs_replay_load(struct txs_replay **out, const char *path, char *err, size_t errlen)
{
	char dummy[8];
	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	*out = NULL;
	struct txs_replay *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	int rc = load_file(path, &r->data, &r->size, err, errlen);
	if (rc < 0) {
		free(r);
		return rc;
	}
	const uint8_t *d = r->data;
	if (r->size < 24) {
		snprintf(err, errlen, "'%s': not a pcap file (%zu bytes)", path, r->size);
		rc = -EINVAL;
		goto fail;
	}
	uint32_t m;
	memcpy(&m, d, 4);
	bool swap = false, nano = false;
	if (m == PCAP_MAGIC_US || m == PCAP_MAGIC_NS)
		nano = m == PCAP_MAGIC_NS;
	else if (__builtin_bswap32(m) == PCAP_MAGIC_US || __builtin_bswap32(m) == PCAP_MAGIC_NS)
		swap = true, nano = __builtin_bswap32(m) == PCAP_MAGIC_NS;
	else if (m == PCAPNG_MAGIC) {
		snprintf(err, errlen, "'%s': a pcapng file: replay reads classic pcap (convert: editcap -F pcap)", path);
		rc = -ENOTSUP;
		goto fail;
	} else {
		snprintf(err, errlen, "'%s': not a pcap file (magic 0x%08x)", path, m);
		rc = -EINVAL;
		goto fail;
	}
	uint32_t linktype = rd32(d + 20, swap) & 0x0fffffffu;
	if (linktype != LINKTYPE_ETHERNET) {
		snprintf(err, errlen, "'%s': link type %u: replay sends Ethernet frames (link type 1) only", path, linktype);
		rc = -ENOTSUP;
		goto fail;
	}
	/* two passes: count, then index */
	for (int pass = 0; pass < 2; pass++) {
		uint64_t n = 0;
		size_t off = 24;
		while (off < r->size) {
			if (r->size - off < 16) {
				snprintf(err, errlen, "'%s': record %llu: header cut short at byte %zu", path,
					 (unsigned long long)n, off);
				rc = -EINVAL;
				goto fail;
			}
			uint32_t sec = rd32(d + off, swap), frac = rd32(d + off + 4, swap);
			uint32_t incl = rd32(d + off + 8, swap), orig = rd32(d + off + 12, swap);
			if (incl > r->size - off - 16) {
				snprintf(err, errlen, "'%s': frame %llu: %u bytes, the file ends first", path,
					 (unsigned long long)n, incl);
				rc = -EINVAL;
				goto fail;
			}
			if (incl < orig) {
				snprintf(err, errlen, "'%s': frame %llu: the capture kept %u of its %u bytes (snaplen): "
					 "only whole frames can be replayed", path, (unsigned long long)n, incl, orig);
				rc = -EINVAL;
				goto fail;
			}
			if (incl < 14) {
				snprintf(err, errlen, "'%s': frame %llu: %u bytes, shorter than an Ethernet header", path,
					 (unsigned long long)n, incl);
				rc = -EINVAL;
				goto fail;
			}
			if (pass) {
				r->off[n] = off + 16;
				r->len[n] = incl;
				r->ts_ns[n] = (uint64_t)sec * 1000000000ull + (nano ? frac : (uint64_t)frac * 1000u);
				if (incl > r->max_len) {
					r->max_len = incl;
					r->max_idx = n;
				}
			}
			n++;
			off += 16 + incl;
		}
		if (!pass) {
			if (!n) {
				snprintf(err, errlen, "'%s': no frames", path);
				rc = -ENODATA;
				goto fail;
			}
			r->n = n;
			r->off = malloc(n * sizeof(*r->off));
			r->len = malloc(n * sizeof(*r->len));
			r->ts_ns = malloc(n * sizeof(*r->ts_ns));
			if (!r->off || !r->len || !r->ts_ns) {
				snprintf(err, errlen, "'%s': out of memory", path);
				rc = -ENOMEM;
				goto fail;
			}
		}
	}
	*out = r;
	return 0;
fail:
	txs_replay_free(r);
	return rc;
}

TXS_API void txs_replay_free(struct txs_replay *r)
{
	if (!r)
		return;
	free(r->data);
	free(r->off);
	free(r->len);
	free(r->ts_ns);
	free(r->table);
	free(r);
}

TXS_API uint64_t txs_replay_frames(const struct txs_replay *r)
{
	return r->n;
}

TXS_API uint32_t txs_replay_max_len(const struct txs_replay *r, uint64_t *index)
{
	if (index)
		*index = r->max_idx;
	return r->max_len;
}

TXS_API const uint8_t *txs_replay_frame(const struct txs_replay *r, uint64_t i, uint32_t *len)
{
	if (i >= r->n)
		return NULL;
	*len = r->len[i];
	return r->data + r->off[i];
}

TXS_API int txs_replay_schedule(struct txs_replay *r, double speed, struct txs_pace_conf *out)
{
	if (!(speed > 0) || speed > 1e12)
		return -EINVAL;
	if (!r->table && !(r->table = malloc(r->n * sizeof(*r->table))))
		return -ENOMEM;
	uint64_t t0 = r->ts_ns[0], prev = 0;
	for (uint64_t i = 0; i < r->n; i++) {
		uint64_t rel = r->ts_ns[i] > t0 ? r->ts_ns[i] - t0 : 0;
		double v = (double)rel / speed;
		uint64_t t = v < 1.8e19 ? (uint64_t)v : UINT64_MAX / 2;
		if (t < prev)
			t = prev; /* out of order in the file: sent in file order, at once */
		r->table[i] = prev = t;
	}
	uint64_t span = r->table[r->n - 1];
	*out = (struct txs_pace_conf){ .kind = TXS_PACE_TABLE, .table_ns = r->table, .table_n = r->n,
				       .table_period_ns = r->n > 1 ? span + span / (r->n - 1) : 0 };
	return 0;
}

/* ---- the generator ---------------------------------------------------------- */
struct replay_state {
	const struct txs_replay *r;
	uint64_t next; /* frame index to send next */
} TXS_CACHE_ALIGNED;

static int replay_init(struct txs_worker *w, void *conf)
{
	const struct txs_replay *r = conf;
	const struct txs_netdev *dev = w->txq->dev;
	if (!r)
		return -EINVAL;
	if (dev->kernel_ip)
		return -EPROTOTYPE; /* udp: takes payloads, not frames */
	if (dev->mtu && r->max_len > dev->mtu + 14)
		return -EMSGSIZE;
	struct replay_state *s = aligned_alloc(TXS_CACHE_LINE, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->r = r;
	w->gen = s;
	return 0;
}

static unsigned replay_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	(void)now_ns;
	struct replay_state *s = w->gen;
	const struct txs_replay *r = s->r;
	uint64_t i = s->next;
	unsigned k = 0;
	for (; k < n; k++) {
		uint32_t len = r->len[i];
		if (TXS_UNLIKELY(len > b[k].cap)) {
			w->fill_err = -EMSGSIZE; /* the device's buffers are smaller than this frame */
			break;
		}
		memcpy(b[k].data, r->data + r->off[i], len);
		b[k].len = len;
		b[k].l4_off = 0;
		b[k].gso_size = 0;
		b[k].segs = 1;
		b[k].link = 0;
		if (++i == r->n)
			i = 0;
	}
	s->next = i;
	return k;
}

static void replay_fini(struct txs_worker *w)
{
	free(w->gen);
	w->gen = NULL;
}

TXS_API const struct txs_gen_ops txs_replay_gen_ops = {
	.init = replay_init,
	.fill = replay_fill,
	.fini = replay_fini,
};
