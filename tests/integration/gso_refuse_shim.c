/* SPDX-License-Identifier: MIT */
/* LD_PRELOAD shim for tests/integration/udp_gso.sh: a route that refuses UDP
 * GSO, as the kernel refuses it where it cannot segment (udp_send_skb():
 * EIO through an xfrm route or for UDP-Lite, EINVAL without checksums).
 * sendmmsg()/sendmsg() pass every message until the first one carrying a
 * UDP_SEGMENT control message; that one is refused as the kernel refuses it:
 * sendmmsg returns the messages sent before it, or -1 with errno
 * TXS_SHIM_GSO_ERRNO (default EIO) when it is the first. The first
 * TXS_SHIM_GSO_AFTER (default 0) GSO messages of the process pass, so a
 * refusal can come in the middle of a run. Nothing else changes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#define UDP_SEGMENT 103

static long gso_passed;

static int refuse_errno(void)
{
	const char *e = getenv("TXS_SHIM_GSO_ERRNO");
	return e ? atoi(e) : EIO;
}

static int is_gso(const struct msghdr *m)
{
	if (!m->msg_control)
		return 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *)m, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_SEGMENT)
			return 1;
	return 0;
}

/* this GSO message passes (the first TXS_SHIM_GSO_AFTER do) */
static int passes(void)
{
	const char *a = getenv("TXS_SHIM_GSO_AFTER");
	long after = a ? atol(a) : 0;
	if (__atomic_add_fetch(&gso_passed, 1, __ATOMIC_RELAXED) <= after)
		return 1;
	__atomic_sub_fetch(&gso_passed, 1, __ATOMIC_RELAXED);
	return 0;
}

__attribute__((visibility("default"))) int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	static int (*real)(int, struct mmsghdr *, unsigned int, int);
	if (!real)
		real = (int (*)(int, struct mmsghdr *, unsigned int, int))dlsym(RTLD_NEXT, "sendmmsg");
	unsigned k = 0;
	while (k < n && !(is_gso(&v[k].msg_hdr) && !passes()))
		k++;
	if (k == 0 && n > 0) {
		errno = refuse_errno();
		return -1;
	}
	return real(fd, v, k, flags);
}

__attribute__((visibility("default"))) ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);
	if (!real)
		real = (ssize_t (*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	if (is_gso(m) && !passes()) {
		errno = refuse_errno();
		return -1;
	}
	return real(fd, m, flags);
}
