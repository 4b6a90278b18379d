/* SPDX-License-Identifier: MIT */
/* A make-believe NIC with a PTP hardware clock, for
 * tests/integration/recv_rxts_shim.sh (LD_PRELOAD into txscale recv): no
 * machine here has a NIC that stamps packets in hardware, so the code that
 * switches the stamping on, restores it, and takes the stamps would never
 * run. This interposes
 *   ioctl(SIOCETHTOOL ETHTOOL_GET_TS_INFO / SIOCGHWTSTAMP / SIOCSHWTSTAMP)
 *     for the interface $TXS_SHIM_IF: a driver that offers hardware receive
 *     stamps (rx filters $TXS_SHIM_RX_FILTERS, default NONE|ALL|PTP_V2_EVENT,
 *     PHC index 3), a receive filter starting at $TXS_SHIM_INIT_FILTER
 *     (default NONE); $TXS_SHIM_EPERM=1: SIOCSHWTSTAMP is refused (no
 *     CAP_NET_ADMIN); $TXS_SHIM_SET_ERR=N: SIOCSHWTSTAMP fails with errno N;
 *     $TXS_SHIM_NO_ETHTOOL=1: no ETHTOOL_GET_TS_INFO (EOPNOTSUPP);
 *     $TXS_SHIM_NO_GET=1: no SIOCGHWTSTAMP (EOPNOTSUPP).
 *     Each call is appended as one line to $TXS_SHIM_LOG.
 *   recvmmsg: while the filter is HWTSTAMP_FILTER_ALL, every datagram that
 *     carries SCM_TIMESTAMPING with a software stamp (ts[0]) gets the
 *     "hardware" stamp ts[2] = ts[0] + $TXS_SHIM_HW_OFFSET_NS (as the NIC
 *     would stamp it some time before the stack; a PHC off CLOCK_REALTIME:
 *     a large offset). Every $TXS_SHIM_EVERY-th datagram only (default 1).
 * Test code, for a test on loopback: not a model of any driver. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>

static struct hwtstamp_config g_cfg;
static int g_init;
static unsigned long long g_count;

static long env_num(const char *name, long dflt)
{
	const char *v = getenv(name);
	return v && *v ? strtol(v, NULL, 0) : dflt;
}

static void init(void)
{
	if (__atomic_exchange_n(&g_init, 1, __ATOMIC_ACQ_REL))
		return;
	g_cfg.rx_filter = (int)env_num("TXS_SHIM_INIT_FILTER", HWTSTAMP_FILTER_NONE);
	g_cfg.tx_type = (int)env_num("TXS_SHIM_INIT_TX", HWTSTAMP_TX_OFF);
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	const char *p = getenv("TXS_SHIM_LOG");
	if (!p)
		return;
	FILE *f = fopen(p, "a");
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

#define SHIM_API __attribute__((visibility("default")))

SHIM_API int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	static int (*real)(int, unsigned long, ...);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	const char *ifn = getenv("TXS_SHIM_IF");
	struct ifreq *ifr = arg;
	if (!ifn || (req != SIOCETHTOOL && req != SIOCGHWTSTAMP && req != SIOCSHWTSTAMP) ||
	    strncmp(ifr->ifr_name, ifn, IFNAMSIZ) != 0)
		return real(fd, req, arg);
	init();
	if (req == SIOCETHTOOL) {
		struct ethtool_ts_info *ti = (struct ethtool_ts_info *)ifr->ifr_data;
		if (ti->cmd != ETHTOOL_GET_TS_INFO)
			return real(fd, req, arg);
		logf_("ethtool_ts_info");
		if (env_num("TXS_SHIM_NO_ETHTOOL", 0)) {
			errno = EOPNOTSUPP;
			return -1;
		}
		ti->so_timestamping = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
				      SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_TX_HARDWARE |
				      SOF_TIMESTAMPING_RAW_HARDWARE;
		ti->phc_index = 3;
		ti->tx_types = 1u << HWTSTAMP_TX_OFF | 1u << HWTSTAMP_TX_ON;
		ti->rx_filters = (uint32_t)env_num("TXS_SHIM_RX_FILTERS", 1u << HWTSTAMP_FILTER_NONE |
									       1u << HWTSTAMP_FILTER_ALL |
									       1u << HWTSTAMP_FILTER_PTP_V2_EVENT);
		return 0;
	}
	struct hwtstamp_config *c = (struct hwtstamp_config *)ifr->ifr_data;
	if (req == SIOCGHWTSTAMP) {
		logf_("get rx_filter=%d tx_type=%d", g_cfg.rx_filter, g_cfg.tx_type);
		if (env_num("TXS_SHIM_NO_GET", 0)) {
			errno = EOPNOTSUPP;
			return -1;
		}
		*c = g_cfg;
		return 0;
	}
	logf_("set rx_filter=%d tx_type=%d", c->rx_filter, c->tx_type);
	if (env_num("TXS_SHIM_EPERM", 0)) {
		errno = EPERM;
		return -1;
	}
	long e = env_num("TXS_SHIM_SET_ERR", 0);
	if (e) {
		errno = (int)e;
		return -1;
	}
	long answer = env_num("TXS_SHIM_SET_ANSWER", -1); /* the filter the "driver" applies */
	if (answer >= 0)
		c->rx_filter = (int)answer;
	__atomic_store_n(&g_cfg.rx_filter, c->rx_filter, __ATOMIC_RELAXED);
	__atomic_store_n(&g_cfg.tx_type, c->tx_type, __ATOMIC_RELAXED);
	return 0;
}

SHIM_API int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *tmo)
{
	static int (*real)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
	if (!real)
		real = (int (*)(int, struct mmsghdr *, unsigned int, int, struct timespec *))dlsym(RTLD_NEXT,
												  "recvmmsg");
	int got = real(fd, v, n, flags, tmo);
	init();
	if (got <= 0 || __atomic_load_n(&g_cfg.rx_filter, __ATOMIC_RELAXED) != HWTSTAMP_FILTER_ALL)
		return got;
	int64_t off = env_num("TXS_SHIM_HW_OFFSET_NS", -2000);
	long every = env_num("TXS_SHIM_EVERY", 1);
	for (int i = 0; i < got; i++) {
		struct msghdr *h = &v[i].msg_hdr;
		unsigned long long k = __atomic_fetch_add(&g_count, 1, __ATOMIC_RELAXED);
		if (every > 1 && k % (unsigned long long)every)
			continue;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm)) {
			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPING)
				continue;
			struct scm_timestamping st;
			memcpy(&st, CMSG_DATA(cm), sizeof(st));
			if (!st.ts[0].tv_sec && !st.ts[0].tv_nsec)
				continue;
			int64_t ns = (int64_t)st.ts[0].tv_sec * 1000000000ll + st.ts[0].tv_nsec + off;
			st.ts[2].tv_sec = (time_t)(ns / 1000000000ll);
			st.ts[2].tv_nsec = (long)(ns % 1000000000ll);
			memcpy(CMSG_DATA(cm), &st, sizeof(st));
		}
	}
	return got;
}
