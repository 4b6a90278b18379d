/* SPDX-License-Identifier: MIT */
/* The JSON session boundary (txscale/session_json.h): a config object whose
 * keys are the option table's long names (opt.h), the send and receive
 * sessions run on a thread of our own, a stats snapshot from any thread,
 * the summary line at the end. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/session_json.h>
#include <txscale/session_send.h>
#include <txscale/session_recv.h>
#include <txscale/json.h>
#include "common/err.h"
#include "opt.h"

enum kind { K_SEND, K_RECV };
enum state { ST_NEW, ST_RUNNING, ST_DONE };

static const char *const kind_names[] = { "send", "recv", NULL };

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
};

const char *const *txs_session_kinds(void)
{
	return kind_names;
}

/* ---- the config ------------------------------------------------------------------------- */

static const struct txs_opt *kind_table(enum kind k)
{
	return k == K_SEND ? txs_send_opt_table() : txs_recv_opt_table();
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
	if (s->kind == K_SEND && strcmp(key, "dest") == 0) {
		if (!json_is_string(v) || !*json_string_value(v))
			return txs_fail(err, errlen, -EINVAL, "bad value for dest: expected an address or host name string");
		s->sa.dest = json_string_value(v);
		return 0;
	}
	const struct txs_opt *o = txs_opt_find(kind_table(s->kind), key);
	if (!o)
		return txs_fail(err, errlen, -EINVAL, "unknown option '%s' for a %s session (its keys: the long options of "
				"txscale %s --help%s)", key, kn, kn, s->kind == K_SEND ? ", and dest" : "");
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
	void *args = s->kind == K_SEND ? (void *)&s->sa : (void *)&s->ra;
	if (s->kind == K_RECV)
		txs_recv_args_init(&s->ra);
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

static int run_send(struct txs_session *s, char **summary)
{
	struct txs_send_hooks h = { .user = s, .stop = hook_stop, .poll = send_poll };
	const struct txs_send_result *r;
	int rc = txs_send_run(s->snd, &h, &r);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		txs_send_summary(f, true, r);
		if (fclose(f) == 0)
			*summary = last_line(buf, len);
		free(buf);
	}
	buf = NULL;
	len = 0;
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
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (f) {
			txs_recv_result_json(f, res);
			if (fclose(f) == 0)
				*summary = last_line(buf, len);
			free(buf);
		}
		pthread_mutex_lock(&s->mu);
		s->seconds = res->seconds;
		pthread_mutex_unlock(&s->mu);
	} else if (rc == 0) {
		rc = -EIO;
	}
	return rc;
}

static void *session_thread(void *arg)
{
	struct txs_session *s = arg;
	char *summary = NULL;
	int rc = s->kind == K_SEND ? run_send(s, &summary) : run_recv(s, &summary);
	pthread_mutex_lock(&s->mu);
	s->rc = rc;
	s->summary = summary;
	s->state = ST_DONE;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ---- the API ------------------------------------------------------------------------------ */

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
		return txs_fail(err, errlen, -EINVAL, "no session kind: expected send or recv");
	enum kind k;
	if (strcmp(kind, "send") == 0)
		k = K_SEND;
	else if (strcmp(kind, "recv") == 0)
		k = K_RECV;
	else
		return txs_fail(err, errlen, -EINVAL, "bad session kind '%s': expected send or recv", kind);
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
	} else if (rc == 0) {
		txs_recv_args_conf(&s->ra);
		rc = txs_recv_open(&s->rcv, &s->ra.c, err, errlen);
		if (rc == 0)
			s->n_rows = txs_recv_threads(s->rcv);
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
	int rc = pthread_create(&s->thr, NULL, session_thread, s);
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
	if (s)
		atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
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
	txs_json_dbl(&j, "seconds", s->seconds);
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
	txs_send_close(s->snd);
	if (s->rcv)
		txs_recv_close(s->rcv);
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
		if (o->shrt)
			txs_json_str(j, "short", sh);
		if (o->metavar)
			txs_json_str(j, "metavar", o->metavar);
		txs_json_bool(j, "flag", !txs_opt_takes_value(o));
		if (o->def)
			txs_json_str(j, "default", o->def);
		txs_json_str(j, "help", o->help);
		txs_json_obj_close(j);
	}
}

int txs_session_options_json(const char *kind, char **json)
{
	if (!json)
		return -EINVAL;
	*json = NULL;
	if (!kind || (strcmp(kind, "send") && strcmp(kind, "recv")))
		return -EINVAL;
	enum kind k = strcmp(kind, "send") == 0 ? K_SEND : K_RECV;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	/* an array: txs_json writes objects, so the array is one key's, cut out */
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_arr_open(&j, "options");
	if (k == K_SEND) {
		txs_json_obj_open(&j, NULL);
		txs_json_str(&j, "name", "dest");
		txs_json_str(&j, "metavar", "DEST");
		txs_json_bool(&j, "flag", false);
		txs_json_str(&j, "help", "destination address (the CLI's DEST)");
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
