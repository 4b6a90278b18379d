/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "netdev_priv.h"

int txs_netdev_parse_args(struct txs_netdev *dev, const char *args,
			  int (*fn)(struct txs_netdev *dev, const char *key, const char *val, void *arg), void *arg)
{
	char buf[256];
	if (strlen(args) >= sizeof(buf)) {
		txs_netdev_set_err(dev, "device arguments too long");
		return -EINVAL;
	}
	strcpy(buf, args);
	char *save = NULL;
	const char *seen[64];
	unsigned n_seen = 0;
	for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (eq)
			*eq = 0;
		/* each key once: "links=2,links=3" would otherwise mean whichever came last */
		for (unsigned i = 0; i < n_seen; i++)
			if (strcmp(seen[i], item) == 0) {
				txs_netdev_set_err(dev, "'%s' given twice in '%s'", item, args);
				return -EINVAL;
			}
		if (n_seen < TXS_ARRAY_SIZE(seen))
			seen[n_seen++] = item;
		int rc = fn(dev, item, eq ? eq + 1 : NULL, arg);
		if (rc)
			return rc;
	}
	return 0;
}

int txs_netdev_arg_pow2(struct txs_netdev *dev, const char *key, const char *val, unsigned lo, unsigned hi,
			unsigned *out)
{
	char *end;
	unsigned long n = strtoul(val, &end, 10);
	if (!*val || *end || n < lo || n > hi || (n & (n - 1))) {
		txs_netdev_set_err(dev, "%s=%s: expected a power of two in %u..%u", key, val, lo, hi);
		return -EINVAL;
	}
	*out = (unsigned)n;
	return 0;
}

int txs_netdev_arg_mtu(struct txs_netdev *dev, const char *val)
{
	char *end;
	unsigned long n = val ? strtoul(val, &end, 10) : 0;
	if (!val || !*val || *end || n < TXS_NETDEV_MTU_MIN || n > TXS_NETDEV_MTU_MAX) {
		txs_netdev_set_err(dev, "mtu=%s: expected %u..%u", val ? val : "", TXS_NETDEV_MTU_MIN,
				   TXS_NETDEV_MTU_MAX);
		return -EINVAL;
	}
	dev->mtu = (uint32_t)n;
	return 0;
}

bool txs_netdev_arg_flag(const struct txs_netdev_flag *t, size_t n, const char *key, const char *val, void *state)
{
	for (size_t i = 0; i < n && !val; i++) {
		if (strcmp(key, t[i].key) != 0)
			continue;
		char *p = (char *)state + t[i].off;
		if (t[i].size == sizeof(int)) {
			int v = t[i].v;
			memcpy(p, &v, sizeof(v));
		} else {
			bool b = t[i].v != 0;
			memcpy(p, &b, sizeof(b));
		}
		return true;
	}
	return false;
}
