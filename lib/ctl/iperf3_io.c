/* SPDX-License-Identifier: MIT */
/* iperf3's control connection: state bytes, SERVER_ERROR, length-prefixed
 * JSON. One deadline per message; a length over the reader's cap is refused
 * before anything is allocated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/iperf3.h>
#include "ctl_priv.h"

static int64_t deadline_of(int timeout_ms)
{
	return txs_ctl_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
}

TXS_API int txs_ip3_read_full(int fd, void *buf, size_t n, int timeout_ms)
{
	size_t got;
	return txs_ctl_read_full(fd, buf, n, deadline_of(timeout_ms), &got);
}

TXS_API int txs_ip3_write_full(int fd, const void *buf, size_t n, int timeout_ms)
{
	return txs_ctl_write_full(fd, buf, n, deadline_of(timeout_ms));
}

TXS_API int txs_ip3_read_state(int fd, int *state, int timeout_ms)
{
	int8_t b;
	int rc = txs_ip3_read_full(fd, &b, 1, timeout_ms);
	if (rc == 0)
		*state = b;
	return rc;
}

TXS_API int txs_ip3_write_state(int fd, int state, int timeout_ms)
{
	if (state < -128 || state > 127)
		return -EINVAL;
	int8_t b = (int8_t)state;
	return txs_ip3_write_full(fd, &b, 1, timeout_ms);
}

static void be32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

TXS_API int txs_ip3_write_error(int fd, int ip3_errno, int sys_errno, int timeout_ms)
{
	uint8_t b[9];
	b[0] = (uint8_t)(int8_t)TXS_IP3_SERVER_ERROR;
	be32(b + 1, (uint32_t)ip3_errno);
	be32(b + 5, (uint32_t)sys_errno);
	return txs_ip3_write_full(fd, b, sizeof(b), timeout_ms);
}

TXS_API int txs_ip3_read_json(int fd, size_t max, int timeout_ms, char **out, size_t *len)
{
	*out = NULL;
	int64_t dl = deadline_of(timeout_ms);
	uint8_t h[4];
	size_t got;
	int rc = txs_ctl_read_full(fd, h, 4, dl, &got);
	if (rc)
		return rc;
	uint32_t n = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	if (n == 0 || n > max)
		return -EMSGSIZE;
	char *b = malloc((size_t)n + 1);
	if (!b)
		return -ENOMEM;
	rc = txs_ctl_read_full(fd, (uint8_t *)b, n, dl, &got);
	if (rc) {
		free(b);
		return rc;
	}
	b[n] = 0;
	*out = b;
	*len = n;
	return 0;
}

TXS_API int txs_ip3_write_json(int fd, const char *json, size_t len, int timeout_ms)
{
	if (len == 0 || len > UINT32_MAX)
		return -EINVAL;
	int64_t dl = deadline_of(timeout_ms);
	uint8_t h[4];
	be32(h, (uint32_t)len);
	int rc = txs_ctl_write_full(fd, h, 4, dl);
	return rc ? rc : txs_ctl_write_full(fd, (const uint8_t *)json, len, dl);
}
