/* SPDX-License-Identifier: MIT */
/* The receive session's threads (also under ThreadSanitizer): two
 * receiving threads on one loopback port, datagrams from four sockets of
 * another thread, txs_recv_stop from a third; the result counts every
 * datagram exactly once, and the intervals' sums add up to it. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/rx.h>
#include <txscale/session_recv.h>
#include "test_util.h"

#define SOCKS 4
#define PER_SOCK 500

struct side {
	struct txs_recv *s;
	uint16_t port;
	int ready;        /* the session's ready hook ran */
	int sent;         /* the sender finished */
	unsigned n_sent;
	uint64_t iv_received;
	unsigned intervals;
};

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Four sockets (four source ports: the kernel's hash spreads them over
 * the two receiving sockets), PER_SOCK datagrams each, flow = socket. */
static void *sender(void *arg)
{
	struct side *d = arg;
	while (!__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(d->port) };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd[SOCKS];
	for (unsigned k = 0; k < SOCKS; k++)
		fd[k] = socket(AF_INET, SOCK_DGRAM, 0);
	for (unsigned i = 0; i < PER_SOCK; i++) {
		for (unsigned k = 0; k < SOCKS; k++) {
			uint8_t p[64];
			struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = k, .seq = i, .ts_ns = txs_now_real_ns() };
			txs_ph_write(p, sizeof(p), &ph);
			if (fd[k] >= 0 && sendto(fd[k], p, sizeof(p), 0, (struct sockaddr *)&to, sizeof(to)) == sizeof(p))
				d->n_sent++;
		}
		if (i % 50 == 49)
			sleep_ms(5); /* stay well inside the receive buffers */
	}
	for (unsigned k = 0; k < SOCKS; k++)
		if (fd[k] >= 0)
			close(fd[k]);
	__atomic_store_n(&d->sent, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Stops the session from outside its controlling thread once the sender is done. */
static void *stopper(void *arg)
{
	struct side *d = arg;
	while (!__atomic_load_n(&d->sent, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	sleep_ms(300);
	txs_recv_stop(d->s);
	return NULL;
}

static void h_ready(void *u)
{
	__atomic_store_n(&((struct side *)u)->ready, 1, __ATOMIC_RELEASE);
}

static void h_interval(void *u, const struct txs_recv_interval *iv)
{
	struct side *d = u;
	assert_int_equal(iv->n, 2);
	assert_int_equal(iv->thread[0].received + iv->thread[1].received, iv->sum.received);
	d->iv_received += iv->sum.received;
	d->intervals++;
}

static void two_threads(void **st)
{
	(void)st;
	struct side d = { .port = (uint16_t)(20000 + (getpid() + 7919) % 20000) };
	char ps[8], err[256];
	snprintf(ps, sizeof(ps), "%u", d.port);
	struct txs_recv_conf c;
	txs_recv_conf_init(&c);
	c.bind = "127.0.0.1";
	c.port = ps;
	c.threads = 2;
	c.time = 30;
	c.interval = 0.05;
	c.rcvbuf = 4 << 20;
	int rc = txs_recv_open(&d.s, &c, err, sizeof(err));
	if (rc == -EADDRINUSE)
		T_SKIP("port %u in use", d.port);
	assert_int_equal(rc, 0);
	assert_int_equal(txs_recv_threads(d.s), 2);
	pthread_t ts, tp;
	assert_int_equal(pthread_create(&ts, NULL, sender, &d), 0);
	assert_int_equal(pthread_create(&tp, NULL, stopper, &d), 0);
	struct txs_recv_hooks h = { .user = &d, .ready = h_ready, .interval = h_interval };
	assert_int_equal(txs_recv_run(d.s, &h), 0);
	pthread_join(ts, NULL);
	pthread_join(tp, NULL);
	assert_int_equal(d.n_sent, SOCKS * PER_SOCK);
	const struct txs_recv_result *r = txs_recv_result(d.s);
	assert_non_null(r);
	assert_int_equal(r->rx->received, SOCKS * PER_SOCK);
	assert_int_equal(r->rx->unique, SOCKS * PER_SOCK);
	assert_int_equal(r->rx->duplicates, 0);
	assert_int_equal(r->rx->n_flows, SOCKS);
	assert_int_equal(r->n_threads, 2);
	assert_int_equal(r->thread[0].live.received + r->thread[1].live.received, SOCKS * PER_SOCK);
	assert_int_equal(d.iv_received, SOCKS * PER_SOCK);
	assert_true(d.intervals >= 2);
	txs_recv_close(d.s);
}

T_MAIN(cmocka_unit_test(two_threads))
