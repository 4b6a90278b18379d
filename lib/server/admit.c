/* SPDX-License-Identifier: MIT */
/* The session table: admission (at most max_sessions at once, and
 * max_per_client from one address), busy refusals answered in short
 * children, each session's share of the CPUs, its process, its bound, and
 * reaping. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <txscale/iperf3.h>
#include "server_priv.h"

static bool addr_eq(const struct txs_addr *a, const struct txs_addr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, a->family == AF_INET ? 4 : 16) == 0;
}

/* A session's share of the CPUs: n_allowed / max of them (at least one;
 * max counted up to n_allowed: sessions past the CPUs share them), the
 * least loaded first, so that sessions pin different CPUs while there are
 * enough. */
static void cpus_take(struct txs_server *sv, struct txs_srv_slot *sl)
{
	unsigned slots = sv->c.max_sessions < sv->n_allowed ? sv->c.max_sessions : sv->n_allowed;
	unsigned want = sv->n_allowed / (slots ? slots : 1);
	if (want < 1)
		want = 1;
	if (want > TXS_MAX_CORES)
		want = TXS_MAX_CORES;
	sl->n_cpu = 0;
	while (sl->n_cpu < want && sl->n_cpu < sv->n_allowed) {
		int best = -1;
		for (unsigned k = 0; k < sv->n_allowed; k++) {
			int c = sv->allowed[k];
			bool taken = false;
			for (unsigned q = 0; q < sl->n_cpu; q++)
				taken |= sl->cpu[q] == c;
			if (!taken && (best < 0 || sv->load[c] < sv->load[best]))
				best = c;
		}
		if (best < 0)
			break;
		sv->load[best]++;
		sl->cpu[sl->n_cpu++] = best;
	}
}

static void cpus_give(struct txs_server *sv, struct txs_srv_slot *sl)
{
	for (unsigned q = 0; q < sl->n_cpu; q++)
		sv->load[sl->cpu[q]]--;
}

static void slot_free(struct txs_server *sv, struct txs_srv_slot *sl)
{
	if (sl->ep >= 0)
		close(sl->ep);
	cpus_give(sv, sl);
	memset(sl, 0, sizeof(*sl));
	sv->active--;
	txs_srv_publish(sv);
}

/* In a child (a session's, a refuser's): the parent's descriptors it has
 * no use for (the listener, the iperf 2 socket, other connections waiting, other sessions' end
 * pipes), so that a connection closes when its own process closes it; the
 * default SIGINT/SIGTERM (the server's stop is the parent's), and death
 * with the parent. */
static void child_setup(const struct txs_server *sv)
{
	close(sv->lfd);
	txs_srv_ip2_child(sv);
	for (unsigned q = 0; q < sv->npend; q++)
		close(sv->pend[q].fd);
	for (unsigned q = 0; q < sv->c.max_sessions; q++)
		if (sv->slot[q].pid > 0 && sv->slot[q].ep >= 0)
			close(sv->slot[q].ep);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/* the signals a library thread blocked (a JSON server session's) are the session's to take */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void txs_srv_check_ending(struct txs_server *sv)
{
	for (unsigned q = 0; q < sv->c.max_sessions; q++) {
		struct txs_srv_slot *sl = &sv->slot[q];
		if (sl->pid <= 0 || sl->ep < 0)
			continue;
		char b;
		if (read(sl->ep, &b, 1) == 0) {
			close(sl->ep);
			sl->ep = -1;
			sl->ending = true;
		}
	}
}

/* Answer a connection the server cannot take, in a short child of its own
 * (telling iperf3 from txscale waits for the first bytes): txscale's busy
 * message, iperf3's ACCESS_DENIED. */
static void refuse_conn(struct txs_server *sv, int fd, const char *why)
{
	unsigned k = 0;
	while (k < TXS_SRV_REFUSERS_MAX && sv->refusers[k] > 0)
		k++;
	if (k == TXS_SRV_REFUSERS_MAX)
		return;
	pid_t pid = fork();
	if (pid != 0) {
		if (pid > 0)
			sv->refusers[k] = pid;
		return;
	}
	child_setup(sv);
	if (txs_ctl_first(fd, TXS_SRV_FIRST_MS, true) == TXS_CTL_FIRST_OTHER) {
		txs_ip3_write_state(fd, TXS_IP3_ACCESS_DENIED, 500);
	} else {
		struct txs_ctl_msg m = { .type = TXS_CTL_BUSY };
		snprintf(m.message, sizeof(m.message), "%s; try again later", why);
		char e[256];
		txs_ctl_write(fd, &m, 500, e, sizeof(e));
	}
	_exit(0);
}

void txs_srv_slot_ended(struct txs_server *sv, struct txs_srv_slot *sl)
{
	txs_srv_metrics_end(&sv->sm, sl->id);
	slot_free(sv, sl);
}

/* Our children only, each by its pid: a server running inside another
 * program (a Python or C session) must not reap that program's children
 * (waitpid(-1) took a Python subprocess's status: it then read exit 0). */
int txs_srv_reap(struct txs_server *sv, int *code)
{
	int ended = 0, st;
	for (unsigned k = 0; k < TXS_SRV_REFUSERS_MAX; k++)
		if (sv->refusers[k] > 0 && waitpid(sv->refusers[k], &st, WNOHANG) == sv->refusers[k])
			sv->refusers[k] = 0;
	for (unsigned i = 0; i < sv->c.max_sessions; i++) {
		pid_t pid = sv->slot[i].pid;
		if (pid <= 0 || waitpid(pid, &st, WNOHANG) != pid)
			continue;
		txs_srv_slot_ended(sv, &sv->slot[i]);
		if (sv->c.one_off) {
			*code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
			ended = 1;
		}
	}
	double now = txs_mono_s();
	for (unsigned i = 0; i < sv->c.max_sessions; i++) {
		struct txs_srv_slot *sl = &sv->slot[i];
		if (sl->pid > 0 && now > sl->deadline) {
			txs_srv_log(sv, "session %u (%s) ran past its bound: stopped", sl->id, sl->who);
			kill(sl->pid, SIGKILL);
			sl->deadline = now + 3600; /* reaped above once it is gone */
		}
	}
	return ended;
}

/* A session for an admitted connection (pe, already out of the pending list): its slot, its process. */
static void session_start(struct txs_server *sv, const struct txs_srv_pending *pe, const char *who)
{
	int fd = pe->fd;
	struct txs_srv_slot *sl = NULL;
	for (unsigned f = 0; f < sv->c.max_sessions && !sl; f++)
		if (sv->slot[f].pid == 0)
			sl = &sv->slot[f];
	sv->sessions++;
	sl->id = sv->sessions;
	uint16_t port;
	txs_srv_sa_addr(&pe->peer, &sl->client, &port);
	snprintf(sl->who, sizeof(sl->who), "%s", who);
	cpus_take(sv, sl);
	fflush(NULL); /* nothing a hook buffered is written twice */
	int ep[2]; /* the child closes its end when its session is done with the client */
	if (pipe2(ep, O_CLOEXEC | O_NONBLOCK) < 0)
		ep[0] = ep[1] = -1;
	pid_t pid = fork();
	if (pid < 0) {
		txs_srv_msg(sv, "fork: %s", strerror(errno));
		close(fd);
		if (ep[0] >= 0) {
			close(ep[0]);
			close(ep[1]);
		}
		cpus_give(sv, sl);
		memset(sl, 0, sizeof(*sl));
		return;
	}
	if (pid == 0) {
		child_setup(sv);
		if (ep[0] >= 0)
			close(ep[0]);
		txs_srv_session_main(sv, sl, fd, pe, ep[1]);
	}
	close(fd);
	if (ep[1] >= 0)
		close(ep[1]);
	sl->ep = ep[0];
	sl->pid = pid;
	sv->active++;
	txs_srv_publish(sv);
	txs_srv_metrics_begin(&sv->sm, sl->id, who);
	/* every wait in a session is bounded; this bounds their sum, in case */
	sl->deadline = txs_mono_s() + 4 * (sv->c.max_time + sv->c.ctl_timeout) + 120;
}

unsigned txs_srv_admit(struct txs_server *sv, unsigned k)
{
	const struct txs_server_conf *c = &sv->c;
	struct txs_srv_pending pe = sv->pend[k];
	struct txs_addr pa;
	uint16_t pport;
	txs_srv_sa_addr(&pe.peer, &pa, &pport);
	char who[TXS_SRV_WHO_LEN], ab[INET6_ADDRSTRLEN];
	snprintf(who, sizeof(who), "%s", txs_addr_str(&pa, ab, sizeof(ab)));
	unsigned mine = 0, ending = 0, mine_ending = 0;
	for (unsigned q = 0; q < c->max_sessions; q++) {
		const struct txs_srv_slot *sl = &sv->slot[q];
		if (sl->pid <= 0)
			continue;
		mine += addr_eq(&sl->client, &pa);
		if (sl->ending) {
			ending++;
			mine_ending += addr_eq(&sl->client, &pa);
		}
	}
	/* a session whose client has gone ends in a moment: the newcomer waits for it (bounded),
	 * and any newcomer gives a session whose client has just left time to notice */
	bool soon = !(c->one_off && sv->sessions) && sv->active - ending < c->max_sessions &&
		    mine - mine_ending < c->max_per_client;
	bool full = (c->one_off && sv->sessions) || sv->active >= c->max_sessions, over = mine >= c->max_per_client;
	double waited = txs_mono_s() - pe.t;
	if ((full || over) && (soon || waited < TXS_SRV_PENDING_GRACE_S) && waited < TXS_SRV_PENDING_MS / 1000.0) {
		/* a txscale client hears at once why it waits (an iperf3 client could not read it) */
		if (!pe.told && txs_ctl_first(pe.fd, 0, false) == TXS_CTL_FIRST_TXSCALE) {
			struct txs_ctl_msg m = { .type = TXS_CTL_WAIT };
			/* the longest it may wait from here: for a session that is ending, else the grace */
			double bound = soon ? TXS_SRV_PENDING_MS / 1000.0 : TXS_SRV_PENDING_GRACE_S;
			unsigned n = full ? sv->active : mine, ne = full ? ending : mine_ending;
			if (full && c->one_off)
				snprintf(m.message, sizeof(m.message), "this server serves one session (-1/--one-off), "
					 "which runs: waiting up to %.1f s", bound);
			else
				snprintf(m.message, sizeof(m.message), "%u session%s%s%s run%s (%s %u), %u of them ending: "
					 "waiting up to %.1f s for one to end", n, n == 1 ? "" : "s", full ? "" : " from ",
					 full ? "" : who, n == 1 ? "s" : "", full ? "--max-sessions" : "--max-sessions-per-client",
					 full ? c->max_sessions : c->max_per_client, ne, bound);
			char e[128];
			if (txs_ctl_write(pe.fd, &m, 50, e, sizeof(e)) == 0)
				txs_srv_log(sv, "%s: told to wait (%s)", who, m.message);
			sv->pend[k].told = true;
		}
		return k + 1;
	}
	sv->pend[k] = sv->pend[--sv->npend];
	if (!full && !over) {
		session_start(sv, &pe, who);
		return k;
	}
	char why[200];
	if (full && c->one_off) {
		txs_srv_metrics_refused(&sv->sm, TXS_SRV_REF_SESSIONS);
		snprintf(why, sizeof(why), "this server serves one session (-1/--one-off), and it has one");
	} else if (full) {
		txs_srv_metrics_refused(&sv->sm, TXS_SRV_REF_SESSIONS);
		snprintf(why, sizeof(why), "%u session%s run%s, this server's most (--max-sessions %u)", sv->active,
			 sv->active == 1 ? "" : "s", sv->active == 1 ? "s" : "", c->max_sessions);
	} else {
		txs_srv_metrics_refused(&sv->sm, TXS_SRV_REF_PER_CLIENT);
		snprintf(why, sizeof(why), "%u session%s from %s run%s, the most per client "
			 "(--max-sessions-per-client %u)", mine, mine == 1 ? "" : "s", who, mine == 1 ? "s" : "",
			 c->max_per_client);
	}
	sv->n_refused++;
	txs_srv_publish(sv);
	txs_srv_log(sv, "%s: busy (refused: %s)", who, why);
	fflush(NULL);
	refuse_conn(sv, pe.fd, why);
	close(pe.fd);
	return k;
}
