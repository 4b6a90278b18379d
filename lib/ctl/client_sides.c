/* SPDX-License-Identifier: MIT */
/* The client's own sides on threads (txscale/ctl_session.h,
 * txs_ctl_client_run_sides): the caller's sender and receiver each run to
 * their end on a thread of their own, behind txs_ctl_client_run's ops;
 * their summaries come back in memory, the server's sender summary goes to
 * our receiver in memory. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/ctl_session.h>
#include "common/proc.h"
#include "sess_priv.h"

struct sides_run;

struct side {
	struct sides_run *k;
	pthread_t th;
	bool started;
	int done, stop, ready; /* atomic: the run ended (status set); asked to stop; the receiver is bound */
	int status;
	bool self;             /* it ended before it was asked to stop */
	struct txs_ctl_side_io io;
	char *sum;             /* io.sumf's text once the side closed it */
	size_t len;
};

struct sides_run {
	const struct txs_ctl_sides *sd;
	const struct txs_ctl_client_result *res; /* its data_port: where our sender sends */
	struct side side[2]; /* TXS_CTL_SIDE_SEND, TXS_CTL_SIDE_RECV */
	const char *local;
	int64_t offset;   /* the caller's clock offset, kept: the receiver may read it after recv_start returned */
	bool has_offset;
	pthread_mutex_t mu;
	char *peer; /* the server's sender summary with its clock line (under mu) */
	int discard; /* atomic: the test never ran, our receiver says nothing */
};

static bool io_stop(void *arg)
{
	return __atomic_load_n(&((struct side *)arg)->stop, __ATOMIC_RELAXED);
}

static bool io_discard(void *arg)
{
	return __atomic_load_n(&((struct side *)arg)->k->discard, __ATOMIC_ACQUIRE);
}

static void io_ready(void *arg)
{
	__atomic_store_n(&((struct side *)arg)->ready, 1, __ATOMIC_RELEASE);
}

static int io_sender_summary(void *arg, char **text, size_t *len)
{
	struct sides_run *k = ((struct side *)arg)->k;
	pthread_mutex_lock(&k->mu);
	*text = k->peer ? strdup(k->peer) : NULL;
	pthread_mutex_unlock(&k->mu);
	*len = *text ? strlen(*text) : 0;
	return *text ? 0 : -EAGAIN;
}

static void *side_main(void *arg)
{
	struct side *d = arg;
	const struct txs_ctl_sides *sd = d->k->sd;
	if (d == &d->k->side[TXS_CTL_SIDE_SEND])
		d->status = sd->send(sd->arg, &d->io);
	else
		d->status = sd->recv(sd->arg, d->k->local, d->k->has_offset ? &d->k->offset : NULL, &d->io);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start a side, its summary into memory. 0, or -1 with err. */
static int side_start(struct sides_run *k, int which, char *err, size_t errlen)
{
	struct side *d = &k->side[which];
	*d = (struct side){ .k = k, .io = { .hold = k->sd->hold, .arg = d, .stop = io_stop, .ready = io_ready,
					     .sender_summary = io_sender_summary, .discard = io_discard,
					     .port = which == TXS_CTL_SIDE_SEND ? k->res->data_port : k->res->recv_port,
					     .clock_error_ns = which == TXS_CTL_SIDE_RECV ? k->res->clock_error_ns : 0 } };
	int e = (d->io.sumf = open_memstream(&d->sum, &d->len)) ? 0 : errno;
	if (!e) { /* the signals stay with the caller's thread */
		sigset_t sigs, old;
		sigemptyset(&sigs);
		sigaddset(&sigs, SIGINT);
		sigaddset(&sigs, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &sigs, &old);
		e = pthread_create(&d->th, NULL, side_main, d);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (e)
			fclose(d->io.sumf);
	}
	if (e) {
		snprintf(err, errlen, "cannot start our %s: %s", which == TXS_CTL_SIDE_SEND ? "sender" : "receiver",
			 strerror(e));
		return -1;
	}
	d->started = true;
	return 0;
}

/* The side has ended, or is stopped now; true when it ended by itself. */
static bool side_end(struct side *d)
{
	if (d->started) {
		d->self = __atomic_load_n(&d->done, __ATOMIC_ACQUIRE);
		__atomic_store_n(&d->stop, 1, __ATOMIC_RELAXED);
		pthread_join(d->th, NULL);
		d->started = false;
	}
	return d->self;
}

/* ---- txs_ctl_client_run's ops ---------------------------------------------------------------------- */

static int op_stopping(void *arg)
{
	const struct txs_ctl_sides *sd = ((struct sides_run *)arg)->sd;
	return sd->stopping ? sd->stopping(sd->arg) : 0;
}

static void op_warn(void *arg, const char *line)
{
	const struct txs_ctl_sides *sd = ((struct sides_run *)arg)->sd;
	if (sd->warn)
		sd->warn(sd->arg, line);
}

static bool op_ended(void *arg, int side)
{
	return __atomic_load_n(&((struct sides_run *)arg)->side[side].done, __ATOMIC_ACQUIRE);
}

static void op_stop(void *arg, int side)
{
	__atomic_store_n(&((struct sides_run *)arg)->side[side].stop, 1, __ATOMIC_RELAXED);
}

static char *op_send_finish(void *arg, bool *failed, char *err, size_t errlen)
{
	struct sides_run *k = arg;
	struct side *d = &k->side[TXS_CTL_SIDE_SEND];
	bool self = side_end(d);
	*failed = !self || (d->status != 0 && !op_stopping(k));
	char *sj = d->sum ? strdup(d->sum) : NULL;
	if (sj && txs_trim(sj, strlen(sj)))
		return sj;
	free(sj);
	char ex[64] = "stopped";
	if (self)
		snprintf(ex, sizeof(ex), "exit status %d", d->status);
	snprintf(err, errlen, "our sender failed (%s)", ex);
	return NULL;
}

static bool op_recv_finish(void *arg)
{
	struct side *d = &((struct sides_run *)arg)->side[TXS_CTL_SIDE_RECV];
	return side_end(d) && d->status == 0;
}

static int op_peer_summary(void *arg, const char *summary, const struct txs_ctl_clock_rep *c)
{
	struct sides_run *k = arg;
	char *t = txs_ctl_peer_summary_text(summary, c);
	if (!t)
		return -ENOMEM;
	pthread_mutex_lock(&k->mu);
	free(k->peer);
	k->peer = t;
	pthread_mutex_unlock(&k->mu);
	return 0;
}

static int op_recv_start(void *arg, const char *local, const int64_t *clock_offset_ns, char *err, size_t errlen)
{
	struct sides_run *k = arg;
	k->local = local;
	k->has_offset = clock_offset_ns != NULL;
	k->offset = clock_offset_ns ? *clock_offset_ns : 0;
	if (side_start(k, TXS_CTL_SIDE_RECV, err, errlen) < 0)
		return -1;
	struct side *d = &k->side[TXS_CTL_SIDE_RECV];
	double t0 = txs_mono_s();
	while (!__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE)) {
		if (op_stopping(k) || __atomic_load_n(&d->done, __ATOMIC_ACQUIRE) ||
		    txs_mono_s() - t0 >= TXS_CTL_READY_S) {
			snprintf(err, errlen, "our receiver did not start (its message is above)");
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	return 0;
}

static int op_send_start(void *arg, char *err, size_t errlen)
{
	return side_start(arg, TXS_CTL_SIDE_SEND, err, errlen);
}

TXS_API int txs_ctl_client_run_sides(struct txs_ctl_client *c, const struct txs_ctl_client_test *t,
				     const struct txs_ctl_sides *sides, struct txs_ctl_client_result *res, char *err,
				     size_t errlen)
{
	struct sides_run k = { .sd = sides, .res = res };
	pthread_mutex_init(&k.mu, NULL);
	struct txs_ctl_client_ops ops = { .arg = &k, .stopping = op_stopping, .warn = op_warn,
					  .recv_start = op_recv_start, .peer_summary = op_peer_summary,
					  .send_start = op_send_start, .ended = op_ended, .stop = op_stop,
					  .send_finish = op_send_finish, .recv_finish = op_recv_finish };
	int rc = txs_ctl_client_run(c, t, &ops, res, err, errlen);
	if (rc < 0 && !res->ready) /* refused before it ran: an empty report would only mislead */
		__atomic_store_n(&k.discard, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		side_end(&k.side[i]);
	res->own_send = k.side[TXS_CTL_SIDE_SEND].sum;
	res->own_recv = k.side[TXS_CTL_SIDE_RECV].sum;
	free(k.peer);
	pthread_mutex_destroy(&k.mu);
	return rc;
}
