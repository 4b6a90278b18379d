/* SPDX-License-Identifier: MIT */
/* txscale server (txscale recv -s): the far end of the control channel
 * (docs/control.md). It listens on a TCP control port and serves up to
 * --max-sessions sessions at once (--max-sessions-per-client from one
 * address); a client that comes when either is reached is answered "busy".
 * Each session runs in a child process on its own share of the CPUs, and each test of a session
 * runs `txscale recv` and/or `txscale send` as bounded children of this
 * very binary (tools/txscale/proc.c), whose summary files go back to the
 * client. The session's protocol is lib/ctl's (txs_ctl_serve); this file
 * listens, admits, forks and runs the children behind its ops. Nothing the client sends becomes an argument it did not pass
 * through lib/ctl's checks, and the sender only ever sends to the client's
 * own address or to one the operator allowed (--allow-dest). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/ctl.h>
#include <txscale/ctl_session.h>
#include "cli.h"
#include "ctl_cli.h"
#include "opt.h"
#include "common/proc.h"
#include "server_iperf3.h"
#include "server_metrics.h"
#include "server_sess.h"

#define SESSIONS_MAX 1024    /* --max-sessions' ceiling */
#define REFUSERS_MAX 32      /* refusals being answered at once; beyond, a connection is closed unanswered */
#define PENDING_MAX 16       /* connections waiting for a session that is ending (one more: refused at once) */
#define PENDING_S 2.0        /* the longest such a wait */
#define PENDING_GRACE_S 0.3  /* a full server's newcomer waits this long in any case */

#define O(f) offsetof(struct server_cfg, f)
static const struct opt server_opts[] = {
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "listen on ADDR only (default: every address); tests receive and send on the address the client reached" },
	{ "control-port", 0, OPT_PORT, O(control_port), "PORT", "TCP control port", "5201" },
	{ "one-off", '1', OPT_FLAG, O(one_off), NULL, "serve one session, then exit with its status" },
	{ "auth-file", 0, OPT_STR, O(auth_file), "FILE", "shared secret: clients must answer an HMAC challenge keyed by it" },
	{ "allow-dest", 0, OPT_STR, O(allow_dest), "LIST", "where a client may ask us to send, ADDR[/PREFIX],... (always: the client's own address)" },
	{ "max-time", 0, OPT_SECONDS, O(max_time), "SEC", "longest test a client may ask for", "300" },
	{ "max-sessions", 0, OPT_UINT, O(max_sessions), "N", "sessions served at once (default: the number of CPUs); the next client is told the server is busy", NULL, 1, SESSIONS_MAX },
	{ "max-sessions-per-client", 0, OPT_UINT, O(max_per_client), "N", "sessions at once from one client address (default: --max-sessions)", NULL, 1, SESSIONS_MAX },
	{ "max-rate", 0, OPT_RATE, O(max_rate), "RATE", "the most a client may ask this server to send: packets/s (10k) or frame bits/s (100Mbit); 0 = no limit", "0" },
	{ "ctl-timeout", 0, OPT_SECONDS, O(ctl_timeout), "SEC", "longest wait for a client's next message", "10" },
	MCLI_OPTS(O(metrics)),
	{ "json", 'J', OPT_FLAG, O(json), NULL, "print each test's summaries as JSON lines on stdout (log on stderr)" },
	{ "server", 's', OPT_FLAG, O(server_flag), NULL, "(txscale recv -s: run as the server)" },
	OPT_END
};
#undef O

static volatile sig_atomic_t g_stop;
static struct smet g_sm; /* --metrics: the registry (the parent's), the sessions' files (every process's) */

static const char *fmt_sessions(const struct server_cfg *c)
{
	static char b[96];
	snprintf(b, sizeof(b), "at most %u (%u per client)", c->max_sessions, c->max_per_client);
	return b;
}

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

bool ctl_recv_wants_server(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "--server") == 0)
			return true;
	}
	return false;
}

/* ---- addresses ------------------------------------------------------------------------------ */

static void sa_to_addr(const struct sockaddr_storage *ss, struct txs_addr *a, uint16_t *port)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		a->family = AF_INET;
		a->v4 = s4->sin_addr;
		*port = ntohs(s4->sin_port);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		*port = ntohs(s6->sin6_port);
		if (memcmp(s6->sin6_addr.s6_addr, mapped, 12) == 0) {
			a->family = AF_INET;
			memcpy(a->bytes, s6->sin6_addr.s6_addr + 12, 4);
		} else {
			a->family = AF_INET6;
			a->v6 = s6->sin6_addr;
		}
	}
}

/* ---- the listener ---------------------------------------------------------------------------- */

static int listen_on(const struct server_cfg *c, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int fam;
	if (c->bind) {
		struct txs_addr a;
		if (txs_addr_parse(&a, c->bind) < 0) {
			snprintf(err, errlen, "bad value for -B/--bind: '%s': expected an IPv4 or IPv6 address", c->bind);
			return -EINVAL;
		}
		fam = a.family;
	} else {
		fam = AF_INET6;
	}
	if (fam == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(c->control_port);
		inet_pton(AF_INET, c->bind, &s4->sin_addr);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(c->control_port);
		if (c->bind)
			inet_pton(AF_INET6, c->bind, &s6->sin6_addr);
		else
			s6->sin6_addr = in6addr_any;
		sl = sizeof(*s6);
	}
	int fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && !c->bind) { /* no IPv6 here: IPv4 any */
		fam = AF_INET;
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_port = htons(c->control_port);
		sl = sizeof(*s4);
		fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	int one = 1, zero = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fam == AF_INET6 && !c->bind)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 8) < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot listen on %s port %u: %s", c->bind ? c->bind : "*", c->control_port,
			 strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* ---- the session table ------------------------------------------------------------------------ */


struct pending { /* accepted, not yet admitted */
	int fd;
	struct sockaddr_storage peer, me;
	double t;
};

struct slot {
	pid_t pid; /* 0: free */
	int ep;      /* EOF once the session is done with its client (-1: none) */
	bool ending; /* ... which it is */
	unsigned id;
	struct txs_addr client;
	char who[INET6_ADDRSTRLEN + 8];
	double deadline;
	unsigned n_cpu;
	int cpu[TXS_MAX_CORES];
};

struct table {
	struct slot *s;
	unsigned max, per_client, active;
	int allowed[CPU_SETSIZE]; /* the CPUs this server may run on */
	unsigned n_allowed;
	unsigned load[CPU_SETSIZE]; /* sessions on each CPU */
	pid_t refusers[REFUSERS_MAX];
};

static bool addr_eq(const struct txs_addr *a, const struct txs_addr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, a->family == AF_INET ? 4 : 16) == 0;
}

static unsigned from_client(const struct table *t, const struct txs_addr *a)
{
	unsigned n = 0;
	for (unsigned i = 0; i < t->max; i++)
		if (t->s[i].pid > 0 && addr_eq(&t->s[i].client, a))
			n++;
	return n;
}

/* A session's share of the CPUs: n_allowed / max of them (at least one),
 * the least loaded first, so that sessions pin different CPUs while there
 * are enough. */
static void cpus_take(struct table *t, struct slot *sl)
{
	unsigned want = t->n_allowed / t->max;
	if (want < 1)
		want = 1;
	if (want > TXS_MAX_CORES)
		want = TXS_MAX_CORES;
	sl->n_cpu = 0;
	while (sl->n_cpu < want && sl->n_cpu < t->n_allowed) {
		int best = -1;
		for (unsigned k = 0; k < t->n_allowed; k++) {
			int c = t->allowed[k];
			bool taken = false;
			for (unsigned q = 0; q < sl->n_cpu; q++)
				taken |= sl->cpu[q] == c;
			if (!taken && (best < 0 || t->load[c] < t->load[best]))
				best = c;
		}
		if (best < 0)
			break;
		t->load[best]++;
		sl->cpu[sl->n_cpu++] = best;
	}
}

static void slot_free(struct table *t, struct slot *sl)
{
	if (sl->ep >= 0)
		close(sl->ep);
	for (unsigned q = 0; q < sl->n_cpu; q++)
		t->load[sl->cpu[q]]--;
	memset(sl, 0, sizeof(*sl));
	t->active--;
}

/* Answer a connection the server cannot take, in a short child of its own
 * (telling iperf3 from txscale waits for the first bytes): txscale's busy
 * message, iperf3's ACCESS_DENIED. */
/* In a child: the parent's descriptors it has no use for (other
 * connections waiting, other sessions' end pipes), so that a connection
 * closes when its own process closes it. */
static void close_others(const struct table *t, const struct pending *pend, unsigned npend)
{
	for (unsigned q = 0; q < npend; q++)
		close(pend[q].fd);
	for (unsigned q = 0; q < t->max; q++)
		if (t->s[q].pid > 0 && t->s[q].ep >= 0)
			close(t->s[q].ep);
}

/* A session that is done with its client (its end pipe at EOF) is ending. */
static void check_ending(struct table *t)
{
	for (unsigned q = 0; q < t->max; q++) {
		struct slot *sl = &t->s[q];
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

static void refuse_conn(struct table *t, int fd, const char *why, const struct pending *pend, unsigned npend)
{
	unsigned k = 0;
	while (k < REFUSERS_MAX && t->refusers[k] > 0)
		k++;
	if (k == REFUSERS_MAX)
		return;
	pid_t pid = fork();
	if (pid != 0) {
		if (pid > 0)
			t->refusers[k] = pid;
		return;
	}
	close_others(t, pend, npend);
	if (server_iperf3_first(fd, IP3_FIRST_WAIT_MS)) {
		server_iperf3_busy(fd);
	} else {
		struct txs_ctl_msg m = { .type = TXS_CTL_BUSY };
		snprintf(m.message, sizeof(m.message), "%s; try again later", why);
		char e[256];
		txs_ctl_write(fd, &m, 500, e, sizeof(e));
	}
	_exit(0);
}

/* Reap what has ended; 1 when a one-off session ended (*code set). */
static int reap_all(struct table *t, const struct server_cfg *c, FILE *logf, int *code)
{
	int ended = 0, st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (unsigned k = 0; k < REFUSERS_MAX; k++)
			if (t->refusers[k] == pid)
				t->refusers[k] = 0;
		for (unsigned i = 0; i < t->max; i++)
			if (t->s[i].pid == pid) {
				smet_end(&g_sm, t->s[i].id);
				slot_free(t, &t->s[i]);
				if (c->one_off) {
					*code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
					ended = 1;
				}
			}
	}
	double now = txs_mono_s();
	for (unsigned i = 0; i < t->max; i++)
		if (t->s[i].pid > 0 && now > t->s[i].deadline) {
			fprintf(logf, "txscale server: session %u (%s) ran past its bound: stopped\n", t->s[i].id,
				t->s[i].who);
			fflush(logf);
			kill(t->s[i].pid, SIGKILL);
			t->s[i].deadline = now + 3600; /* reaped above once it is gone */
		}
	return ended;
}

/* ---- the server process ------------------------------------------------------------------------- */

struct server {
	struct server_cfg cfg;
	struct txs_ctl_allow allow;
	uint8_t key[TXS_CTL_KEY_LEN];
	char exe[PATH_MAX];
	FILE *logf;
	int lfd;
	int ip3_lock; /* iperf3 tests share the control port number for their UDP streams: they take turns at the handshakes */
	struct table tab;
	struct pending pend[PENDING_MAX];
	unsigned npend;
	unsigned sessions;
};

/* The options' values that opt_parse cannot check. 0, or an exit status (said). */
static int server_check(struct server *sv)
{
	struct server_cfg *c = &sv->cfg;
	if (c->max_time <= 0 || c->max_time > TXS_CTL_MAX_SECONDS) {
		fprintf(stderr, "txscale server: bad value for --max-time: '%g': expected 0 < SEC <= %.0f\n", c->max_time,
			TXS_CTL_MAX_SECONDS);
		return 2;
	}
	if (c->ctl_timeout < 0.1 || c->ctl_timeout > 3600) {
		fprintf(stderr, "txscale server: bad value for --ctl-timeout: '%g': expected 0.1 to 3600 seconds\n",
			c->ctl_timeout);
		return 2;
	}
	if (!c->max_sessions) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		c->max_sessions = c->one_off ? 1 : n < 1 ? 1 : n > SESSIONS_MAX ? SESSIONS_MAX : (unsigned)n;
	}
	if (!c->max_per_client || c->max_per_client > c->max_sessions)
		c->max_per_client = c->max_sessions;
	char err[320];
	if (c->allow_dest && txs_ctl_allow_parse(&sv->allow, c->allow_dest, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale server: bad value for --allow-dest: '%s': %s\n", c->allow_dest, err);
		return 2;
	}
	if (c->auth_file) {
		int rc = txs_ctl_key_load(sv->key, c->auth_file);
		if (rc < 0) {
			fprintf(stderr, "txscale server: bad value for --auth-file: '%s': %s\n", c->auth_file,
				rc == -EINVAL ? "the file is empty" : rc == -EFBIG ? "over 4096 bytes" : strerror(-rc));
			return 2;
		}
	}
	if (c->bind) {
		struct txs_addr a;
		if (txs_addr_parse(&a, c->bind) < 0) {
			fprintf(stderr, "txscale server: bad value for -B/--bind: '%s': expected an IPv4 or IPv6 address\n",
				c->bind);
			return 2;
		}
	}
	ssize_t n = readlink("/proc/self/exe", sv->exe, sizeof(sv->exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "txscale server: cannot find this program (/proc/self/exe): %s\n", strerror(errno));
		return 1;
	}
	sv->exe[n] = 0;
	return 0;
}

/* In the session's own process: its CPUs, its state, the session; never returns. */
static void session_child(struct server *sv, struct slot *sl, int fd, const struct pending *pe, int ep_w)
{
	const struct server_cfg *c = &sv->cfg;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (sl->n_cpu) { /* the session's workers run on its share of the CPUs */
		cpu_set_t mine_set;
		CPU_ZERO(&mine_set);
		for (unsigned q = 0; q < sl->n_cpu; q++)
			CPU_SET(sl->cpu[q], &mine_set);
		sched_setaffinity(0, sizeof(mine_set), &mine_set);
	}
	struct sess *s = calloc(1, sizeof(*s));
	if (!s)
		_exit(1);
	uint16_t port;
	s->cfg = c;
	s->sm = &g_sm;
	s->allow = c->allow_dest ? &sv->allow : NULL;
	s->key = c->auth_file ? sv->key : NULL;
	s->fd = fd;
	s->id = sl->id;
	sa_to_addr(&pe->peer, &s->client, &port);
	sa_to_addr(&pe->me, &s->local, &port);
	s->client_sa = pe->peer;
	s->local_sa = pe->me;
	s->stream_lock = -1;
	if (sv->ip3_lock >= 0) { /* its own open file: flock() then tells sessions apart */
		char lp[64];
		snprintf(lp, sizeof(lp), "/proc/self/fd/%d", sv->ip3_lock);
		s->stream_lock = open(lp, O_RDONLY | O_CLOEXEC);
		close(sv->ip3_lock);
	}
	snprintf(s->client_s, sizeof(s->client_s), "%s", sl->who);
	txs_addr_str(&s->local, s->local_s, sizeof(s->local_s));
	snprintf(s->exe, sizeof(s->exe), "%s", sv->exe);
	int scode = 1;
	if (txs_paths_make(&s->p, "server") < 0) {
		server_refuse(s, "cannot make a temporary directory: %s", strerror(errno));
	} else {
		snprintf(s->peer_json, sizeof(s->peer_json), "%s/peer.json", s->p.dir);
		scode = server_session(s);
		close(fd);
		fd = -1;
		if (ep_w >= 0)
			close(ep_w);
		unlink(s->peer_json);
		char tmp[PATH_MAX + 8];
		snprintf(tmp, sizeof(tmp), "%s.tmp", s->peer_json);
		unlink(tmp);
		txs_paths_remove(&s->p);
	}
	if (fd >= 0)
		close(fd);
	fflush(NULL);
	_exit(scode);
}

/* A session for an admitted connection (pe, already out of the pending list): its slot, its process. */
static void session_start(struct server *sv, const struct pending *pe, const char *who)
{
	struct table *tab = &sv->tab;
	int fd = pe->fd;
	struct slot *sl = NULL;
	for (unsigned f = 0; f < tab->max && !sl; f++)
		if (tab->s[f].pid == 0)
			sl = &tab->s[f];
	sv->sessions++;
	sl->id = sv->sessions;
	uint16_t port;
	sa_to_addr(&pe->peer, &sl->client, &port);
	snprintf(sl->who, sizeof(sl->who), "%s", who);
	cpus_take(tab, sl);
	fflush(NULL);
	int ep[2]; /* the child closes its end when its session is done with the client */
	if (pipe2(ep, O_CLOEXEC | O_NONBLOCK) < 0)
		ep[0] = ep[1] = -1;
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "txscale server: fork: %s\n", strerror(errno));
		close(fd);
		if (ep[0] >= 0) {
			close(ep[0]);
			close(ep[1]);
		}
		for (unsigned q = 0; q < sl->n_cpu; q++)
			tab->load[sl->cpu[q]]--;
		memset(sl, 0, sizeof(*sl));
		return;
	}
	if (pid == 0) {
		close(sv->lfd);
		close_others(tab, sv->pend, sv->npend);
		if (ep[0] >= 0)
			close(ep[0]);
		session_child(sv, sl, fd, pe, ep[1]);
	}
	close(fd);
	if (ep[1] >= 0)
		close(ep[1]);
	sl->ep = ep[0];
	sl->pid = pid;
	tab->active++;
	smet_begin(&g_sm, sl->id, who);
	/* every wait in a session is bounded; this bounds their sum, in case */
	sl->deadline = txs_mono_s() + 4 * (sv->cfg.max_time + sv->cfg.ctl_timeout) + 120;
}

/* Pending connection k: admitted, refused busy, or left waiting. Returns the next index to look at. */
static unsigned admit(struct server *sv, unsigned k)
{
	const struct server_cfg *c = &sv->cfg;
	struct table *tab = &sv->tab;
	struct pending pe = sv->pend[k];
	struct txs_addr pa;
	uint16_t pport;
	sa_to_addr(&pe.peer, &pa, &pport);
	char who[INET6_ADDRSTRLEN + 8], ab[INET6_ADDRSTRLEN];
	snprintf(who, sizeof(who), "%s", txs_addr_str(&pa, ab, sizeof(ab)));
	char why[200] = "";
	unsigned mine = from_client(tab, &pa), ending = 0, mine_ending = 0;
	for (unsigned q = 0; q < tab->max; q++)
		if (tab->s[q].pid > 0 && tab->s[q].ending) {
			ending++;
			mine_ending += addr_eq(&tab->s[q].client, &pa);
		}
	/* a session whose client has gone ends in a moment: the newcomer waits for it (bounded),
	 * and any newcomer gives a session whose client has just left time to notice */
	bool soon = !(c->one_off && sv->sessions) && tab->active - ending < tab->max &&
		    mine - mine_ending < tab->per_client;
	bool full = (c->one_off && sv->sessions) || tab->active >= tab->max, over = mine >= tab->per_client;
	double waited = txs_mono_s() - pe.t;
	if ((full || over) && (soon || waited < PENDING_GRACE_S) && waited < PENDING_S)
		return k + 1;
	sv->pend[k] = sv->pend[--sv->npend];
	if (full) {
		smet_refused(&g_sm, SMET_REF_SESSIONS);
		snprintf(why, sizeof(why), "%u session%s run%s, this server's most (--max-sessions %u)", tab->active,
			 tab->active == 1 ? "" : "s", tab->active == 1 ? "s" : "", tab->max);
	} else if (over) {
		smet_refused(&g_sm, SMET_REF_PER_CLIENT);
		snprintf(why, sizeof(why), "%u session%s from %s run%s, the most per client "
			 "(--max-sessions-per-client %u)", mine, mine == 1 ? "" : "s", who,
			 mine == 1 ? "s" : "", tab->per_client);
	}
	if (why[0]) {
		fprintf(sv->logf, "txscale server: %s: busy (session %u refused: %s)\n", who, sv->sessions + 1, why);
		fflush(sv->logf);
		fflush(NULL);
		refuse_conn(tab, pe.fd, why, sv->pend, sv->npend);
		close(pe.fd);
		return k;
	}
	session_start(sv, &pe, who);
	return k;
}

/* Listen, and the session table on this server's CPUs. 0, or an exit status (said). */
static int server_open(struct server *sv)
{
	const struct server_cfg *c = &sv->cfg;
	char err[320];
	int rc = smet_start(&g_sm, &c->metrics, c->max_sessions);
	if (rc)
		return rc;
	sv->lfd = listen_on(c, err, sizeof(err));
	if (sv->lfd < 0) {
		smet_stop(&g_sm);
		fprintf(stderr, "txscale server: %s\n", err);
		return sv->lfd == -EADDRNOTAVAIL ? 2 : 1;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sv->logf = c->json ? stderr : stdout;
	fprintf(sv->logf, "txscale server: listening on %s port %u (TCP control)%s%s, %s%s\n", c->bind ? c->bind : "*",
		c->control_port, c->auth_file ? ", shared secret" : "",
		c->allow_dest ? ", may send to the client and --allow-dest" : ", sends only to its client",
		c->one_off ? "one session" : "sessions at once: ", c->one_off ? "" : fmt_sessions(c));
	fflush(sv->logf);
	sv->tab = (struct table){ .max = c->max_sessions, .per_client = c->max_per_client };
	sv->tab.s = calloc(sv->tab.max, sizeof(*sv->tab.s));
	if (!sv->tab.s) {
		close(sv->lfd);
		smet_stop(&g_sm);
		fprintf(stderr, "txscale server: out of memory\n");
		return 1;
	}
	cpu_set_t cset;
	CPU_ZERO(&cset);
	if (sched_getaffinity(0, sizeof(cset), &cset) == 0)
		for (int q = 0; q < CPU_SETSIZE; q++)
			if (CPU_ISSET(q, &cset))
				sv->tab.allowed[sv->tab.n_allowed++] = q;
	sv->ip3_lock = memfd_create("txscale-server-streams", MFD_CLOEXEC);
	return 0;
}

/* Accept one waiting connection into the pending list. */
static void accept_one(struct server *sv)
{
	struct pending *np = &sv->pend[sv->npend];
	socklen_t pl = sizeof(np->peer), ml = sizeof(np->me);
	int afd = accept4(sv->lfd, (struct sockaddr *)&np->peer, &pl, SOCK_CLOEXEC);
	if (afd >= 0) {
		getsockname(afd, (struct sockaddr *)&np->me, &ml);
		np->fd = afd;
		np->t = txs_mono_s();
		sv->npend++;
	}
}

/* Until a signal (or a one-off's end): accept, admit, reap. The exit status. */
static int server_loop(struct server *sv)
{
	const struct server_cfg *c = &sv->cfg;
	double t_start = txs_mono_s();
	while (!g_stop) {
		int code;
		smet_tick(&g_sm, txs_mono_s() - t_start);
		if (reap_all(&sv->tab, c, sv->logf, &code) && c->one_off)
			return code;
		if (c->one_off && sv->sessions && sv->tab.active == 0)
			break;
		check_ending(&sv->tab);
		struct pollfd pf = { .fd = sv->npend < PENDING_MAX ? sv->lfd : -1, .events = POLLIN };
		if (poll(&pf, 1, sv->npend ? 10 : 100) > 0 && sv->npend < PENDING_MAX)
			accept_one(sv);
		reap_all(&sv->tab, c, sv->logf, &code);
		check_ending(&sv->tab);
		for (unsigned k = 0; k < sv->npend;)
			k = admit(sv, k);
	}
	return 0;
}

int cmd_server(int argc, char **argv)
{
	struct server *sv = calloc(1, sizeof(*sv));
	if (!sv)
		return 1;
	const char *pos[1];
	int npos = 0;
	static const char *syn = "[-B ADDR] [--control-port PORT] [-1] [--max-sessions N] [--auth-file FILE] [--allow-dest LIST] [--metrics ADDR:PORT]";
	const char *name = strcmp(argv[0], "recv") == 0 ? "recv -s" : "server";
	int rc = opt_parse(name, syn, server_opts, &sv->cfg, argc, argv, pos, 0, &npos);
	if (rc) {
		free(sv);
		return rc == 1 ? 0 : 2;
	}
	rc = server_check(sv);
	if (!rc)
		rc = server_open(sv);
	if (rc) {
		free(sv);
		return rc;
	}
	int ret = server_loop(sv);
	for (unsigned i = 0; i < sv->tab.max; i++)
		if (sv->tab.s[i].pid > 0)
			txs_stop_child(sv->tab.s[i].pid, g_stop ? 0 : 5, NULL);
	for (unsigned k = 0; k < REFUSERS_MAX; k++)
		if (sv->tab.refusers[k] > 0)
			txs_stop_child(sv->tab.refusers[k], 1, NULL);
	for (unsigned k = 0; k < sv->npend; k++)
		close(sv->pend[k].fd);
	int code_unused = 0;
	reap_all(&sv->tab, &sv->cfg, sv->logf, &code_unused);
	smet_stop(&g_sm);
	free(sv->tab.s);
	if (sv->ip3_lock >= 0)
		close(sv->ip3_lock);
	close(sv->lfd);
	if (g_stop)
		fprintf(sv->logf, "txscale server: stopped after %u session%s\n", sv->sessions, sv->sessions == 1 ? "" : "s");
	free(sv);
	return ret;
}
