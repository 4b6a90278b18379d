/* SPDX-License-Identifier: MIT */
/* Live copies of a core's flows for a reader while the core runs. The
 * reader raises `want` and waits on a condition variable; the owner, between
 * polls, sees want != done (one atomic load), copies under the mutex and
 * signals. The copy is the owner's own read of its own state: no field
 * written per packet is read by another thread. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rx_priv.h"

struct snap_priv {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned want, done; /* want: atomic (reader writes, owner reads) */
	unsigned cap;
};


TXS_API int txs_rx_snap_create(struct txs_rx_snap **out, unsigned max_flows)
{
	*out = NULL;
	if (!max_flows)
		max_flows = TXS_RX_MAX_FLOWS_DEFAULT;
	struct txs_rx_snap *s = calloc(1, sizeof(*s));
	struct snap_priv *p = calloc(1, sizeof(*p));
	if (s)
		s->flows = calloc(max_flows, sizeof(*s->flows));
	if (!s || !p || !s->flows) {
		if (s)
			free(s->flows);
		free(s);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->cap = max_flows;
	txs_hist_init(&s->lat);
	s->priv = p;
	*out = s;
	return 0;
}

TXS_API void txs_rx_snap_destroy(struct txs_rx_snap *s)
{
	if (!s)
		return;
	struct snap_priv *p = s->priv;
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
	free(s->flows);
	free(s);
}

TXS_API void txs_rx_core_publish(const struct txs_rx_core *c, struct txs_rx_snap *s)
{
	struct snap_priv *p = s->priv;
	unsigned want = __atomic_load_n(&p->want, __ATOMIC_ACQUIRE);
	if (want == p->done) /* owner-only field */
		return;
	pthread_mutex_lock(&p->lock);
	unsigned n = c->n_flows < p->cap ? c->n_flows : p->cap;
	for (unsigned i = 0; i < n; i++) {
		const struct rx_flow *f = c->flows[i];
		struct txs_rx_snap_flow *o = &s->flows[i];
		uint64_t span = f->span_closed + (f->next - f->base);
		o->by_id = f->key_kind == RX_KEY_ID;
		o->id = f->id;
		o->tuple = f->tuple;
		o->received = f->received;
		o->bytes = f->bytes;
		o->unique = f->unique;
		o->duplicates = f->dup;
		o->reordered = f->reordered;
		o->late = f->late;
		o->span = span < f->span_closed ? UINT64_MAX : span;
	}
	s->n_flows = n;
	s->lat = c->lat;
	s->lat_negative = c->lat_negative;
	s->lat_past = c->lat_past;
	s->copied_ns = txs_now_mono_ns();
	p->done = want;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

TXS_API int txs_rx_snap_request(struct txs_rx_snap *s, int timeout_ms, int fresh_ms)
{
	struct snap_priv *p = s->priv;
	pthread_mutex_lock(&p->lock);
	uint64_t now = txs_now_mono_ns();
	if (s->copied_ns && now - s->copied_ns < (uint64_t)fresh_ms * 1000000ull) {
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	uint64_t copied = s->copied_ns;
	__atomic_store_n(&p->want, __atomic_load_n(&p->want, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	int rc = 0;
	while (s->copied_ns == copied && rc == 0)
		rc = pthread_cond_timedwait(&p->cond, &p->lock, &dl);
	bool got = s->copied_ns != copied;
	pthread_mutex_unlock(&p->lock);
	return got ? 0 : -ETIMEDOUT;
}

TXS_API void txs_rx_snap_lock(struct txs_rx_snap *s)
{
	pthread_mutex_lock(&((struct snap_priv *)s->priv)->lock);
}

TXS_API void txs_rx_snap_unlock(struct txs_rx_snap *s)
{
	pthread_mutex_unlock(&((struct snap_priv *)s->priv)->lock);
}
