/* SPDX-License-Identifier: MIT */
/* AF_XDP pieces shared by the xdp: device and the xdp: receive input. */
#ifdef TXS_HAVE_XDP
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "xsk_util.h"

unsigned txs_if_channels(const char *ifname, bool rx)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ch;
	int rc = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	if (rc < 0)
		return 0;
	return (rx ? ch.rx_count : ch.tx_count) + ch.combined_count;
}

static int quiet_xdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static int quiet_bpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

void txs_xsk_quiet(struct txs_xsk_print *saved)
{
	saved->xdp = libxdp_set_print(quiet_xdp);
	saved->bpf = libbpf_set_print(quiet_bpf);
}

void txs_xsk_loud(const struct txs_xsk_print *saved)
{
	libxdp_set_print(saved->xdp);
	libbpf_set_print(saved->bpf);
}

const char *txs_xsk_hint(int rc, bool zc_forced)
{
	if (rc == -EPERM || rc == -EACCES)
		return " (needs CAP_NET_RAW and CAP_IPC_LOCK or a larger RLIMIT_MEMLOCK: run as root)";
	if (rc == -ENOMEM || rc == -ENOBUFS)
		return " (UMEM pages are locked: raise RLIMIT_MEMLOCK, ulimit -l)";
	if (rc == -EOPNOTSUPP && zc_forced)
		return " (the driver has no AF_XDP zero-copy: drop ',zc')";
	if (rc == -EOPNOTSUPP)
		return " (the driver or kernel cannot do AF_XDP here)";
	if (rc == -EBUSY)
		return " (another AF_XDP socket or XDP program owns this queue)";
	if (rc == -EINVAL)
		return " (queue out of range? see ethtool -l)";
	return "";
}
#endif

void txs_xsk_close(struct xsk_socket *xsk, struct xsk_umem *umem, void *area, size_t area_len)
{
	if (xsk)
		xsk_socket__delete(xsk);
	if (umem)
		xsk_umem__delete(umem);
	if (area)
		munmap(area, area_len);
}
