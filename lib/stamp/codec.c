/* SPDX-License-Identifier: MIT */
/* STAMP test packets (RFC 8762 section 4, SSID of RFC 8972 section 3):
 * the four layouts (sender / reflector x unauthenticated / authenticated),
 * timestamps, the HMAC, and the reflector's answer to one datagram with the
 * RFC 8972 TLVs (docs/stamp.md). Pure functions: no socket, no clock. */
#include <errno.h>
#include <string.h>
#include <sodium.h>
#include <txscale/stamp.h>
#include "stamp_priv.h"

#define NTP_UNIX_OFFSET 2208988800ull

uint64_t txs_stamp_ntp_from_ns(uint64_t ns)
{
	uint64_t sec = ns / 1000000000ull, nsec = ns % 1000000000ull;
	uint64_t frac = (nsec << 32) / 1000000000ull;
	return ((sec + NTP_UNIX_OFFSET) << 32) | frac;
}

uint64_t txs_stamp_ns_from_ts(uint64_t ts, uint16_t err)
{
	uint64_t sec = ts >> 32, lo = ts & 0xffffffffull;
	if (err & TXS_STAMP_ERR_Z) /* PTPv2 truncated: seconds, nanoseconds (epoch 1970, TAI) */
		return sec * 1000000000ull + (lo < 1000000000ull ? lo : 999999999ull);
	if (sec < NTP_UNIX_OFFSET) /* before 1970, or era 1 (after 2036): fold as NTP era 1 */
		sec += 1ull << 32;
	return (sec - NTP_UNIX_OFFSET) * 1000000000ull + ((lo * 1000000000ull + (1ull << 31)) >> 32);
}

/* ---- HMAC-SHA-256/128 ------------------------------------------------------- */

void stamp_hmac(const struct txs_stamp_key *k, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
		uint8_t out[TXS_STAMP_HMAC_LEN])
{
	crypto_auth_hmacsha256_state st;
	uint8_t full[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_init(&st, k->k, k->len);
	crypto_auth_hmacsha256_update(&st, a, alen);
	if (blen)
		crypto_auth_hmacsha256_update(&st, b, blen);
	crypto_auth_hmacsha256_final(&st, full);
	memcpy(out, full, TXS_STAMP_HMAC_LEN);
	sodium_memzero(&st, sizeof(st));
}

static bool hmac_ok(const struct txs_stamp_key *k, const uint8_t *buf)
{
	uint8_t mac[TXS_STAMP_HMAC_LEN];
	stamp_hmac(k, buf, TXS_STAMP_AUTH_COVER, NULL, 0, mac);
	return sodium_memcmp(mac, buf + TXS_STAMP_AUTH_COVER, TXS_STAMP_HMAC_LEN) == 0;
}

/* ---- layouts ----------------------------------------------------------------------- */

int txs_stamp_encode_sender(uint8_t *buf, size_t len, const struct txs_stamp_pkt *p, const struct txs_stamp_key *key)
{
	bool auth = key && key->len;
	if (len < (auth ? TXS_STAMP_AUTH_LEN : TXS_STAMP_BASE_LEN) || len > TXS_STAMP_MAX_LEN)
		return -EINVAL;
	if (!auth) {
		memset(buf, 0, TXS_STAMP_BASE_LEN);
		txs_put_be32(buf, p->seq);
		txs_put_be64(buf + 4, p->ts);
		txs_put_be16(buf + 12, p->err);
		txs_put_be16(buf + 14, p->ssid);
		return 0;
	}
	memset(buf, 0, TXS_STAMP_AUTH_LEN);
	txs_put_be32(buf, p->seq);
	txs_put_be64(buf + 16, p->ts);
	txs_put_be16(buf + 24, p->err);
	txs_put_be16(buf + 26, p->ssid);
	stamp_hmac(key, buf, TXS_STAMP_AUTH_COVER, NULL, 0, buf + TXS_STAMP_AUTH_COVER);
	return 0;
}

int txs_stamp_decode_sender(const uint8_t *buf, size_t len, const struct txs_stamp_key *key, struct txs_stamp_pkt *p)
{
	bool auth = key && key->len;
	memset(p, 0, sizeof(*p));
	if (len < (auth ? TXS_STAMP_AUTH_LEN : TXS_STAMP_BASE_LEN))
		return -EMSGSIZE;
	p->seq = txs_get_be32(buf);
	if (!auth) {
		p->ts = txs_get_be64(buf + 4);
		p->err = txs_get_be16(buf + 12);
		p->ssid = txs_get_be16(buf + 14);
		return 0;
	}
	if (!hmac_ok(key, buf))
		return -EACCES;
	p->ts = txs_get_be64(buf + 16);
	p->err = txs_get_be16(buf + 24);
	p->ssid = txs_get_be16(buf + 26);
	return 0;
}

int txs_stamp_decode_reflected(const uint8_t *buf, size_t len, const struct txs_stamp_key *key,
			       struct txs_stamp_pkt *p)
{
	bool auth = key && key->len;
	memset(p, 0, sizeof(*p));
	if (len < (auth ? TXS_STAMP_AUTH_LEN : TXS_STAMP_BASE_LEN))
		return -EMSGSIZE;
	p->seq = txs_get_be32(buf);
	if (!auth) {
		p->ts = txs_get_be64(buf + 4);
		p->err = txs_get_be16(buf + 12);
		p->ssid = txs_get_be16(buf + 14);
		p->rx_ts = txs_get_be64(buf + 16);
		p->s_seq = txs_get_be32(buf + 24);
		p->s_ts = txs_get_be64(buf + 28);
		p->s_err = txs_get_be16(buf + 36);
		p->s_ttl = buf[40];
		return 0;
	}
	if (!hmac_ok(key, buf))
		return -EACCES;
	p->ts = txs_get_be64(buf + 16);
	p->err = txs_get_be16(buf + 24);
	p->ssid = txs_get_be16(buf + 26);
	p->rx_ts = txs_get_be64(buf + 32);
	p->s_seq = txs_get_be32(buf + 48);
	p->s_ts = txs_get_be64(buf + 64);
	p->s_err = txs_get_be16(buf + 72);
	p->s_ttl = buf[80];
	return 0;
}

/* The reflected base packet into out (whole base length zeroed first). */
static void encode_reflected(uint8_t *out, bool auth, const struct txs_stamp_pkt *p)
{
	if (!auth) {
		memset(out, 0, TXS_STAMP_BASE_LEN);
		txs_put_be32(out, p->seq);
		txs_put_be64(out + 4, p->ts);
		txs_put_be16(out + 12, p->err);
		txs_put_be16(out + 14, p->ssid);
		txs_put_be64(out + 16, p->rx_ts);
		txs_put_be32(out + 24, p->s_seq);
		txs_put_be64(out + 28, p->s_ts);
		txs_put_be16(out + 36, p->s_err);
		out[40] = p->s_ttl;
		return;
	}
	memset(out, 0, TXS_STAMP_AUTH_LEN);
	txs_put_be32(out, p->seq);
	txs_put_be64(out + 16, p->ts);
	txs_put_be16(out + 24, p->err);
	txs_put_be16(out + 26, p->ssid);
	txs_put_be64(out + 32, p->rx_ts);
	txs_put_be32(out + 48, p->s_seq);
	txs_put_be64(out + 64, p->s_ts);
	txs_put_be16(out + 72, p->s_err);
	out[80] = p->s_ttl;
}

void stamp_encode_reflected(uint8_t *out, bool auth, const struct txs_stamp_pkt *p)
{
	encode_reflected(out, auth, p);
}

/* ---- the reflector's answer ------------------------------------------------------- */

/* The HMAC TLV of a sender's authenticated packet, checked before anything
 * is answered in place: true when there is none or it is right. */
static bool tlv_hmac_ok(const struct txs_stamp_key *k, const uint8_t *in, size_t len)
{
	size_t off = TXS_STAMP_AUTH_LEN;
	while (off + 4 <= len) {
		size_t vlen = txs_get_be16(in + off + 2);
		if ((!in[off] && !in[off + 1] && !vlen) || vlen > len - off - 4)
			return true;
		if (in[off + 1] == TXS_STAMP_TLV_HMAC && vlen == TXS_STAMP_HMAC_LEN && off + 4 + vlen == len) {
			uint8_t mac[TXS_STAMP_HMAC_LEN];
			stamp_hmac(k, in, 4, in + TXS_STAMP_AUTH_LEN, off - TXS_STAMP_AUTH_LEN, mac);
			return sodium_memcmp(mac, in + off + 4, TXS_STAMP_HMAC_LEN) == 0;
		}
		off += 4 + vlen;
	}
	return true;
}

/* TLVs of in (from off) into out at the same offsets, answered: RFC 8972
 * section 4 (out may be in: each TLV's fields are read before written).
 * Processing stops at the first malformed TLV (M set, the rest returned as
 * it came) and at all-zero padding (a TWAMP-light sender's). */
static void reflect_tlvs(const struct txs_stamp_refl_conf *c, const struct txs_stamp_sess_ctr *ctr, const uint8_t *in,
			 size_t len, size_t off, const struct txs_stamp_rx_meta *m, uint8_t *out, int *reply_tos,
			 struct txs_stamp_refl_pkt_stats *st)
{
	bool auth = c->key.len > 0;
	bool hmac_good = !auth || tlv_hmac_ok(&c->key, in, len);
	if (out != in)
		memcpy(out + off, in + off, len - off);
	while (off + 4 <= len) {
		uint8_t type = out[off + 1];
		size_t vlen = txs_get_be16(out + off + 2);
		if (out[off] == 0 && type == 0 && vlen == 0) /* zero padding, not TLVs */
			break;
		uint8_t *t = out + off;
		uint8_t *v = t + 4;
		if (vlen > len - off - 4) {
			t[0] |= TXS_STAMP_TLV_M;
			st->tlv_malformed++;
			break;
		}
		/* flags the sender set are not ours to echo: the reflector's flags */
		t[0] = (uint8_t)(t[0] & ~(TXS_STAMP_TLV_U | TXS_STAMP_TLV_M | TXS_STAMP_TLV_I));
		switch (type) {
		case TXS_STAMP_TLV_PADDING:
			break; /* returned as it came */
		case TXS_STAMP_TLV_TSINFO:
			if (vlen < 4)
				goto malformed;
			v[0] = c->sync_known ? 1 : 0; /* sync source in: NTP, or none known (0) */
			v[1] = 2;                     /* software local: the kernel's receive stamp, or our clock read */
			v[2] = v[0];                  /* out: the same clock */
			v[3] = 2;                     /* software local: T3 read just before sending */
			break;
		case TXS_STAMP_TLV_COS:
			if (vlen < 4)
				goto malformed;
			{
				int tos = m->tos < 0 ? 0 : m->tos;
				uint8_t dscp1 = (uint8_t)(v[0] >> 2), rp = (uint8_t)(v[1] & 3);
				/* DSCP1(6) DSCP2(6) ECN(2) RP(2): DSCP2 and ECN as received */
				v[0] = (uint8_t)(dscp1 << 2 | ((tos >> 2) & 0x3f) >> 4);
				v[1] = (uint8_t)((((tos >> 2) & 0xf) << 4) | (tos & 3) << 2 | rp);
				*reply_tos = dscp1 << 2;
			}
			break;
		case TXS_STAMP_TLV_DIRECT:
			if (vlen < 12)
				goto malformed;
			/* S_TxC as sent; R_RxC and R_TxC: this session's counts (stateless: 0) */
			txs_put_be32(v + 4, ctr ? ctr->rx : 0);
			txs_put_be32(v + 8, ctr ? ctr->tx + 1 : 0);
			break;
		case TXS_STAMP_TLV_HMAC:
			if (!auth)
				goto unknown;
			if (vlen != TXS_STAMP_HMAC_LEN || off + 4 + vlen != len)
				goto malformed;
			/* the sender's covers its Sequence Number and the TLVs before it (checked
			 * before any was changed); ours is written by the caller's last step */
			if (!hmac_good) {
				t[0] |= TXS_STAMP_TLV_I;
				st->tlv_bad_hmac++;
			}
			break;
		default:
		unknown:
			t[0] |= TXS_STAMP_TLV_U;
			st->tlv_unknown++;
			break;
		}
		off += 4 + vlen;
		continue;
	malformed:
		t[0] |= TXS_STAMP_TLV_M;
		st->tlv_malformed++;
		break;
	}
}

int txs_stamp_reflect(const struct txs_stamp_refl_conf *c, struct txs_stamp_sess_ctr *ctr, const uint8_t *in,
		      size_t in_len, const struct txs_stamp_rx_meta *m, uint64_t t3_ns, uint8_t *out, size_t cap,
		      int *reply_tos, struct txs_stamp_refl_pkt_stats *st)
{
	bool auth = c->key.len > 0;
	size_t base = auth ? TXS_STAMP_AUTH_LEN : TXS_STAMP_BASE_LEN;
	if (!auth && in_len == TXS_STAMP_BASE_LEN && out == in) {
		/* the common packet (unauthenticated, no TLV) answered in place:
		 * the same bytes as decoding and encoding it below, without the
		 * structs. The sender's fields move to where the reply echoes
		 * them (0-13 -> 24-37; its SSID stays at 14), then ours. */
		*reply_tos = m->tos >= 0 ? (m->tos & ~3) : -1;
		memcpy(out + 24, in, 14);
		out[38] = out[39] = 0;
		out[40] = m->ttl < 0 ? 0 : (uint8_t)(m->ttl > 255 ? 255 : m->ttl);
		out[41] = out[42] = out[43] = 0;
		txs_put_be32(out, ctr ? ctr->seq : txs_get_be32(out + 24));
		txs_put_be64(out + 4, txs_stamp_ntp_from_ns(t3_ns));
		txs_put_be16(out + 12, c->err_est);
		txs_put_be64(out + 16, txs_stamp_ntp_from_ns(m->t2_ns));
		if (ctr) {
			ctr->rx++;
			ctr->seq++;
			ctr->tx++;
		}
		return (int)in_len;
	}
	struct txs_stamp_pkt s, r;
	int rc = txs_stamp_decode_sender(in, in_len, &c->key, &s);
	if (rc)
		return rc;
	if (cap < in_len)
		return -ENOBUFS;
	*reply_tos = m->tos >= 0 ? (m->tos & ~3) : -1; /* the DSCP received, as routers reflect it */
	memset(&r, 0, sizeof(r));
	r.seq = ctr ? ctr->seq : s.seq;
	r.err = c->err_est;
	r.ssid = s.ssid;
	r.rx_ts = txs_stamp_ntp_from_ns(m->t2_ns);
	r.s_seq = s.seq;
	r.s_ts = s.ts;
	r.s_err = s.err;
	r.s_ttl = m->ttl < 0 ? 0 : (uint8_t)(m->ttl > 255 ? 255 : m->ttl);
	r.ts = txs_stamp_ntp_from_ns(t3_ns);
	if (ctr)
		ctr->rx++;
	if (in_len > base)
		reflect_tlvs(c, ctr, in, in_len, base, m, out, reply_tos, st);
	encode_reflected(out, auth, &r);
	if (auth) {
		stamp_hmac(&c->key, out, TXS_STAMP_AUTH_COVER, NULL, 0, out + TXS_STAMP_AUTH_COVER);
		stamp_tlv_hmac_fill(&c->key, out, in_len);
	}
	if (ctr) {
		ctr->seq++;
		ctr->tx++;
	}
	return (int)in_len;
}

/* The HMAC TLV of an authenticated packet of len octets (when its last TLV
 * is one): over its Sequence Number and the TLVs before it. */
void stamp_tlv_hmac_fill(const struct txs_stamp_key *k, uint8_t *buf, size_t len)
{
	size_t off = TXS_STAMP_AUTH_LEN;
	while (off + 4 <= len) {
		size_t vlen = txs_get_be16(buf + off + 2);
		if ((buf[off] == 0 && buf[off + 1] == 0 && vlen == 0) || vlen > len - off - 4)
			return;
		if (buf[off + 1] == TXS_STAMP_TLV_HMAC && vlen == TXS_STAMP_HMAC_LEN && off + 4 + vlen == len) {
			if (buf[off] & TXS_STAMP_TLV_I)
				return; /* the sender's was wrong: said, not covered up */
			stamp_hmac(k, buf, 4, buf + TXS_STAMP_AUTH_LEN, off - TXS_STAMP_AUTH_LEN, buf + off + 4);
			return;
		}
		off += 4 + vlen;
	}
}
