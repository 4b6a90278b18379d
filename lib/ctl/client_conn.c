/* SPDX-License-Identifier: MIT */
/* The client's connection to a server's control port (txscale/ctl_session.h):
 * connect within a timeout, greet with the shared secret of an auth file,
 * and the probe that tells a txscale server from an iperf3 server on one
 * connection. */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/ctl_session.h>
#include <txscale/iperf3.h>
#include "common/err.h"
#include "pkt/sockaddr.h"
#include "ctl_priv.h"
#include "sess_priv.h"

static int connect_addr(const struct txs_addr *a, const struct txs_addr *from, const char *from_s, uint16_t port,
			double timeout, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = txs_sockaddr_set(&ss, a->family, a, port);
	int fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return txs_fail(err, errlen, -errno, "socket: %s", strerror(errno));
	if (from) {
		/* -B: the control connection leaves from it too, as iperf3's -B */
		struct sockaddr_storage bs;
		socklen_t bl = txs_sockaddr_set(&bs, from->family, from, 0);
		if (bind(fd, (struct sockaddr *)&bs, bl) < 0) {
			int e = errno;
			close(fd);
			return txs_fail(err, errlen, e == EADDRNOTAVAIL ? -EINVAL : -e,
					"cannot bind the control connection to -B %s: %s", from_s, strerror(e));
		}
	}
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return txs_fail(err, errlen, -e, "cannot connect to the control port %u: %s", port, strerror(e));
	}
	struct pollfd pf = { .fd = fd, .events = POLLOUT };
	int r;
	do
		r = poll(&pf, 1, txs_ctl_ms(timeout));
	while (r < 0 && errno == EINTR);
	if (r == 0) {
		close(fd);
		return txs_fail(err, errlen, -ETIMEDOUT, "no answer on the control port %u within %.1f s", port, timeout);
	}
	int soerr = 0;
	socklen_t el = sizeof(soerr);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
	if (r < 0 || soerr) {
		int e = r < 0 ? errno : soerr;
		close(fd);
		return txs_fail(err, errlen, -e, "cannot connect to the control port %u: %s%s", port, strerror(e),
				e == ECONNREFUSED ? " (is `txscale server` running there?)" : "");
	}
	txs_ctl_nodelay(fd);
	return fd;
}

TXS_API int txs_ctl_connect(const char *host, const char *bind, uint16_t port, double timeout, char *err,
			    size_t errlen)
{
	struct txs_addr a, b;
	if (txs_addr_parse(&a, host) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad server address '%s'", host);
	if (bind) {
		if (txs_addr_parse(&b, bind) < 0)
			return txs_fail(err, errlen, -EINVAL, "bad -B address '%s'", bind);
		if (b.family != a.family)
			return txs_fail(err, errlen, -EINVAL, "-B %s is IPv%d, the server %s IPv%d", bind,
					b.family == AF_INET ? 4 : 6, host, a.family == AF_INET ? 4 : 6);
	}
	return connect_addr(&a, bind ? &b : NULL, bind, port, timeout, err, errlen);
}

/* The greeting on a connected socket, with the key of auth_file (fd closed on failure). */
static struct txs_ctl_client *greet(int fd, const char *host, const char *auth_file, double timeout, int *why,
				    char *err, size_t errlen)
{
	uint8_t key[TXS_CTL_KEY_LEN];
	if (auth_file) {
		int rc = txs_ctl_key_load(key, auth_file);
		if (rc < 0) {
			txs_fail(err, errlen, rc, "--auth-file '%s': %s", auth_file, txs_ctl_key_why(rc));
			close(fd);
			*why = -EINVAL;
			return NULL;
		}
	}
	return txs_ctl_client_greet(fd, host, auth_file ? key : NULL, timeout, why, err, errlen);
}

TXS_API struct txs_ctl_client *txs_ctl_client_open(const char *host, const char *bind, uint16_t port,
						   const char *auth_file, double timeout, int *whyp, char *err,
						   size_t errlen)
{
	int dummy, *why = whyp ? whyp : &dummy;
	int fd = txs_ctl_connect(host, bind, port, timeout, err, errlen);
	if (fd < 0) {
		*why = fd;
		return NULL;
	}
	return greet(fd, host, auth_file, timeout, why, err, errlen);
}

/* On a fresh connection to a control port: 1 when the server stays silent
 * for secs (an iperf3 server waiting for the client's cookie), -1 when it
 * says iperf3's ACCESS_DENIED (busy), 0 when it speaks otherwise (a txscale
 * greeting, or the close). Reads nothing. */
static int iperf3_probe(int fd, double secs)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int r;
	do
		r = poll(&pf, 1, txs_ctl_ms(secs));
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 1;
	uint8_t b;
	if (recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && (int8_t)b == TXS_IP3_ACCESS_DENIED)
		return -1;
	return 0;
}

TXS_API int txs_ctl_client_probe(const char *host, const char *bind, uint16_t port, const char *auth_file,
				 double timeout, struct txs_ctl_client **c, int *ip3_fd, char *err, size_t errlen)
{
	*c = NULL;
	*ip3_fd = -1;
	int fd = txs_ctl_connect(host, bind, port, TXS_CTL_PROBE_S, err, errlen);
	if (fd == -EINVAL)
		return fd; /* the addresses given: err says which */
	if (fd < 0)
		return txs_fail(err, errlen, fd,
				"no txscale or iperf3 server at %s port %u (--control-port: the server's port, iperf3's "
				"-p; send's -p is the data port); to send without a server, give DEST without -c, or --dev udp",
				host, port);
	switch (iperf3_probe(fd, TXS_CTL_PROBE_S)) {
	case 1:
		*ip3_fd = fd;
		return 1;
	case -1:
		close(fd);
		return txs_fail(err, errlen, -EBUSY, "the iperf3 server at %s port %u is busy running a test", host,
				port);
	default: {
		int why = 0;
		*c = greet(fd, host, auth_file, timeout, &why, err, errlen);
		return *c ? 0 : why;
	}
	}
}
