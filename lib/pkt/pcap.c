/* SPDX-License-Identifier: MIT */
/* pcap reader: classic pcap parsed in place from memory (a buffer, or an mmap
 * of the file), every length checked against what is left; other formats
 * (pcapng) through libpcap when built with it. A corrupt record is counted:
 * skipped when its length still tells where the next one starts, else the
 * stream ends there. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <txscale/pkt.h>
#ifdef TXS_HAVE_PCAP
#include <pcap/pcap.h>
#endif

#define MAGIC_US 0xa1b2c3d4u
#define MAGIC_NS 0xa1b23c4du
#define PCAPNG_SHB 0x0a0d0d0au
#define GHDR_LEN 24
#define RHDR_LEN 16

/* link types (https://www.tcpdump.org/linktypes.html) */
#define LT_NULL 0
#define LT_EN10MB 1
#define LT_RAW_BSD 12
#define LT_RAW_BSD2 14
#define LT_RAW 101
#define LT_LOOP 108
#define LT_LINUX_SLL 113
#define LT_IPV4 228
#define LT_IPV6 229
#define LT_LINUX_SLL2 276

static inline uint32_t rd32(const struct txs_pcap *p, const uint8_t *b)
{
	uint32_t v;
	memcpy(&v, b, 4);
	return p->swap ? __builtin_bswap32(v) : v;
}

static bool linktype_ok(uint32_t lt)
{
	switch (lt) {
	case LT_NULL: case LT_EN10MB: case LT_RAW_BSD: case LT_RAW_BSD2: case LT_RAW:
	case LT_LOOP: case LT_LINUX_SLL: case LT_IPV4: case LT_IPV6: case LT_LINUX_SLL2:
		return true;
	default:
		return false;
	}
}

/* Strip the link layer of rec per p->linktype. false: skip the record. */
static bool strip_l2(struct txs_pcap *p, struct txs_pcap_rec *r)
{
	r->not_ip = false;
	switch (p->linktype) {
	case LT_EN10MB:
		r->l2 = TXS_L2_ETH;
		return true;
	case LT_RAW_BSD: case LT_RAW_BSD2: case LT_RAW: case LT_IPV4: case LT_IPV6:
		r->l2 = TXS_L2_NONE;
		return true;
	case LT_NULL: case LT_LOOP: {
		/* 4-byte address family: host order of the capturing machine (NULL)
		 * or network order (LOOP); accept both */
		if (r->caplen < 4) {
			p->n.bad_l2++;
			return false;
		}
		uint32_t af, sw;
		memcpy(&af, r->data, 4);
		sw = __builtin_bswap32(af);
		r->not_ip = !(af == 2 || sw == 2 || af == 24 || sw == 24 || af == 28 || sw == 28 || af == 30 ||
			      sw == 30);
		r->data += 4;
		r->caplen -= 4;
		r->origlen = r->origlen >= 4 ? r->origlen - 4 : 0;
		r->l2 = TXS_L2_NONE;
		return true;
	}
	case LT_LINUX_SLL:
	case LT_LINUX_SLL2: {
		uint32_t hl = p->linktype == LT_LINUX_SLL ? 16 : 20;
		if (r->caplen < hl) {
			p->n.bad_l2++;
			return false;
		}
		uint16_t proto = txs_get_be16(r->data + (p->linktype == LT_LINUX_SLL ? 14 : 0));
		r->not_ip = proto != TXS_ETHERTYPE_IPV4 && proto != TXS_ETHERTYPE_IPV6;
		r->data += hl;
		r->caplen -= hl;
		r->origlen = r->origlen >= hl ? r->origlen - hl : 0;
		r->l2 = TXS_L2_NONE;
		return true;
	}
	default:
		return false;
	}
}

static int open_classic(struct txs_pcap *p)
{
	uint32_t m;
	memcpy(&m, p->buf, 4);
	if (m == MAGIC_US || m == MAGIC_NS) {
		p->swap = false;
	} else if (__builtin_bswap32(m) == MAGIC_US || __builtin_bswap32(m) == MAGIC_NS) {
		p->swap = true;
		m = __builtin_bswap32(m);
	} else {
		return -ENOENT;
	}
	p->nsec = m == MAGIC_NS;
	if (p->len < GHDR_LEN) {
		snprintf(p->err, sizeof(p->err), "pcap file header truncated (%zu of 24 bytes)", p->len);
		p->n.truncated++;
		return -EINVAL;
	}
	p->snaplen = rd32(p, p->buf + 16);
	p->linktype = rd32(p, p->buf + 20) & 0xffff;
	if (!linktype_ok(p->linktype)) {
		snprintf(p->err, sizeof(p->err), "unsupported pcap link type %u", p->linktype);
		return -EINVAL;
	}
	p->off = GHDR_LEN;
	p->fast = !p->swap && p->linktype == LT_EN10MB;
	return 0;
}

#ifdef TXS_HAVE_PCAP
static int open_lp(struct txs_pcap *p, pcap_t *lp, const char *errbuf)
{
	if (!lp) {
		snprintf(p->err, sizeof(p->err), "not a pcap file (%s)", errbuf);
		return -EINVAL;
	}
	p->lp = lp;
	p->linktype = (uint32_t)pcap_datalink(lp);
	if (!linktype_ok(p->linktype)) {
		snprintf(p->err, sizeof(p->err), "unsupported pcap link type %u", p->linktype);
		pcap_close(lp);
		p->lp = NULL;
		return -EINVAL;
	}
	return 0;
}
#endif

TXS_API int txs_pcap_open_mem(struct txs_pcap *p, const void *buf, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->len = len;
	if (len < 4) {
		snprintf(p->err, sizeof(p->err), "not a pcap file (%zu bytes)", len);
		return -EINVAL;
	}
	int rc = open_classic(p);
	if (rc != -ENOENT)
		return rc;
#ifdef TXS_HAVE_PCAP
	FILE *f = fmemopen((void *)buf, len, "r");
	if (!f)
		return -errno;
	char eb[PCAP_ERRBUF_SIZE] = "";
	pcap_t *lp = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, eb);
	if (!lp) {
		fclose(f);
		return open_lp(p, NULL, eb);
	}
	return open_lp(p, lp, eb);
#else
	snprintf(p->err, sizeof(p->err), "not a classic pcap file (pcapng needs libpcap)");
	return -EINVAL;
#endif
}

/* A pipe, a FIFO or standard input ("-"): records are read as they come
 * (libpcap's reader over the stream), so `send --dev pcap:- | recv --dev
 * pcap:-` needs no file and no memory for the whole capture. Takes fd. */
static int open_stream(struct txs_pcap *p, int fd, const char *path)
{
#ifdef TXS_HAVE_PCAP
	FILE *f = fdopen(fd, "r");
	if (!f) {
		int e = errno;
		close(fd);
		snprintf(p->err, sizeof(p->err), "cannot read '%.100s': %s", path, strerror(e));
		return -e;
	}
	char eb[PCAP_ERRBUF_SIZE] = "";
	pcap_t *lp = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, eb);
	if (!lp) {
		fclose(f);
		snprintf(p->err, sizeof(p->err), "'%.60s' is not a pcap stream (%.70s)", path, eb);
		return -EINVAL;
	}
	return open_lp(p, lp, eb);
#else
	close(fd);
	snprintf(p->err, sizeof(p->err), "'%.80s' is not a regular file: reading a pipe needs libpcap", path);
	return -EINVAL;
#endif
}

TXS_API int txs_pcap_open_file(struct txs_pcap *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(p->err, sizeof(p->err), "cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		snprintf(p->err, sizeof(p->err), "cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode))
		return open_stream(p, fd, path);
	if (!S_ISREG(st.st_mode) || st.st_size < 4) {
		snprintf(p->err, sizeof(p->err), "'%s' is not a pcap file", path);
		close(fd);
		return -EINVAL;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		int e = errno;
		snprintf(p->err, sizeof(p->err), "cannot map '%s': %s", path, strerror(e));
		return -e;
	}
	int rc = txs_pcap_open_mem(p, m, (size_t)st.st_size);
	if (rc < 0) {
		munmap(m, (size_t)st.st_size);
		p->buf = NULL;
		return rc;
	}
	/* classic: parsed in place; libpcap: reads its own FILE over the mapping */
	p->mapped = true;
	return 0;
}

#ifdef TXS_HAVE_PCAP
static int next_lp(struct txs_pcap *p, struct txs_pcap_rec *r)
{
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *d;
		int rc = pcap_next_ex(p->lp, &h, &d);
		if (rc != 1) {
			if (rc == PCAP_ERROR)
				p->n.truncated++;
			p->done = true;
			return 0;
		}
		r->data = d;
		r->caplen = h->caplen;
		r->origlen = h->len;
		r->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
		if (r->caplen < r->origlen)
			p->n.snapped++;
		if (!strip_l2(p, r))
			continue;
		p->n.records++;
		return 1;
	}
}
#endif

TXS_API int txs_pcap_next_slow(struct txs_pcap *p, struct txs_pcap_rec *r)
{
#ifdef TXS_HAVE_PCAP
	if (TXS_UNLIKELY(p->lp))
		return p->done ? 0 : next_lp(p, r);
#endif
	for (;;) {
		size_t left = p->len - p->off;
		if (TXS_UNLIKELY(left < RHDR_LEN)) {
			if (left && !p->done)
				p->n.truncated++;
			p->done = true;
			return 0;
		}
		const uint8_t *hp = p->buf + p->off;
		uint32_t h[4];
		memcpy(h, hp, RHDR_LEN);
		if (TXS_UNLIKELY(p->swap))
			for (int i = 0; i < 4; i++)
				h[i] = __builtin_bswap32(h[i]);
		uint32_t incl = h[2], orig = h[3];
		if (TXS_UNLIKELY(incl > left - RHDR_LEN || incl > TXS_PCAP_MAX_REC)) {
			/* a garbage length: nothing after it can be trusted */
			if (incl > TXS_PCAP_MAX_REC)
				p->n.bad_len++;
			else
				p->n.truncated++;
			p->off = p->len;
			p->done = true;
			return 0;
		}
		p->off += RHDR_LEN + incl;
		if (TXS_UNLIKELY(incl > orig || h[1] >= (p->nsec ? 1000000000u : 1000000u))) {
			p->n.bad_len++;
			continue;
		}
		r->data = hp + RHDR_LEN;
		r->caplen = incl;
		r->origlen = orig;
		r->ts_ns = (uint64_t)h[0] * 1000000000ull + (p->nsec ? h[1] : (uint64_t)h[1] * 1000u);
		if (TXS_UNLIKELY(incl < orig))
			p->n.snapped++;
		if (TXS_LIKELY(p->linktype == LT_EN10MB)) {
			r->l2 = TXS_L2_ETH;
			r->not_ip = false;
		} else if (!strip_l2(p, r)) {
			continue;
		}
		p->n.records++;
		return 1;
	}
}

TXS_API void txs_pcap_close(struct txs_pcap *p)
{
#ifdef TXS_HAVE_PCAP
	if (p->lp)
		pcap_close(p->lp); /* closes the FILE it read */
	p->lp = NULL;
#endif
	if (p->mapped && p->buf)
		munmap((void *)p->buf, p->len);
	p->buf = NULL;
	p->mapped = false;
}

TXS_API size_t txs_pcap_write_hdr(uint8_t *b, uint32_t snaplen)
{
	uint32_t h[6] = { MAGIC_NS, 2 | 4u << 16, 0, 0, snaplen, LT_EN10MB };
	memcpy(b, h, sizeof(h));
	return GHDR_LEN;
}

TXS_API size_t txs_pcap_write_rec(uint8_t *b, const uint8_t *frame, uint32_t len, uint64_t ts_ns)
{
	uint32_t h[4] = { (uint32_t)(ts_ns / 1000000000ull), (uint32_t)(ts_ns % 1000000000ull), len, len };
	memcpy(b, h, sizeof(h));
	memcpy(b + RHDR_LEN, frame, len);
	return RHDR_LEN + len;
}
