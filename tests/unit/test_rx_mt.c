/* SPDX-License-Identifier: MIT */
/* lib/rx concurrency contract (also run under ThreadSanitizer): each thread
 * owns its core and writes only there; a controlling thread reads the live
 * counters while they run and merges once they stopped. Then the same through
 * the udp input: two queues (SO_REUSEPORT) polled by two threads, flows from
 * four sockets, every datagram accounted for and each flow on one queue. */
#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/rx.h>
#include "test_sock.h"
#include "test_util.h"

#define PER_THREAD 200000u

struct feeder {
	struct txs_rx_core *core;
	uint32_t flow;
	int done;
};

static void *feed_main(void *arg)
{
	struct feeder *f = arg;
	uint8_t p[24];
	struct txs_rx_tuple t = { 0 };
	for (uint64_t s = 0; s < PER_THREAD; s++) {
		/* every 1000th packet lost, every 997th duplicated */
		if (s % 1000 == 999)
			continue;
		struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = f->flow, .seq = s, .ts_ns = 1 };
		txs_ph_write(p, 24, &ph);
		txs_rx_dgram(f->core, p, 24, &t, 0, 2);
		if (s % 997 == 0)
			txs_rx_dgram(f->core, p, 24, &t, 0, 2);
	}
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The live received counts of cores[0..n), summed. */
static uint64_t live_received(struct txs_rx_core *const *cores, unsigned n)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++) {
		struct txs_rx_live l;
		txs_rx_core_live(cores[i], &l);
		sum += l.received;
	}
	return sum;
}

static void cores_in_parallel(void **st)
{
	(void)st;
	struct feeder fd[2];
	pthread_t th[2];
	struct txs_rx_core *cores[2];
	for (int i = 0; i < 2; i++) {
		assert_int_equal(txs_rx_core_create(&cores[i], NULL), 0);
		fd[i] = (struct feeder){ .core = cores[i], .flow = (uint32_t)i };
		assert_int_equal(pthread_create(&th[i], NULL, feed_main, &fd[i]), 0);
	}
	/* live reads while the owners write: monotonic, never above the final */
	uint64_t last = 0;
	for (int k = 0; k < 100000; k++) {
		uint64_t sum = live_received(cores, 2);
		assert_true(sum >= last);
		last = sum;
		if (__atomic_load_n(&fd[0].done, __ATOMIC_ACQUIRE) && __atomic_load_n(&fd[1].done, __ATOMIC_ACQUIRE))
			break;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	struct txs_rx_result *r;
	struct txs_rx_expect e = { .have_total = true, .total = 2 * PER_THREAD, .n_flows = 2 };
	e.per_flow[0] = e.per_flow[1] = PER_THREAD;
	assert_int_equal(txs_rx_result_build(&r, cores, 2, &e), 0);
	uint64_t lost = PER_THREAD / 1000, dups = PER_THREAD / 997 + 1;
	/* seq 0 and multiples of 997 that are not lost */
	uint64_t dup_lost = 0;
	for (uint64_t s = 0; s < PER_THREAD; s += 997)
		dup_lost += s % 1000 == 999;
	assert_int_equal(r->lost, 2 * lost);
	assert_int_equal(r->duplicates, 2 * (dups - dup_lost));
	assert_int_equal(r->unique, 2 * (PER_THREAD - lost));
	assert_int_equal(r->n_flows, 2);
	assert_int_equal(r->flows[0].cores, 1);
	txs_rx_result_free(r);
	txs_rx_core_destroy(cores[0]);
	txs_rx_core_destroy(cores[1]);
}

struct poller {
	struct txs_rx_input *in;
	struct txs_rx_core *core;
	unsigned q;
	int *stop;
	int err;
};

static void *poll_main(void *arg)
{
	struct poller *p = arg;
	for (int k = 0; k < 100000 && !__atomic_load_n(p->stop, __ATOMIC_ACQUIRE); k++) {
		int n = txs_rx_input_poll(p->in, p->q, p->core, 5);
		if (n < 0) {
			p->err = n;
			break;
		}
	}
	return NULL;
}

static void udp_queues_in_parallel(void **st)
{
	(void)st;
	struct txs_rx_input_conf ic = { .n_queues = 2 };
	struct txs_rx_input *in = t_rx_udp_input(&ic, 31000, 18000, 1, 0, "no loopback UDP port");
	int stop = 0;
	struct poller pl[2];
	pthread_t th[2];
	struct txs_rx_core *cores[2];
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(txs_rx_core_create(&cores[i], NULL), 0);
		pl[i] = (struct poller){ .in = in, .core = cores[i], .q = i, .stop = &stop };
		assert_int_equal(pthread_create(&th[i], NULL, poll_main, &pl[i]), 0);
	}
	int s[4];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(ic.port) };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int k = 0; k < 4; k++)
		s[k] = socket(AF_INET, SOCK_DGRAM, 0);
	const unsigned N = 2000;
	for (unsigned i = 0; i < N; i++) {
		int k = (int)(i % 4);
		uint8_t p[16];
		struct txs_ph ph = { .kind = TXS_PH_COMPACT, .flow = (uint32_t)k, .seq = i / 4, .ts_ns = 1 };
		txs_ph_write(p, 16, &ph);
		assert_int_equal(sendto(s[k], p, 16, 0, (struct sockaddr *)&to, sizeof(to)), 16);
		if (i % 64 == 63)
			usleep(200); /* let the pollers keep up: no overflow */
	}
	/* wait until everything arrived or was dropped, bounded */
	for (int k = 0; k < 400; k++) {
		if (live_received(cores, 2) >= N)
			break;
		usleep(5000);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(pl[i].err, 0);
	}
	for (int k = 0; k < 4; k++)
		close(s[k]);
	struct txs_rx_input_stats is;
	txs_rx_input_stats(in, &is);
	struct txs_rx_expect e = { .have_total = true, .total = N, .n_flows = 4 };
	for (int k = 0; k < 4; k++)
		e.per_flow[k] = N / 4;
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, cores, 2, &e), 0);
	assert_int_equal(r->received + is.socket_drops, N);
	assert_int_equal(r->lost, is.socket_drops);
	assert_int_equal(r->n_flows, 4);
	for (unsigned f = 0; f < 4; f++)
		assert_int_equal(r->flows[f].cores, 1); /* a flow never splits over REUSEPORT queues */
	txs_rx_result_free(r);
	txs_rx_core_destroy(cores[0]);
	txs_rx_core_destroy(cores[1]);
	txs_rx_input_close(in);
}

T_MAIN(cmocka_unit_test(cores_in_parallel),
       cmocka_unit_test(udp_queues_in_parallel))
