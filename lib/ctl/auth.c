/* SPDX-License-Identifier: MIT */
/* The shared secret (libsodium) and the server's destination allow-list. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "common/err.h"
#include <txscale/ctl.h>

#define SECRET_MAX 4096
static const char mac_label[] = "txscale-ctl-1 auth";


static int init(void)
{
	return sodium_init() < 0 ? -EIO : 0;
}

TXS_API const char *txs_ctl_key_why(int rc)
{
	return rc == -EINVAL ? "the file is empty" : rc == -EFBIG ? "over 4096 bytes" : strerror(-rc);
}

TXS_API int txs_ctl_key_load(uint8_t key[TXS_CTL_KEY_LEN], const char *path)
{
	int rc = init();
	if (rc < 0)
		return rc;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	unsigned char buf[SECRET_MAX + 1];
	size_t n = fread(buf, 1, sizeof(buf), f);
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return -EIO;
	if (n > SECRET_MAX) {
		sodium_memzero(buf, sizeof(buf));
		return -EFBIG;
	}
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (!n)
		return -EINVAL;
	crypto_generichash(key, TXS_CTL_KEY_LEN, buf, n, NULL, 0);
	sodium_memzero(buf, sizeof(buf));
	return 0;
}

TXS_API int txs_ctl_nonce(uint8_t nonce[TXS_CTL_NONCE_LEN])
{
	int rc = init();
	if (rc < 0)
		return rc;
	randombytes_buf(nonce, TXS_CTL_NONCE_LEN);
	return 0;
}

static void mac_input(uint8_t *in, const uint8_t nonce[TXS_CTL_NONCE_LEN])
{
	memcpy(in, mac_label, sizeof(mac_label) - 1);
	memcpy(in + sizeof(mac_label) - 1, nonce, TXS_CTL_NONCE_LEN);
}

TXS_API int txs_ctl_mac(uint8_t mac[TXS_CTL_MAC_LEN], const uint8_t nonce[TXS_CTL_NONCE_LEN],
			const uint8_t key[TXS_CTL_KEY_LEN])
{
	_Static_assert(crypto_auth_BYTES == TXS_CTL_MAC_LEN, "mac size");
	_Static_assert(crypto_auth_KEYBYTES == TXS_CTL_KEY_LEN, "key size");
	int rc = init();
	if (rc < 0)
		return rc;
	uint8_t in[sizeof(mac_label) - 1 + TXS_CTL_NONCE_LEN];
	mac_input(in, nonce);
	crypto_auth(mac, in, sizeof(in), key);
	return 0;
}

TXS_API bool txs_ctl_mac_ok(const uint8_t mac[TXS_CTL_MAC_LEN], const uint8_t nonce[TXS_CTL_NONCE_LEN],
			    const uint8_t key[TXS_CTL_KEY_LEN])
{
	if (init() < 0)
		return false;
	uint8_t in[sizeof(mac_label) - 1 + TXS_CTL_NONCE_LEN];
	mac_input(in, nonce);
	return crypto_auth_verify(mac, in, sizeof(in), key) == 0;
}

/* ---- allow-list ------------------------------------------------------------------------------------ */

/* IPv4-mapped IPv6 (::ffff:a.b.c.d) -> IPv4 */
static struct txs_addr unmap(const struct txs_addr *a)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct txs_addr r = *a;
	if (a->family == AF_INET6 && memcmp(a->bytes, pfx, 12) == 0) {
		memset(&r, 0, sizeof(r));
		r.family = AF_INET;
		memcpy(r.bytes, a->bytes + 12, 4);
	}
	return r;
}

static bool in_net(const struct txs_addr *a, const struct txs_addr *net, unsigned prefix)
{
	if (a->family != net->family)
		return false;
	unsigned full = prefix / 8, rest = prefix % 8;
	if (memcmp(a->bytes, net->bytes, full) != 0)
		return false;
	if (!rest)
		return true;
	uint8_t m = (uint8_t)(0xff << (8 - rest));
	return (a->bytes[full] & m) == (net->bytes[full] & m);
}

TXS_API int txs_ctl_allow_parse(struct txs_ctl_allow *a, const char *list, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	const char *p = list;
	if (!p || !*p)
		return txs_fail(err, errlen, -EINVAL, "empty list: expected ADDR[/PREFIX][,...]");
	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char item[80];
		if (n == 0 || n >= sizeof(item))
			return txs_fail(err, errlen, -EINVAL, "bad entry '%.*s': expected ADDR[/PREFIX]", (int)(n < 79 ? n : 79), p);
		memcpy(item, p, n);
		item[n] = 0;
		if (a->n >= TXS_CTL_ALLOW_MAX)
			return txs_fail(err, errlen, -E2BIG, "more than %d entries", TXS_CTL_ALLOW_MAX);
		char *slash = strchr(item, '/');
		unsigned prefix = 0;
		if (slash) {
			*slash = 0;
			char *e;
			const char *ps = slash + 1;
			if (*ps < '0' || *ps > '9')
				return txs_fail(err, errlen, -EINVAL, "bad prefix in '%.*s'", (int)n, p);
			unsigned long v = strtoul(ps, &e, 10);
			if (*e || v > 128)
				return txs_fail(err, errlen, -EINVAL, "bad prefix in '%.*s'", (int)n, p);
			prefix = (unsigned)v;
		}
		struct txs_addr ad;
		if (txs_addr_parse(&ad, item) < 0)
			return txs_fail(err, errlen, -EINVAL, "bad address in '%.*s': expected an IPv4 or IPv6 address",
				    (int)n, p);
		ad = unmap(&ad);
		unsigned max = ad.family == AF_INET ? 32 : 128;
		if (!slash)
			prefix = max;
		if (prefix > max)
			return txs_fail(err, errlen, -EINVAL, "bad prefix in '%.*s': at most /%u", (int)n, p, max);
		a->e[a->n].net = ad;
		a->e[a->n].prefix = prefix;
		a->n++;
		if (!end)
			return 0;
		p = end + 1;
	}
}

TXS_API bool txs_ctl_allowed(const struct txs_ctl_allow *a, const struct txs_addr *client,
			     const struct txs_addr *dest)
{
	struct txs_addr d = unmap(dest), c = unmap(client);
	if (d.family == c.family && memcmp(d.bytes, c.bytes, d.family == AF_INET ? 4 : 16) == 0)
		return true;
	for (unsigned i = 0; a && i < a->n; i++)
		if (in_net(&d, &a->e[i].net, a->e[i].prefix))
			return true;
	return false;
}
