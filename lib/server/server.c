/* SPDX-License-Identifier: MIT */
/* The server (txscale/server.h): its config, the listener, the accept loop
 * and the end. Admission and the session table are admit.c's, a session's
 * process session.c's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/err.h"
#include "ctl/ctl_priv.h"
#include "pkt/sockaddr.h"
#include "server_priv.h"
#include <txscale/stamp.h>
#include <sodium.h>

TXS_API void txs_server_conf_init(struct txs_server_conf *c)
{
	*c = (struct txs_server_conf){ .control_port = TXS_CTL_PORT, .max_time = 300, .ctl_timeout = 10, .stamp_port = -1,
				       .iperf2_port = TXS_SERVER_IP2_PORT };
}

/* The checks, into sv when not NULL: the allowed destinations, the key. */
static int check(const struct txs_server_conf *c, struct txs_server *sv, char *err, size_t errlen)
{
	if (!(c->max_time > 0) || c->max_time > TXS_CTL_MAX_SECONDS)
		return txs_fail(err, errlen, -EINVAL, "bad value for --max-time: '%g': expected 0 < SEC <= %.0f",
				c->max_time, TXS_CTL_MAX_SECONDS);
	if (!(c->ctl_timeout >= 0.1) || c->ctl_timeout > 3600)
		return txs_fail(err, errlen, -EINVAL, "bad value for --ctl-timeout: '%g': expected 0.1 to 3600 seconds",
				c->ctl_timeout);
	if (c->max_sessions > TXS_SERVER_SESSIONS_MAX || c->max_per_client > TXS_SERVER_SESSIONS_MAX)
		return txs_fail(err, errlen, -EINVAL, "bad value for --max-sessions%s: '%u': expected 1..%u",
				c->max_sessions > TXS_SERVER_SESSIONS_MAX ? "" : "-per-client",
				c->max_sessions > TXS_SERVER_SESSIONS_MAX ? c->max_sessions : c->max_per_client,
				TXS_SERVER_SESSIONS_MAX);
	if (c->stamp_port < -1 || c->stamp_port > 65535)
		return txs_fail(err, errlen, -EINVAL, "bad value for --stamp: '%d': expected a UDP port 0..65535",
				c->stamp_port);
	if (c->iperf2_port < -1 || c->iperf2_port > 65535)
		return txs_fail(err, errlen, -EINVAL, "bad value for --iperf2-port: '%d': expected a UDP port 0..65535",
				c->iperf2_port);
	if (c->stamp_threads > 64)
		return txs_fail(err, errlen, -EINVAL, "bad value for --stamp-threads: '%u': expected 1..64",
				c->stamp_threads);
	struct txs_ctl_allow allow = { 0 };
	uint8_t key[TXS_CTL_KEY_LEN] = { 0 };
	char why[320];
	if (c->allow_dest && txs_ctl_allow_parse(&allow, c->allow_dest, why, sizeof(why)) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --allow-dest: '%s': %s", c->allow_dest, why);
	if (c->auth_file) {
		int rc = txs_ctl_key_load(key, c->auth_file);
		if (rc < 0)
			return txs_fail(err, errlen, -EINVAL, "bad value for --auth-file: '%s': %s", c->auth_file,
					txs_ctl_key_why(rc));
	}
	struct txs_addr a;
	if (c->bind && txs_addr_parse(&a, c->bind) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for -B/--bind: '%s': expected an IPv4 or IPv6 address",
				c->bind);
	if (sv) {
		sv->allow = allow;
		memcpy(sv->key, key, sizeof(key));
	}
	return 0;
}

TXS_API int txs_server_conf_check(const struct txs_server_conf *c, char *err, size_t errlen)
{
	return check(c, NULL, err, errlen);
}

static void say(void (*fn)(void *, const char *), void *user, const char *fmt, va_list ap)
{
	char line[1024];
	vsnprintf(line, sizeof(line), fmt, ap);
	if (fn)
		fn(user, line);
}

void txs_srv_log(const struct txs_server *sv, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(sv->h.log, sv->h.user, fmt, ap);
	va_end(ap);
}

void txs_srv_msg(const struct txs_server *sv, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(sv->h.msg, sv->h.user, fmt, ap);
	va_end(ap);
}

void txs_srv_sa_addr(const struct sockaddr_storage *ss, struct txs_addr *a, uint16_t *port)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		a->family = AF_INET;
		a->v4 = s4->sin_addr;
		*port = ntohs(s4->sin_port);
		return;
	}
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


/* ---- the listener ------------------------------------------------------------------------------ */

static int listen_on(struct txs_server *sv, char *err, size_t errlen)
{
	const struct txs_server_conf *c = &sv->c;
	struct txs_addr a; /* c->bind (checked), else IPv6 any, else (no IPv6 here) IPv4 any */
	int fam = c->bind && txs_addr_parse(&a, c->bind) == 0 ? a.family : AF_INET6;
	int fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && !c->bind) {
		fam = AF_INET;
		fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0)
		return txs_fail(err, errlen, -errno, "socket: %s", strerror(errno));
	struct sockaddr_storage ss;
	socklen_t sl = txs_sockaddr_set(&ss, fam, c->bind ? &a : NULL, c->control_port);
	int one = 1, zero = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fam == AF_INET6 && !c->bind)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 8) < 0) {
		int e = errno;
		close(fd);
		/* an address this host does not have is the user's to fix */
		if (e == EADDRNOTAVAIL)
			return txs_fail(err, errlen, -EINVAL, "bad value for --bind: '%s': this host has no such address "
					"(cannot listen on it, port %u: %s)", c->bind, c->control_port, strerror(e));
		return txs_fail(err, errlen, -e, "cannot listen on %s port %u: %s", c->bind ? c->bind : "*",
				c->control_port, strerror(e));
	}
	sl = sizeof(ss);
	uint16_t port = c->control_port;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		txs_srv_sa_addr(&ss, &a, &port);
	sv->port = port;
	sv->lfd = fd;
	return 0;
}

/* ---- the STAMP reflector beside the control port (--stamp) ------------------------------------- */

static int stamp_start(struct txs_server *sv, char *err, size_t errlen)
{
	const struct txs_server_conf *c = &sv->c;
	if (c->stamp_port < 0)
		return 0;
	struct txs_stamp_refl_conf rc = { .bind = c->bind, .port = (uint16_t)c->stamp_port,
					  .stateless = c->stamp_stateless, .threads = c->stamp_threads };
	char why[256] = "";
	int e;
	if (c->stamp_auth_file && (e = txs_stamp_key_load(&rc.key, c->stamp_auth_file)))
		return txs_fail(err, errlen, -EINVAL, "bad value for --stamp-auth-file: '%s': %s", c->stamp_auth_file,
				e == -EINVAL ? "empty" : e == -E2BIG ? "longer than 256 bytes" : strerror(-e));
	e = txs_stamp_refl_open(&rc, &sv->stamp, why, sizeof(why));
	sodium_memzero(&rc.key, sizeof(rc.key));
	if (e)
		return txs_fail(err, errlen, e, "--stamp: %s", why[0] ? why : strerror(-e));
	if ((e = txs_stamp_refl_start(sv->stamp)))
		return txs_fail(err, errlen, e, "--stamp: starting its threads: %s", strerror(-e));
	if (sv->sm.life &&
	    txs_metrics_add(txs_metrics_life_registry(sv->sm.life), txs_stamp_refl_collect, sv->stamp, NULL, 0) < 0)
		return txs_fail(err, errlen, -ENOMEM, "metrics: out of memory");
	txs_srv_log(sv, "STAMP reflector on %s port %u (UDP), %s%s, %u thread%s", c->bind ? c->bind : "*",
		    txs_stamp_refl_port(sv->stamp), c->stamp_stateless ? "stateless" : "stateful",
		    c->stamp_auth_file ? ", authenticated" : "",
		    c->stamp_threads ? c->stamp_threads : 1, c->stamp_threads > 1 ? "s" : "");
	return 0;
}

TXS_API uint16_t txs_server_stamp_port(const struct txs_server *s)
{
	return s->stamp ? txs_stamp_refl_port(s->stamp) : 0;
}

/* ---- open, run, stop, close -------------------------------------------------------------------- */

TXS_API int txs_server_open(struct txs_server **out, const struct txs_server_conf *c,
			    const struct txs_server_hooks *hooks, char *err, size_t errlen)
{
	*out = NULL;
	struct txs_server *sv = calloc(1, sizeof(*sv));
	if (!sv)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	sv->c = *c;
	sv->lfd = sv->ip3_lock = -1;
	if (hooks)
		sv->h = *hooks;
	int rc = check(c, sv, err, errlen);
	if (rc) {
		free(sv);
		return rc;
	}
	struct txs_server_conf *r = &sv->c;
	if (!r->max_sessions) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n < TXS_SERVER_SESSIONS_DEFAULT)
			n = TXS_SERVER_SESSIONS_DEFAULT;
		r->max_sessions = r->one_off ? 1 : n > TXS_SERVER_SESSIONS_MAX ? TXS_SERVER_SESSIONS_MAX : (unsigned)n;
	}
	if (!r->max_per_client || r->max_per_client > r->max_sessions)
		r->max_per_client = r->max_sessions;
	if ((rc = txs_srv_metrics_start(sv, err, errlen)) || (rc = listen_on(sv, err, errlen))) {
		txs_server_close(sv);
		return rc;
	}
	if ((rc = stamp_start(sv, err, errlen))) {
		txs_server_close(sv);
		return rc;
	}
	char lim[96];
	snprintf(lim, sizeof(lim), "at most %u (%u per client)", r->max_sessions, r->max_per_client);
	txs_srv_log(sv, "listening on %s port %u (TCP control)%s%s, %s%s", r->bind ? r->bind : "*", sv->port,
		    r->auth_file ? ", shared secret" : "",
		    r->allow_dest ? ", may send to the client and --allow-dest" : ", sends only to its client",
		    r->one_off ? "one session" : "sessions at once: ", r->one_off ? "" : lim);
	if ((rc = txs_srv_ip2_start(sv, err, errlen))) {
		txs_server_close(sv);
		return rc;
	}
	sv->slot = calloc(r->max_sessions, sizeof(*sv->slot));
	if (!sv->slot) {
		txs_server_close(sv);
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	}
	cpu_set_t cset;
	CPU_ZERO(&cset);
	if (sched_getaffinity(0, sizeof(cset), &cset) == 0)
		for (int q = 0; q < CPU_SETSIZE; q++)
			if (CPU_ISSET(q, &cset))
				sv->allowed[sv->n_allowed++] = q;
	sv->ip3_lock = memfd_create("txscale-server-streams", MFD_CLOEXEC);
	*out = sv;
	return 0;
}

TXS_API uint16_t txs_server_port(const struct txs_server *s)
{
	return s->port;
}

TXS_API uint16_t txs_server_iperf2_port(const struct txs_server *s)
{
	return txs_srv_ip2_port(s);
}

/* Accept one waiting connection into the pending list. */
static void accept_one(struct txs_server *sv)
{
	struct txs_srv_pending *np = &sv->pend[sv->npend];
	socklen_t pl = sizeof(np->peer), ml = sizeof(np->me);
	int afd = accept4(sv->lfd, (struct sockaddr *)&np->peer, &pl, SOCK_CLOEXEC);
	if (afd >= 0) {
		txs_ctl_nodelay(afd); /* both protocols: a state byte leaves when written (lib/ctl/ctl_priv.h) */
		getsockname(afd, (struct sockaddr *)&np->me, &ml);
		np->fd = afd;
		np->t = txs_mono_s();
		np->told = false;
		sv->npend++;
	}
}

/* Until stopped (or a one-off's end): accept, admit, reap. The exit status. */
static int loop(struct txs_server *sv)
{
	double t_start = txs_mono_s();
	bool one_off = sv->c.one_off;
	while (!__atomic_load_n(&sv->stop, __ATOMIC_RELAXED)) {
		int code;
		txs_srv_metrics_tick(&sv->sm, txs_mono_s() - t_start);
		if (txs_srv_reap(sv, &code) && one_off)
			return code;
		if (one_off && sv->sessions && sv->active == 0)
			break;
		txs_srv_check_ending(sv);
		struct pollfd pf = { .fd = sv->npend < TXS_SRV_PENDING_MAX ? sv->lfd : -1, .events = POLLIN };
		if (poll(&pf, 1, sv->npend ? 10 : 100) > 0 && sv->npend < TXS_SRV_PENDING_MAX)
			accept_one(sv);
		if (txs_srv_reap(sv, &code) && one_off)
			return code;
		txs_srv_check_ending(sv);
		txs_srv_ip2_drain(sv);
		for (unsigned k = 0; k < sv->npend;)
			k = txs_srv_admit(sv, k);
	}
	return 0;
}

TXS_API int txs_server_run(struct txs_server *sv)
{
	if (sv->ran)
		return 1;
	sv->ran = true;
	int ret = loop(sv);
	bool stopped = __atomic_load_n(&sv->stop, __ATOMIC_RELAXED);
	txs_srv_ip2_stop(sv);
	for (unsigned i = 0; i < sv->c.max_sessions; i++)
		if (sv->slot[i].pid > 0) {
			if (stopped) /* its summaries will not come: say so, where the session's own lines are */
				txs_srv_log(sv, "session %u (%s): stopped with the server (a test it was running "
					    "ends without summaries)", sv->slot[i].id, sv->slot[i].who);
			txs_stop_child(sv->slot[i].pid, stopped ? 0 : 5, NULL); /* reaps it */
			txs_srv_slot_ended(sv, &sv->slot[i]);
		}
	for (unsigned k = 0; k < TXS_SRV_REFUSERS_MAX; k++)
		if (sv->refusers[k] > 0) {
			txs_stop_child(sv->refusers[k], 1, NULL);
			sv->refusers[k] = 0;
		}
	for (unsigned k = 0; k < sv->npend; k++)
		close(sv->pend[k].fd);
	sv->npend = 0;
	__atomic_store_n(&sv->lingering, 1, __ATOMIC_RELAXED);
	txs_metrics_life_end(sv->sm.life); /* the last file (no session running), the linger */
	txs_srv_metrics_stop(&sv->sm);
	if (sv->stamp) { /* --stamp: what the reflector did, as stamp reflect says at its exit */
		struct txs_stamp_refl_stats st;
		txs_stamp_refl_stats(sv->stamp, &st);
		char *b = NULL;
		size_t bl = 0;
		FILE *f = open_memstream(&b, &bl);
		if (f) {
			txs_stamp_refl_write(&st, false, f);
			if (fclose(f) == 0) {
				while (bl && b[bl - 1] == '\n')
					b[--bl] = 0;
				txs_srv_log(sv, "%s", b);
			}
			free(b);
		}
	}
	if (stopped)
		txs_srv_log(sv, "stopped after %u session%s", sv->sessions, sv->sessions == 1 ? "" : "s");
	return ret;
}

void txs_srv_publish(struct txs_server *sv)
{
	__atomic_store_n(&sv->pub.sessions, sv->sessions, __ATOMIC_RELAXED);
	__atomic_store_n(&sv->pub.active, sv->active, __ATOMIC_RELAXED);
	__atomic_store_n(&sv->pub.refused, sv->n_refused, __ATOMIC_RELAXED);
}

TXS_API void txs_server_counts(const struct txs_server *s, struct txs_server_counts *out)
{
	out->sessions = __atomic_load_n(&s->pub.sessions, __ATOMIC_RELAXED);
	out->active = __atomic_load_n(&s->pub.active, __ATOMIC_RELAXED);
	out->refused = __atomic_load_n(&s->pub.refused, __ATOMIC_RELAXED);
}

TXS_API bool txs_server_stamp_stats(const struct txs_server *s, struct txs_stamp_refl_stats *out)
{
	if (!s->stamp)
		return false;
	txs_stamp_refl_stats(s->stamp, out);
	return true;
}

TXS_API void txs_server_stop(struct txs_server *s)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&s->lingering, __ATOMIC_RELAXED))
		txs_metrics_life_stop(s->sm.life);
}

TXS_API void txs_server_close(struct txs_server *sv)
{
	if (!sv)
		return;
	txs_srv_metrics_stop(&sv->sm);
	txs_metrics_life_close(sv->sm.life); /* no scrape reads the reflector's counters after this */
	txs_stamp_refl_close(sv->stamp);
	txs_srv_ip2_stop(sv);
	free(sv->slot);
	if (sv->ip3_lock >= 0)
		close(sv->ip3_lock);
	if (sv->lfd >= 0)
		close(sv->lfd);
	free(sv);
}
