/* SPDX-License-Identifier: MIT */
/* The sender's summary (a file, or the text a hook hands over), read by the
 * receive session: exact expected counts per flow. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "recv_priv.h"

#define SUMMARY_MAX (64u << 20)

/* The whole of f, malloc'd; NULL when over SUMMARY_MAX or out of memory. */
static char *read_all(FILE *f, size_t *lenp)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
		if (len == cap) {
			char *nb = cap >= SUMMARY_MAX ? NULL : realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	*lenp = len;
	return buf;
}

int txs_recv_summary_parse(struct txs_rx_expect *e, const char *text, size_t len)
{
	/* into a copy: e stays as it was unless the text is whole and valid */
	struct txs_rx_expect *ne = malloc(sizeof(*ne));
	int rc = ne ? txs_rx_expect_parse(ne, text, len) : -ENOMEM;
	if (rc == 0)
		*e = *ne;
	free(ne);
	return rc;
}

TXS_API int txs_recv_summary_read(const char *path, uint64_t not_before_real_ns, struct txs_rx_expect *e,
				  char **text, size_t *lenp, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		int rc = -errno;
		return txs_fail(err, errlen, rc, "cannot read --sender-summary '%s': %s", path, strerror(-rc));
	}
	struct stat st;
	if (not_before_real_ns && fstat(fileno(f), &st) == 0 &&
	    (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec < not_before_real_ns) {
		fclose(f);
		return txs_fail(err, errlen, -ESTALE, "--sender-summary '%s' was written before this recv started "
				"(a file of an earlier run?)", path);
	}
	size_t len = 0;
	char *buf = read_all(f, &len);
	fclose(f);
	if (!buf)
		return txs_fail(err, errlen, -EFBIG, "--sender-summary '%s': too large or out of memory", path);
	if (txs_recv_summary_parse(e, buf, len) < 0) {
		free(buf);
		return txs_fail(err, errlen, -EINVAL, "--sender-summary '%s': no valid txscale send summary line "
				"({\"type\":\"summary\",\"kind\":\"send\",\"packets\":N,\"threads\":[...]})", path);
	}
	if (text) {
		*text = buf;
		*lenp = len;
	} else {
		free(buf);
	}
	return 0;
}
