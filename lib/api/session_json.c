/* SPDX-License-Identifier: MIT */
/* The JSON session boundary (txscale/session_json.h): a config object whose
 * keys are the option table's long names (opt.h); the send and receive
 * sessions, the no-drop-rate search (ndr_sess.c) and the server
 * (lib/server) run on a thread of our own; a stats snapshot from any
 * thread, the summary line at the end. The server's sessions are processes
 * of their own: what they log and the summaries they make come back over a
 * socket pair (one datagram each) that a second thread of ours reads. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <txscale/server.h>
#include <txscale/stamp.h>
#include <txscale/session_json.h>
#include <txscale/session_send.h>
#include <txscale/session_recv.h>
#include <txscale/json.h>
#include "common/clock.h"
#include "common/err.h"
#include "server/opts.h"
#include "session/ndr_sess.h"
#include "session/opt.h"

#define MSGS_MAX (1u << 20)      /* the run's notes kept (a server's log: the newest) */
#define SUMMARIES_MAX 1000       /* a server's test summaries kept for its summary (the newest) */
#define SRV_DGRAM_MAX (4u << 20) /* one line from a server's process */

enum kind { K_SEND, K_RECV, K_NDR, K_SERVER };
enum state { ST_NEW, ST_RUNNING, ST_DONE };

static const char *const kind_names[] = { "send", "recv", "ndr", "server", NULL };

struct txs_session {
	enum kind kind;
	json_t *root;               /* the config: its strings are the options' values */
	char **vals;                /* numbers and booleans as text, for the same */
	unsigned n_vals;
	atomic_int stop;
	pthread_t thr;
	bool started;               /* the thread exists (joined in free) */
	pthread_mutex_t mu;         /* the fields below */
	pthread_cond_t cv;
	enum state state;
	int rc;                     /* the run's */
	char *summary;              /* malloc'd, no newline */
	char *msgs;                 /* the run's notes and problems, lines */
	size_t msgs_len;
	double seconds;             /* elapsed, from the hooks */
	unsigned n_rows;
	struct txs_stat_row rows[TXS_MAX_CORES]; /* send: per thread, running totals */
	/* send */
	struct txs_send_args sa;
	struct txs_send_conf sc;
	struct txs_send *snd;
	/* recv */
	struct txs_recv_args ra;
	struct txs_recv *rcv;
	/* ndr */
	struct txs_ndr_args na;
	char exe[PATH_MAX];          /* the txscale program its trials run */
	volatile sig_atomic_t ndr_stop;
	unsigned ndr_trials;         /* under mu */
	char *ndr_last;              /* the last trial's line, under mu */
	/* server */
	struct txs_server_args va;
	struct txs_server *srv;
	int sock[2];                 /* [1]: every process of the server writes; [0]: our reader */
	pthread_t reader;
	bool reader_on;
	int reader_done;             /* atomic: the server has returned, drain and end */
	double t_start;              /* txs_mono_s() at start, under mu */
	uint64_t n_summaries;        /* under mu */
	char *summaries[SUMMARIES_MAX]; /* ring of the newest, under mu */
};

const char *const *txs_session_kinds(void)
{
	return kind_names;
}

/* ---- the config ------------------------------------------------------------------------- */

static const struct txs_opt *kind_table(enum kind k)
{
	switch (k) {
	case K_SEND:
		return txs_send_opt_table();
	case K_RECV:
		return txs_recv_opt_table();
	case K_NDR:
		return txs_ndr_opt_table();
	default:
		return txs_server_opt_table();
	}
}

static void *kind_args(struct txs_session *s)
{
	switch (s->kind) {
	case K_SEND:
		return &s->sa;
	case K_RECV:
		return &s->ra;
	case K_NDR:
		return &s->na;
	default:
		return &s->va;
	}
}

static bool has_dest(enum kind k)
{
	return k == K_SEND || k == K_NDR;
}

static const char *keep(struct txs_session *s, const char *text)
{
	char **v = realloc(s->vals, sizeof(*v) * (s->n_vals + 1));
	if (!v)
		return NULL;
	s->vals = v;
	if (!(v[s->n_vals] = strdup(text)))
		return NULL;
	return v[s->n_vals++];
}

/* One key and its value into the kind's args. */
static int apply_key(struct txs_session *s, void *args, const char *key, json_t *v, char *err, size_t errlen)
{
	const char *kn = kind_names[s->kind];
	if (has_dest(s->kind) && strcmp(key, "dest") == 0) {
		if (!json_is_string(v) || !*json_string_value(v))
			return txs_fail(err, errlen, -EINVAL, "bad value for dest: expected an address or host name string");
		if (s->kind == K_SEND)
			s->sa.dest = json_string_value(v);
		else
			s->na.dest = json_string_value(v);
		return 0;
	}
	const struct txs_opt *o = txs_opt_find(kind_table(s->kind), key);
	if (!o && s->kind == K_NDR && (!strcmp(key, "remote") || !strcmp(key, "control-port") || !strcmp(key, "auth-file")))
		return txs_fail(err, errlen, -EINVAL, "--%s is not an ndr session's: a search against a txscale server "
				"runs with `txscale ndr --remote HOST`", key);
	if (!o)
		return txs_fail(err, errlen, -EINVAL, "unknown option '%s' for a%s %s session (its keys: "
				"txs_session_options_json(\"%s\"), in Python txscale.options(\"%s\"); of txscale %s --help, the "
				"output, file, metrics and control-channel options are the CLI's)", key,
				s->kind == K_NDR ? "n" : "", kn, kn, kn, kn);
	char buf[64];
	const char *val;
	if (!txs_opt_takes_value(o) && !json_is_boolean(v))
		return txs_fail(err, errlen, -EINVAL, "bad value for --%s: a flag takes true or false", key);
	switch (json_typeof(v)) {
	case JSON_STRING:
		val = json_string_value(v);
		break;
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		val = buf;
		break;
	case JSON_REAL:
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		val = buf;
		break;
	case JSON_TRUE:
		if (!txs_opt_takes_value(o))
			return txs_opt_apply(o, args, NULL, false, err, errlen);
		val = o->implicit ? o->implicit : "true";
		break;
	case JSON_FALSE:
		if (!txs_opt_takes_value(o))
			return 0; /* a flag left off */
		val = "false";
		break;
	default:
		return txs_fail(err, errlen, -EINVAL, "bad value for --%s: expected a string, a number or a boolean, not %s",
				key, json_is_null(v) ? "null" : json_is_array(v) ? "an array" : "an object");
	}
	if (val == buf && !(val = keep(s, buf)))
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	return txs_opt_apply(o, args, val, false, err, errlen);
}

static int parse_config(struct txs_session *s, const char *text, char *err, size_t errlen)
{
	json_error_t je;
	s->root = json_loads(text ? text : "{}", JSON_REJECT_DUPLICATES, &je);
	if (!s->root)
		return txs_fail(err, errlen, -EINVAL, "config: bad JSON at line %d column %d: %s", je.line, je.column,
				je.text);
	if (!json_is_object(s->root))
		return txs_fail(err, errlen, -EINVAL, "config: expected a JSON object of options, e.g. {\"time\": 5}");
	void *args = kind_args(s);
	if (s->kind == K_RECV)
		txs_recv_args_init(&s->ra);
	if (s->kind == K_SERVER)
		txs_server_args_init(&s->va);
	int rc = txs_opt_defaults(kind_table(s->kind), args, err, errlen);
	const char *key;
	json_t *v;
	json_object_foreach(s->root, key, v) {
		if (rc < 0)
			break;
		rc = apply_key(s, args, key, v, err, errlen);
	}
	return rc;
}

/* ---- the messages of a run ------------------------------------------------------------- */

static void add_msg(struct txs_session *s, const char *line, size_t len)
{
	pthread_mutex_lock(&s->mu);
	if (s->msgs_len + len > MSGS_MAX && s->msgs) {
		/* a long run's log: the newest half stays, from a line's start */
		char *cut = strchr(s->msgs + s->msgs_len / 2, '\n');
		size_t drop = cut ? (size_t)(cut + 1 - s->msgs) : s->msgs_len;
		memmove(s->msgs, s->msgs + drop, s->msgs_len - drop + 1);
		s->msgs_len -= drop;
	}
	if (len > MSGS_MAX)
		len = MSGS_MAX;
	char *m = realloc(s->msgs, s->msgs_len + len + 2);
	if (m) {
		memcpy(m + s->msgs_len, line, len);
		s->msgs_len += len;
		if (len && line[len - 1] != '\n')
			m[s->msgs_len++] = '\n';
		m[s->msgs_len] = 0;
		s->msgs = m;
	}
	pthread_mutex_unlock(&s->mu);
}

static void on_note(void *user, const char *line)
{
	add_msg(user, line, strlen(line));
}

static void on_link(void *user, unsigned link, const char *ifname, bool up, enum txs_link_why why, int e)
{
	(void)why;
	char line[256];
	int n = snprintf(line, sizeof(line), "link %u (%s) %s%s%s", link, ifname, up ? "up" : "down", e ? ": " : "",
			 e ? txs_strerror(e) : "");
	add_msg(user, line, n > 0 ? (size_t)n : 0);
}

/* ---- the run, on our thread -------------------------------------------------------------- */

static bool hook_stop(void *user)
{
	return atomic_load_explicit(&((struct txs_session *)user)->stop, memory_order_relaxed) != 0;
}

static void send_poll(void *user, const struct txs_send_tick *t)
{
	struct txs_session *s = user;
	pthread_mutex_lock(&s->mu);
	s->seconds = t->now;
	memcpy(s->rows, t->threads, sizeof(*s->rows) * s->n_rows);
	pthread_mutex_unlock(&s->mu);
}

static void recv_tick(void *user, double el)
{
	struct txs_session *s = user;
	pthread_mutex_lock(&s->mu);
	s->seconds = el;
	pthread_mutex_unlock(&s->mu);
}

static void recv_msg(void *user, const char *line)
{
	add_msg(user, line, strlen(line));
}

/* What a writer wrote to a memory stream: its last line, without newline. */
static char *last_line(char *buf, size_t len)
{
	while (len && buf[len - 1] == '\n')
		buf[--len] = 0;
	char *nl = memrchr(buf, '\n', len);
	return strdup(nl ? nl + 1 : buf);
}

/* What a writer writes into a memory stream, its last line (NULL: no memory). */
#define MEM_LINE(out, stmt)                                                                                         \
	do {                                                                                                        \
		char *mb_ = NULL;                                                                                   \
		size_t ml_ = 0;                                                                                     \
		FILE *f = open_memstream(&mb_, &ml_);                                                               \
		(out) = NULL;                                                                                       \
		if (f) {                                                                                            \
			stmt;                                                                                       \
			if (fclose(f) == 0)                                                                         \
				(out) = last_line(mb_, ml_);                                                        \
			free(mb_);                                                                                  \
		}                                                                                                   \
	} while (0)

static int run_send(struct txs_session *s, char **summary)
{
	struct txs_send_hooks h = { .user = s, .stop = hook_stop, .poll = send_poll };
	const struct txs_send_result *r;
	int rc = txs_send_run(s->snd, &h, &r);
	MEM_LINE(*summary, txs_send_summary(f, true, r));
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	if ((f = open_memstream(&buf, &len))) {
		txs_send_result_problems(f, "", true, r);
		if (fclose(f) == 0 && len)
			add_msg(s, buf, len);
		free(buf);
	}
	pthread_mutex_lock(&s->mu);
	s->seconds = r->seconds;
	memcpy(s->rows, r->threads, sizeof(*s->rows) * s->n_rows);
	pthread_mutex_unlock(&s->mu);
	if (rc == 0 && (r->failed || r->verify_errors))
		rc = -EIO;
	return rc;
}

static int run_recv(struct txs_session *s, char **summary)
{
	struct txs_recv_hooks h = { .user = s, .stop = hook_stop, .tick = recv_tick, .msg = recv_msg };
	int rc = txs_recv_run(s->rcv, &h);
	struct txs_recv_result *res = txs_recv_result(s->rcv);
	if (res) {
		MEM_LINE(*summary, txs_recv_summary(f, true, res));
		pthread_mutex_lock(&s->mu);
		s->seconds = res->seconds;
		pthread_mutex_unlock(&s->mu);
	} else if (rc == 0) {
		rc = -EIO;
	}
	return rc;
}


/* ---- ndr: the search's hooks, on our thread ---------------------------------------------- */


static void ndr_trial(void *user, const struct txs_ndr_search *se, double secs, const struct txs_ndr_trial *t,
		      double pct, bool pass)
{
	struct txs_session *s = user;
	char *line;
	MEM_LINE(line, txs_ndr_write_trial(f, true, se, secs, t, pct, pass));
	pthread_mutex_lock(&s->mu);
	s->ndr_trials = se->trials + 1;
	if (line) {
		free(s->ndr_last);
		s->ndr_last = line;
	}
	s->seconds = txs_mono_s() - s->t_start;
	pthread_mutex_unlock(&s->mu);
}

static void ndr_result(void *user, const struct txs_ndr_search *se, const struct txs_ndr_info *in, double last,
		       double secs)
{
	struct txs_session *s = user;
	char *line;
	MEM_LINE(line, txs_ndr_write_result(f, true, se, in, last, secs));
	pthread_mutex_lock(&s->mu);
	free(s->summary);
	s->summary = line;
	pthread_mutex_unlock(&s->mu);
}

static int run_ndr(struct txs_session *s, char **summary)
{
	struct txs_ndr_sess_hooks h = { .user = s, .trial = ndr_trial, .result = ndr_result };
	char err[640] = "";
	int rc = txs_ndr_sess_run(&s->na, s->exe, NULL, &s->ndr_stop, &h, err, sizeof(err));
	if (rc < 0)
		add_msg(s, err, strlen(err));
	if (rc == -EINVAL) /* checked at new: what changed since is the run's failure, not a config's */
		rc = -EIO;
	pthread_mutex_lock(&s->mu);
	*summary = s->summary; /* the thread's end sets it again, under mu */
	s->summary = NULL;
	s->seconds = txs_mono_s() - s->t_start;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* ---- server: its hooks in any of its processes, our reader ------------------------------------ */

/* One line from whichever process of the server: a datagram of tag + text
 * (a blocking send: the reader drains; one too long for the socket is said
 * instead). */
static void srv_put(struct txs_session *s, char tag, const char *text, size_t len)
{
	char *b = malloc(len + 1);
	if (!b)
		return;
	b[0] = tag;
	memcpy(b + 1, text, len);
	if (send(s->sock[1], b, len + 1, MSG_NOSIGNAL) < 0 && errno == EMSGSIZE) {
		char m[128];
		int n = snprintf(m, sizeof(m), "M%s of %zu bytes was too long to pass on", tag == 'S' ? "a summary" : "a line",
				 len);
		send(s->sock[1], m, (size_t)n, MSG_NOSIGNAL);
	}
	free(b);
}

static void srv_log(void *user, const char *line)
{
	srv_put(user, 'L', line, strlen(line));
}

static void srv_msg(void *user, const char *line)
{
	srv_put(user, 'M', line, strlen(line));
}

/* {"session":N,"client":"ADDR","role":"receiver","protocol":"txscale","summary":{...}} */
static void srv_summary(void *user, const struct txs_server_summary *m)
{
	size_t n = strlen(m->json) + strlen(m->client) + 160;
	char *b = malloc(n);
	if (!b)
		return;
	int k = snprintf(b, n, "{\"session\":%u,\"client\":\"%s\",\"role\":\"%s\",\"protocol\":\"%s\",\"summary\":%s}",
			 m->session, m->client, m->role, m->iperf3 ? "iperf3" : m->iperf2 ? "iperf2" : "txscale", m->json);
	if (k > 0 && (size_t)k < n)
		srv_put(user, 'S', b, (size_t)k);
	free(b);
}

/* in a test's side process: its stderr is the file the session reads (txscale/server.h) */
static void srv_side_msg(void *user, const char *side, const char *line)
{
	(void)user;
	fprintf(stderr, "txscale %s: %s\n", side, line);
	fflush(stderr);
}

static void srv_take(struct txs_session *s, const char *b, size_t n)
{
	if (n < 1)
		return;
	if (b[0] != 'S') {
		add_msg(s, b + 1, n - 1);
		return;
	}
	char *j = strndup(b + 1, n - 1);
	if (!j)
		return;
	pthread_mutex_lock(&s->mu);
	unsigned k = (unsigned)(s->n_summaries % SUMMARIES_MAX);
	free(s->summaries[k]);
	s->summaries[k] = j;
	s->n_summaries++;
	pthread_mutex_unlock(&s->mu);
}

static void *srv_reader(void *arg)
{
	struct txs_session *s = arg;
	char *b = malloc(SRV_DGRAM_MAX);
	if (!b)
		return NULL;
	for (;;) {
		struct pollfd pf = { .fd = s->sock[0], .events = POLLIN };
		int r = poll(&pf, 1, 50);
		if (r > 0) {
			ssize_t n = recv(s->sock[0], b, SRV_DGRAM_MAX, MSG_DONTWAIT);
			if (n > 0)
				srv_take(s, b, (size_t)n);
			continue;
		}
		if (r == 0 && __atomic_load_n(&s->reader_done, __ATOMIC_ACQUIRE))
			break; /* the server has returned and nothing more is there */
	}
	free(b);
	return NULL;
}

/* --stamp: the reflector's counters, as `stamp reflect -J` ends with them */
static void srv_stamp_json(struct txs_session *s, struct txs_json *j)
{
	struct txs_stamp_refl_stats st;
	if (!txs_server_stamp_stats(s->srv, &st))
		return;
	txs_json_obj_open(j, "stamp");
	txs_json_u64(j, "received", st.rx);
	txs_json_u64(j, "reflected", st.reflected);
	txs_json_u64(j, "runts", st.runts);
	txs_json_u64(j, "bad_mac", st.bad_mac);
	txs_json_u64(j, "send_errors", st.send_errors);
	txs_json_u64(j, "sessions", st.sessions);
	txs_json_u64(j, "socket_drops", st.socket_drops);
	txs_json_obj_close(j);
}

static void srv_summary_write(struct txs_session *s, FILE *f, int ret)
{
	struct txs_server_counts c;
	txs_server_counts(s->srv, &c);
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "summary");
	txs_json_str(&j, "kind", "server");
	pthread_mutex_lock(&s->mu);
	txs_json_dbl(&j, "seconds", s->seconds);
	txs_json_u64(&j, "port", txs_server_port(s->srv));
	txs_json_u64(&j, "sessions", c.sessions);
	txs_json_u64(&j, "refused", c.refused);
	txs_json_i64(&j, "exit_status", ret);
	txs_json_u64(&j, "tests", s->n_summaries);
	uint64_t kept = s->n_summaries < SUMMARIES_MAX ? s->n_summaries : SUMMARIES_MAX;
	txs_json_u64(&j, "summaries_dropped", s->n_summaries - kept);
	srv_stamp_json(s, &j);
	txs_json_arr_open(&j, "summaries");
	for (uint64_t i = s->n_summaries - kept; i < s->n_summaries; i++) {
		txs_json_key(&j, NULL);
		fputs(s->summaries[i % SUMMARIES_MAX], f);
	}
	txs_json_arr_close(&j);
	pthread_mutex_unlock(&s->mu);
	txs_json_end(&j);
}

static int run_server(struct txs_session *s, char **summary)
{
	int ret = txs_server_run(s->srv);
	pthread_mutex_lock(&s->mu);
	s->seconds = txs_mono_s() - s->t_start;
	pthread_mutex_unlock(&s->mu);
	__atomic_store_n(&s->reader_done, 1, __ATOMIC_RELEASE);
	if (s->reader_on) {
		pthread_join(s->reader, NULL);
		s->reader_on = false;
	}
	MEM_LINE(*summary, srv_summary_write(s, f, ret));
	if (ret) {
		const char *m = "the one-off session failed (its log says why)";
		add_msg(s, m, strlen(m));
	}
	return ret ? -EIO : 0;
}

static void *session_thread(void *arg)
{
	struct txs_session *s = arg;
	char *summary = NULL;
	int rc;
	switch (s->kind) {
	case K_SEND:
		rc = run_send(s, &summary);
		break;
	case K_RECV:
		rc = run_recv(s, &summary);
		break;
	case K_NDR:
		rc = run_ndr(s, &summary);
		break;
	default:
		rc = run_server(s, &summary);
		break;
	}
	pthread_mutex_lock(&s->mu);
	s->rc = rc;
	s->summary = summary;
	s->state = ST_DONE;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ---- the API ------------------------------------------------------------------------------ */

static int kind_find(const char *kind)
{
	for (int i = 0; kind_names[i]; i++)
		if (strcmp(kind, kind_names[i]) == 0)
			return i;
	return -1;
}

/* The txscale program an ndr session's trials run: $TXSCALE_BIN, this
 * program when it is txscale, or txscale in $PATH. */
static int find_exe(char *out, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("TXSCALE_BIN");
	if (env && *env) {
		if (access(env, X_OK) != 0)
			return txs_fail(err, errlen, -ENOENT, "TXSCALE_BIN '%s' is not a program that can run: %s", env,
					strerror(errno));
		snprintf(out, len, "%s", env);
		return 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		const char *base = strrchr(self, '/');
		if (strcmp(base ? base + 1 : self, "txscale") == 0) {
			snprintf(out, len, "%s", self);
			return 0;
		}
	}
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l && l + 9 < len) {
			snprintf(out, len, "%.*s/txscale", (int)l, p);
			if (access(out, X_OK) == 0)
				return 0;
		}
		p += l + (e ? 1 : 0);
	}
	out[0] = 0;
	return txs_fail(err, errlen, -ENOENT, "an ndr session runs its trials with the txscale program, and none was "
			"found: set TXSCALE_BIN, or put txscale in PATH");
}

/* The server: its socket pair, the hooks that write into it, listening. */
static int server_open(struct txs_session *s, char *err, size_t errlen)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s->sock) < 0) {
		s->sock[0] = s->sock[1] = -1;
		return txs_fail(err, errlen, -errno, "socketpair: %s", strerror(errno));
	}
	int big = (int)SRV_DGRAM_MAX;
	if (setsockopt(s->sock[1], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(s->sock[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (setsockopt(s->sock[0], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(s->sock[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	struct txs_server_hooks h = { .user = s, .log = srv_log, .msg = srv_msg, .summary = srv_summary,
				      .side_msg = srv_side_msg };
	return txs_server_open(&s->srv, &s->va.c, &h, err, errlen);
}

static struct txs_session *session_alloc(enum kind k)
{
	struct txs_session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->kind = k;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->mu, NULL);
	atomic_init(&s->stop, 0);
	s->sock[0] = s->sock[1] = -1;
	return s;
}

int txs_session_new(struct txs_session **out, const char *kind, const char *config_json, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = 0;
	if (!out)
		return txs_fail(err, errlen, -EINVAL, "no place for the session (out is NULL)");
	*out = NULL;
	if (!kind)
		return txs_fail(err, errlen, -EINVAL, "no session kind: expected send, recv, ndr or server");
	int k = kind_find(kind);
	if (k < 0)
		return txs_fail(err, errlen, -EINVAL, "bad session kind '%s': expected send, recv, ndr or server", kind);
	struct txs_session *s = session_alloc(k);
	if (!s)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	int rc = parse_config(s, config_json, err, errlen);
	if (rc == 0 && k == K_SEND) {
		txs_send_args_conf(&s->sa, &s->sc);
		s->sc.user = s;
		s->sc.on_note = on_note;
		s->sc.on_link = on_link;
		rc = txs_send_open(&s->snd, &s->sc, err, errlen);
		if (rc == 0 && s->sc.schedule_file)
			rc = txs_send_write_schedule(s->snd, s->sc.schedule_file, err, errlen);
		if (rc == 0)
			s->n_rows = txs_send_info(s->snd)->n_threads;
	} else if (rc == 0 && k == K_RECV) {
		txs_recv_args_conf(&s->ra);
		rc = txs_recv_open(&s->rcv, &s->ra.c, err, errlen);
		if (rc == 0)
			s->n_rows = txs_recv_threads(s->rcv);
	} else if (rc == 0 && k == K_NDR) {
		if ((rc = txs_ndr_args_check(&s->na, err, errlen)) == 0)
			rc = find_exe(s->exe, sizeof(s->exe), err, errlen);
		/* the sender's options and device, the receiver's input: refused here, before start */
		if (rc == 0)
			rc = txs_ndr_sess_precheck(&s->na, s->exe, err, errlen);
	} else if (rc == 0) {
		if ((rc = txs_server_args_conf(&s->va, err, errlen)) == 0)
			rc = server_open(s, err, errlen);
	}
	if (rc < 0) {
		txs_session_free(s);
		return rc;
	}
	if (s->n_rows > TXS_MAX_CORES)
		s->n_rows = TXS_MAX_CORES;
	*out = s;
	return 0;
}

int txs_session_start(struct txs_session *s)
{
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->mu);
	if (s->started || s->state != ST_NEW) {
		pthread_mutex_unlock(&s->mu);
		return -EALREADY;
	}
	/* the run's threads take no signals: they are the program's */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->t_start = txs_mono_s();
	int rc = 0;
	if (s->kind == K_SERVER && (rc = pthread_create(&s->reader, NULL, srv_reader, s)) == 0)
		s->reader_on = true;
	if (rc == 0)
		rc = pthread_create(&s->thr, NULL, session_thread, s);
	if (rc && s->reader_on) {
		__atomic_store_n(&s->reader_done, 1, __ATOMIC_RELEASE);
		pthread_join(s->reader, NULL);
		s->reader_on = false;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0) {
		s->started = true;
		s->state = ST_RUNNING;
	}
	pthread_mutex_unlock(&s->mu);
	return -rc;
}

void txs_session_stop(struct txs_session *s)
{
	if (!s)
		return;
	atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
	__atomic_store_n(&s->ndr_stop, 1, __ATOMIC_RELAXED);
	if (s->srv)
		txs_server_stop(s->srv); /* atomic stores */
}

static void add_ms(struct timespec *t, int ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

int txs_session_wait(struct txs_session *s, int timeout_ms, const char **summary_json)
{
	if (summary_json)
		*summary_json = NULL;
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->mu);
	if (!s->started) {
		pthread_mutex_unlock(&s->mu);
		return -EINVAL;
	}
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	if (timeout_ms > 0)
		add_ms(&dl, timeout_ms);
	while (s->state != ST_DONE) {
		if (timeout_ms < 0)
			pthread_cond_wait(&s->cv, &s->mu);
		else if (timeout_ms == 0 || pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT)
			break;
	}
	int rc = s->state == ST_DONE ? s->rc : -ETIMEDOUT;
	if (s->state == ST_DONE && summary_json)
		*summary_json = s->summary;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

const char *txs_session_error(struct txs_session *s)
{
	if (!s)
		return "";
	pthread_mutex_lock(&s->mu);
	const char *m = s->msgs ? s->msgs : "";
	pthread_mutex_unlock(&s->mu);
	return m;
}

static const char *state_name(enum state st)
{
	return st == ST_NEW ? "new" : st == ST_RUNNING ? "running" : "done";
}

int txs_session_stats_json(struct txs_session *s, char **json)
{
	if (!json)
		return -EINVAL;
	*json = NULL;
	if (!s)
		return -EINVAL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "stats");
	txs_json_str(&j, "kind", kind_names[s->kind]);
	pthread_mutex_lock(&s->mu);
	txs_json_str(&j, "state", state_name(s->state));
	bool live = (s->kind == K_NDR || s->kind == K_SERVER) && s->state == ST_RUNNING;
	txs_json_dbl(&j, "seconds", live ? txs_mono_s() - s->t_start : s->seconds);
	if (s->kind == K_NDR) {
		txs_json_u64(&j, "trials", s->ndr_trials);
		if (s->ndr_last) {
			txs_json_key(&j, "last_trial");
			fputs(s->ndr_last, f);
		}
	}
	if (s->kind == K_SERVER) {
		struct txs_server_counts c;
		txs_server_counts(s->srv, &c);
		txs_json_u64(&j, "port", txs_server_port(s->srv));
		txs_json_u64(&j, "sessions", c.sessions);
		txs_json_u64(&j, "active", c.active);
		txs_json_u64(&j, "refused", c.refused);
		txs_json_u64(&j, "tests", s->n_summaries);
		srv_stamp_json(s, &j);
	}
	if (s->kind == K_SEND) {
		struct txs_stat_row sum = txs_stat_rows_sum(s->rows, s->n_rows);
		txs_json_u64(&j, "packets", sum.packets);
		txs_json_u64(&j, "bytes", sum.bytes);
		txs_json_u64(&j, "drops", sum.drops);
		txs_json_u64(&j, "errors", sum.errors);
		txs_json_arr_open(&j, "threads");
		for (unsigned i = 0; i < s->n_rows; i++) {
			txs_json_obj_open(&j, NULL);
			txs_json_u64(&j, "packets", s->rows[i].packets);
			txs_json_u64(&j, "bytes", s->rows[i].bytes);
			txs_json_u64(&j, "drops", s->rows[i].drops);
			txs_json_u64(&j, "errors", s->rows[i].errors);
			txs_json_obj_close(&j);
		}
		txs_json_arr_close(&j);
	}
	pthread_mutex_unlock(&s->mu);
	if (s->kind == K_RECV) {
		/* the cores' live counters: relaxed reads, any thread (txscale/rx.h) */
		unsigned n = txs_recv_threads(s->rcv);
		struct txs_rx_core *const *cores = txs_recv_cores(s->rcv);
		struct txs_rx_live sum = { 0 }, lv;
		for (unsigned i = 0; i < n; i++) {
			txs_rx_core_live(cores[i], &lv);
			sum.received += lv.received;
			sum.bytes += lv.bytes;
			sum.unique += lv.unique;
			sum.duplicates += lv.duplicates;
			sum.reordered += lv.reordered;
			sum.late += lv.late;
			sum.gaps += lv.gaps;
			sum.malformed += lv.malformed;
			sum.ignored += lv.ignored;
			sum.outages += lv.outages;
		}
		txs_json_u64(&j, "received", sum.received);
		txs_json_u64(&j, "bytes", sum.bytes);
		txs_json_u64(&j, "unique", sum.unique);
		txs_json_u64(&j, "duplicates", sum.duplicates);
		txs_json_u64(&j, "reordered", sum.reordered);
		txs_json_u64(&j, "late", sum.late);
		txs_json_u64(&j, "gaps", sum.gaps);
		txs_json_u64(&j, "lost", sum.gaps > sum.reordered ? sum.gaps - sum.reordered : 0);
		txs_json_u64(&j, "malformed", sum.malformed);
		txs_json_u64(&j, "ignored", sum.ignored);
		txs_json_u64(&j, "outages", sum.outages);
		txs_json_u64(&j, "threads", n);
	}
	txs_json_end(&j);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	while (len && buf[len - 1] == '\n')
		buf[--len] = 0;
	*json = buf;
	return 0;
}

void txs_session_free(struct txs_session *s)
{
	if (!s)
		return;
	if (s->started) {
		txs_session_stop(s);
		pthread_join(s->thr, NULL);
	}
	if (s->reader_on) { /* started, but the session's thread was not */
		__atomic_store_n(&s->reader_done, 1, __ATOMIC_RELEASE);
		pthread_join(s->reader, NULL);
	}
	txs_send_close(s->snd);
	if (s->rcv)
		txs_recv_close(s->rcv);
	txs_server_close(s->srv);
	for (int i = 0; i < 2; i++)
		if (s->sock[i] >= 0)
			close(s->sock[i]);
	for (unsigned i = 0; i < SUMMARIES_MAX; i++)
		free(s->summaries[i]);
	free(s->ndr_last);
	for (unsigned i = 0; i < s->n_vals; i++)
		free(s->vals[i]);
	free(s->vals);
	json_decref(s->root);
	free(s->summary);
	free(s->msgs);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void txs_session_str_free(char *p)
{
	free(p);
}

/* ---- the option table as JSON ----------------------------------------------------------- */

/* every key there, null when the table has nothing (as docs/library.md promises) */
static void json_str_or_null(struct txs_json *j, const char *key, const char *v)
{
	if (v) {
		txs_json_str(j, key, v);
		return;
	}
	txs_json_key(j, key);
	fputs("null", j->f);
}

static void opts_json(struct txs_json *j, const struct txs_opt *opts)
{
	for (const struct txs_opt *o = opts; o->lng; o++) {
		if (o->type == OPT_INCLUDE) {
			opts_json(j, o->include);
			continue;
		}
		txs_json_obj_open(j, NULL);
		txs_json_str(j, "name", o->lng);
		char sh[2] = { (char)o->shrt, 0 };
		json_str_or_null(j, "short", o->shrt ? sh : NULL);
		json_str_or_null(j, "metavar", o->metavar);
		txs_json_bool(j, "flag", !txs_opt_takes_value(o));
		json_str_or_null(j, "default", o->def);
		txs_json_str(j, "help", o->help);
		txs_json_obj_close(j);
	}
}

int txs_session_options_json(const char *kind, char **json)
{
	if (!json)
		return -EINVAL;
	*json = NULL;
	int k = kind ? kind_find(kind) : -1;
	if (k < 0)
		return -EINVAL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	/* an array: txs_json writes objects, so the array is one key's, cut out */
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_arr_open(&j, "options");
	if (has_dest(k)) {
		txs_json_obj_open(&j, NULL);
		txs_json_str(&j, "name", "dest");
		json_str_or_null(&j, "short", NULL);
		txs_json_str(&j, "metavar", "DEST");
		txs_json_bool(&j, "flag", false);
		json_str_or_null(&j, "default", NULL);
		txs_json_str(&j, "help", k == K_SEND ? "destination address (the CLI's DEST)"
						     : "the receiver's address (the CLI's DEST)");
		txs_json_obj_close(&j);
	}
	opts_json(&j, kind_table(k));
	txs_json_arr_close(&j);
	txs_json_end(&j);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	/* {"options":[...]}\n -> [...] */
	char *a = strchr(buf, '['), *z = strrchr(buf, ']');
	if (!a || !z) {
		free(buf);
		return -ENOMEM;
	}
	*++z = 0;
	memmove(buf, a, (size_t)(z - a) + 1);
	*json = buf;
	return 0;
}
