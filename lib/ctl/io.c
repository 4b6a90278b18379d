/* SPDX-License-Identifier: MIT */
/* Control frames on a stream socket: "TXSC", a big-endian u32 length, one
 * JSON object. One deadline per frame, so a peer that trickles bytes cannot
 * hold a reader longer than its timeout. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <txscale/ctl.h>
#include "ctl_priv.h"

static const uint8_t magic[4] = { 'T', 'X', 'S', 'C' };

int txs_ctl_nodelay(int fd)
{
	int one = 1;
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ? -errno : 0;
}

int64_t txs_ctl_now_ms(void)
{
	return (int64_t)(txs_now_mono_ns() / 1000000);
}

TXS_API int txs_ctl_frame_len(const uint8_t hdr[TXS_CTL_HDR_LEN], size_t max, size_t *len, char *err,
			      size_t errlen)
{
	if (memcmp(hdr, magic, 4) != 0)
		return txs_ctl_fail(err, errlen, -EPROTO, "not a txscale control message (no \"TXSC\" frame header)");
	size_t n = (size_t)hdr[4] << 24 | (size_t)hdr[5] << 16 | (size_t)hdr[6] << 8 | hdr[7];
	if (max > TXS_CTL_MSG_MAX)
		max = TXS_CTL_MSG_MAX;
	if (n == 0)
		return txs_ctl_fail(err, errlen, -EMSGSIZE, "empty control message");
	if (n > max)
		return txs_ctl_fail(err, errlen, -EMSGSIZE, "control message of %zu bytes is over the limit of %zu", n, max);
	*len = n;
	return 0;
}

int txs_ctl_read_full(int fd, uint8_t *b, size_t n, int64_t deadline, size_t *got)
{
	*got = 0;
	while (*got < n) {
		int64_t left = deadline - txs_ctl_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			continue;
		ssize_t k = recv(fd, b + *got, n - *got, MSG_DONTWAIT);
		if (k > 0) {
			*got += (size_t)k;
			continue;
		}
		if (k == 0)
			return -ECONNRESET;
		if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
			continue;
		return -errno;
	}
	return 0;
}

TXS_API int txs_ctl_read(int fd, struct txs_ctl_msg *m, size_t max, int timeout_ms, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (err && errlen)
		err[0] = 0;
	int64_t deadline = txs_ctl_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	uint8_t hdr[TXS_CTL_HDR_LEN];
	size_t got;
	int rc = txs_ctl_read_full(fd, hdr, sizeof(hdr), deadline, &got);
	if (rc == -ETIMEDOUT)
		return got ? txs_ctl_fail(err, errlen, rc, "timed out inside a message header (%zu of 8 bytes) after %.1f s", got,
				  timeout_ms / 1000.0)
			   : txs_ctl_fail(err, errlen, rc, "no message within %.1f s", timeout_ms / 1000.0);
	if (rc == -ECONNRESET)
		return got ? txs_ctl_fail(err, errlen, rc, "truncated message: the peer closed after %zu of 8 header bytes", got)
			   : txs_ctl_fail(err, errlen, rc, "the peer closed the connection");
	if (rc < 0)
		return txs_ctl_fail(err, errlen, rc, "control connection: %s", strerror(-rc));
	if (got >= 4 && memcmp(hdr, magic, 4) != 0)
		return txs_ctl_frame_len(hdr, max, &got, err, errlen);
	size_t n;
	rc = txs_ctl_frame_len(hdr, max, &n, err, errlen);
	if (rc < 0)
		return rc;
	uint8_t *body = malloc(n + 1);
	if (!body)
		return txs_ctl_fail(err, errlen, -ENOMEM, "out of memory for a %zu-byte message", n);
	rc = txs_ctl_read_full(fd, body, n, deadline, &got);
	if (rc == -ETIMEDOUT)
		rc = txs_ctl_fail(err, errlen, rc, "timed out inside a message (%zu of %zu bytes) after %.1f s", got, n,
			  timeout_ms / 1000.0);
	else if (rc == -ECONNRESET)
		rc = txs_ctl_fail(err, errlen, rc, "truncated message: the peer closed after %zu of %zu bytes", got, n);
	else if (rc < 0)
		rc = txs_ctl_fail(err, errlen, rc, "control connection: %s", strerror(-rc));
	else
		rc = txs_ctl_decode(m, (const char *)body, n, err, errlen);
	free(body);
	return rc;
}

TXS_API int txs_ctl_write(int fd, const struct txs_ctl_msg *m, int timeout_ms, char *err, size_t errlen)
{
	char *json;
	size_t n;
	int rc = txs_ctl_encode(m, &json, &n, err, errlen);
	if (rc < 0)
		return rc;
	uint8_t *b = malloc(TXS_CTL_HDR_LEN + n);
	if (!b) {
		free(json);
		return txs_ctl_fail(err, errlen, -ENOMEM, "out of memory");
	}
	memcpy(b, magic, 4);
	b[4] = (uint8_t)(n >> 24);
	b[5] = (uint8_t)(n >> 16);
	b[6] = (uint8_t)(n >> 8);
	b[7] = (uint8_t)n;
	memcpy(b + TXS_CTL_HDR_LEN, json, n);
	free(json);
	size_t total = TXS_CTL_HDR_LEN + n;
	rc = txs_ctl_write_full(fd, b, total, txs_ctl_now_ms() + (timeout_ms > 0 ? timeout_ms : 0));
	if (rc == -ETIMEDOUT)
		rc = txs_ctl_fail(err, errlen, rc, "the peer did not take a %zu-byte message within %.1f s", total,
			  timeout_ms / 1000.0);
	else if (rc < 0)
		rc = txs_ctl_fail(err, errlen, rc, "control connection: %s", rc == -EIO ? "write failed" : strerror(-rc));
	free(b);
	return rc;
}

int txs_ctl_write_full(int fd, const uint8_t *b, size_t total, int64_t deadline)
{
	size_t off = 0;
	while (off < total) {
		int64_t left = deadline - txs_ctl_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int r = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		ssize_t k = send(fd, b + off, total - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			off += (size_t)k;
			continue;
		}
		if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		return k < 0 ? -errno : -EIO;
	}
	return 0;
}
