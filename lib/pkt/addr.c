/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <txscale/pkt.h>

TXS_API int txs_addr_parse(struct txs_addr *a, const char *s)
{
	if (!s || !*s)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->v4) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a->v6) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

TXS_API const char *txs_addr_str(const struct txs_addr *a, char *buf, size_t len)
{
	if (!inet_ntop(a->family, a->bytes, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

TXS_API int txs_mac_parse(uint8_t mac[TXS_ETH_ALEN], const char *s)
{
	unsigned v[6];
	char tail;
	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}
