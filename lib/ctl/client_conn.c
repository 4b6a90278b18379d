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

/* The opener (TXS_CTL_OPENER) on a fresh connection: 0 or -errno. */
static int opener_send(int fd, double timeout)
{
	char ck[TXS_IP3_COOKIE_LEN];
	int rc = txs_ip3_cookie_make(ck);
	if (rc)
		return rc;
	memcpy(ck, TXS_CTL_OPENER, TXS_CTL_OPENER_LEN);
	return txs_ip3_write_full(fd, ck, sizeof(ck), txs_ctl_ms(timeout));
}

/* The first byte the server answers our opener with, not read: 1 with *b;
 * 0 when it closed; -ETIMEDOUT; -errno. */
static int first_byte(int fd, double timeout, uint8_t *b)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int r;
	do
		r = poll(&pf, 1, txs_ctl_ms(timeout));
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	ssize_t n = recv(fd, b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n < 0 ? -errno : (int)n;
}

/* The key of auth_file (NULL: none, 0), before anything is sent: 0, or -EINVAL with err. */
static int key_get(const char *auth_file, uint8_t key[TXS_CTL_KEY_LEN], char *err, size_t errlen)
{
	int rc = auth_file ? txs_ctl_key_load(key, auth_file) : 0;
	if (rc < 0)
		return txs_fail(err, errlen, -EINVAL, "--auth-file '%s': %s", auth_file, txs_ctl_key_why(rc));
	return 0;
}

/* Open with our opener and wait for the answer's first byte: 0 (txscale's
 * "TXSC" comes), 1 (an iperf3 state byte: *st), or -errno with err. */
static int open_and_tell(int fd, const char *host, uint16_t port, double timeout, int8_t *st, char *err,
			 size_t errlen)
{
	int rc = opener_send(fd, timeout);
	uint8_t b = 0;
	if (rc == 0)
		rc = first_byte(fd, timeout, &b);
	if (rc == 1 && b == (uint8_t)TXS_CTL_MAGIC[0])
		return 0;
	/* what an iperf3 server answers a cookie with: the parameters' turn, busy, or its error */
	if (rc == 1 && ((int8_t)b == TXS_IP3_PARAM_EXCHANGE || (int8_t)b == TXS_IP3_ACCESS_DENIED ||
			(int8_t)b == TXS_IP3_SERVER_ERROR)) {
		*st = (int8_t)b;
		return 1;
	}
	if (rc == 1)
		return txs_fail(err, errlen, -EPROTO, "neither a txscale nor an iperf3 server answers at %s port %u "
				"(its first byte is 0x%02x)", host, port, b);
	/* closed: before our opener was read (0), or after, unread (a reset) */
	if (rc == 0 || rc == -ECONNRESET || rc == -EPIPE)
		return txs_fail(err, errlen, -ECONNRESET, "the server at %s port %u closed the connection unanswered: "
				"neither a txscale nor an iperf3 server, or one that refuses this client", host, port);
	if (rc == -ETIMEDOUT)
		return txs_fail(err, errlen, rc, "the server at %s port %u accepted the connection and said nothing "
				"within %.1f s (--ctl-timeout)", host, port, timeout);
	return txs_fail(err, errlen, rc, "the control connection to %s port %u: %s", host, port, strerror(-rc));
}

TXS_API struct txs_ctl_client *txs_ctl_client_open(const char *host, const char *bind, uint16_t port,
						   const char *auth_file, double timeout, int *whyp, char *err,
						   size_t errlen)
{
	int dummy, *why = whyp ? whyp : &dummy;
	uint8_t key[TXS_CTL_KEY_LEN];
	if ((*why = key_get(auth_file, key, err, errlen)))
		return NULL;
	int fd = txs_ctl_connect(host, bind, port, timeout, err, errlen);
	if (fd < 0) {
		*why = fd;
		return NULL;
	}
	int8_t st = 0;
	int rc = open_and_tell(fd, host, port, timeout, &st, err, errlen);
	if (rc)
		close(fd);
	if (rc == 1) {
		*why = -EPROTO;
		txs_fail(err, errlen, -EPROTO, "an iperf3 server answers at %s port %u, not a txscale one (without "
			 "--server, send -c talks to either)", host, port);
		return NULL;
	}
	if (rc < 0) {
		*why = rc;
		return NULL;
	}
	return txs_ctl_client_greet(fd, host, auth_file ? key : NULL, timeout, why, err, errlen);
}

TXS_API int txs_ctl_client_probe(const char *host, const char *bind, uint16_t port, const char *auth_file,
				 double timeout, struct txs_ctl_client **c, int *ip3_fd, char *err, size_t errlen)
{
	*c = NULL;
	*ip3_fd = -1;
	uint8_t key[TXS_CTL_KEY_LEN];
	int kr = key_get(auth_file, key, err, errlen);
	if (kr)
		return kr;
	int fd = txs_ctl_connect(host, bind, port, timeout, err, errlen);
	if (fd == -EINVAL)
		return fd; /* the addresses given: err says which */
	if (fd == -ETIMEDOUT)
		return txs_fail(err, errlen, fd, "no answer to the connection to %s port %u within %.1f s (--ctl-timeout: "
				"no route there, a firewall that drops it, or nothing at that address)", host, port, timeout);
	if (fd < 0)
		return txs_fail(err, errlen, fd,
				"no txscale or iperf3 server at %s port %u (--control-port: the server's port, iperf3's "
				"-p; send's -p is the data port); to send without a server, give DEST without -c, or --dev udp",
				host, port);
	/* our opener is a cookie to an iperf3 server: it answers with a state byte, a txscale server with "TXSC" */
	int8_t st = 0;
	int rc = open_and_tell(fd, host, port, timeout, &st, err, errlen);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	if (rc == 1) {
		if (st == TXS_IP3_ACCESS_DENIED) {
			close(fd);
			return txs_fail(err, errlen, -EBUSY, "the iperf3 server at %s port %u is busy running a test",
					host, port);
		}
		*ip3_fd = fd;
		return 1;
	}
	int why = 0;
	*c = txs_ctl_client_greet(fd, host, auth_file ? key : NULL, timeout, &why, err, errlen);
	return *c ? 0 : why;
}
