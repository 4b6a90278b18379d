/* SPDX-License-Identifier: MIT */
/* Fuzz target: the control protocol (lib/ctl, docs/control.md), as a server
 * or a client meets it from a hostile peer.
 *
 * Input: byte 0 selects the mode, the rest is the data:
 *   0 a byte stream from the peer: written into a socketpair and read frame
 *     by frame with txs_ctl_read (small limit) until it fails
 *   1 one message body (JSON) for txs_ctl_decode
 *   2 an --allow-dest list for txs_ctl_allow_parse
 * Properties, any violation aborts: a decoded message encodes, and that
 * encoding decodes to the same fields (idempotent); failures leave no
 * summaries allocated and an error text; an allow-list holds at most its
 * maximum and always allows the client's own address. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/ctl.h>

#include "fuzz_check.h"

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* decode -> encode -> decode gives the same message */
static void check_msg(const struct txs_ctl_msg *m)
{
	char *j, err[256];
	size_t n;
	int rc = txs_ctl_encode(m, &j, &n, err, sizeof(err));
	CHECK(rc == 0);
	struct txs_ctl_msg d;
	rc = txs_ctl_decode(&d, j, n, err, sizeof(err));
	CHECK(rc == 0);
	CHECK(d.type == m->type && d.test == m->test && d.auth == m->auth && d.failed == m->failed);
	CHECK(memcmp(d.nonce, m->nonce, sizeof(d.nonce)) == 0 && memcmp(d.mac, m->mac, sizeof(d.mac)) == 0);
	CHECK(strcmp(d.software, m->software) == 0 && strcmp(d.message, m->message) == 0);
	CHECK(d.recv.on == m->recv.on && d.recv.port == m->recv.port && strcmp(d.recv.dev, m->recv.dev) == 0 &&
	      strcmp(d.recv.cpus, m->recv.cpus) == 0 && d.recv.threads == m->recv.threads &&
	      d.recv.rcvbuf == m->recv.rcvbuf && d.recv.window == m->recv.window);
	CHECK(d.send.on == m->send.on && d.send.port == m->send.port && strcmp(d.send.dest, m->send.dest) == 0 &&
	      d.send.length == m->send.length && d.send.count == m->send.count && d.send.threads == m->send.threads);
	CHECK(same_str(d.sender, m->sender) && same_str(d.receiver, m->receiver));
	CHECK(d.clock == m->clock && d.t1 == m->t1 && d.t2 == m->t2 && d.t3 == m->t3);
	CHECK(memcmp(&d.recv.clock, &m->recv.clock, sizeof(d.recv.clock)) == 0 &&
	      memcmp(&d.done_clock, &m->done_clock, sizeof(d.done_clock)) == 0);
	for (size_t i = 0; m->message[i]; i++)
		CHECK(m->message[i] >= 0x20 && m->message[i] < 0x7f);
	txs_ctl_msg_free(&d);
	free(j);
}

static void one_decode(const uint8_t *d, size_t n)
{
	struct txs_ctl_msg m;
	char err[256] = "";
	int rc = txs_ctl_decode(&m, (const char *)d, n, err, sizeof(err));
	if (rc == 0)
		check_msg(&m);
	else
		CHECK(err[0] && !m.sender && !m.receiver && (rc == -EPROTO || rc == -EPROTONOSUPPORT || rc == -ENOMEM));
	txs_ctl_msg_free(&m);
}

static void stream(const uint8_t *d, size_t n)
{
	int sv[2];
	if (n > 1u << 20 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	int sz = 4 << 20;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	size_t off = 0;
	while (off < n) { /* what does not fit in the socket buffer is cut: a truncated stream */
		ssize_t k = send(sv[0], d + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	close(sv[0]);
	for (unsigned i = 0; i < 64; i++) {
		struct txs_ctl_msg m;
		char err[256] = "";
		int rc = txs_ctl_read(sv[1], &m, TXS_CTL_SMALL_MAX, 1000, err, sizeof(err));
		if (rc < 0) {
			CHECK(err[0] && !m.sender && !m.receiver);
			CHECK(rc != -ETIMEDOUT); /* everything was written and closed */
			txs_ctl_msg_free(&m);
			break;
		}
		check_msg(&m);
		txs_ctl_msg_free(&m);
	}
	close(sv[1]);
}

static void allow(const uint8_t *d, size_t n)
{
	char s[1024];
	if (n >= sizeof(s))
		n = sizeof(s) - 1;
	memcpy(s, d, n);
	s[n] = 0;
	struct txs_ctl_allow a;
	char err[256];
	if (txs_ctl_allow_parse(&a, s, err, sizeof(err)) == 0) {
		CHECK(a.n >= 1 && a.n <= TXS_CTL_ALLOW_MAX);
		for (unsigned i = 0; i < a.n; i++) {
			CHECK(a.e[i].prefix <= (a.e[i].net.family == AF_INET ? 32u : 128u));
			CHECK(txs_ctl_allowed(&a, &a.e[i].net, &a.e[i].net));
			CHECK(txs_ctl_allowed(NULL, &a.e[i].net, &a.e[i].net));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		stream(data + 1, size - 1);
		break;
	case 1:
		one_decode(data + 1, size - 1);
		break;
	case 2:
		allow(data + 1, size - 1);
		break;
	}
	return 0;
}
