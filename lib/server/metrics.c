/* SPDX-License-Identifier: MIT */
/* The server's metrics (docs/metrics.md): the sessions run in child
 * processes, and their receivers and senders in children of those; each
 * writes its own metrics file (the sides' metrics file, or the iperf3
 * test's at its end) into the server's directory, and the session's
 * collector here relays those files' counters and gauges at every scrape,
 * with session and client labels. Nothing is written per packet for it:
 * the files are written on the sides' interval (1 s) and at their end. */
#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/err.h"
#include "server_priv.h"

#define RELAY_FAMILIES 128
#define RELAY_LABELS 6

static const char *const kinds[] = { "recv", "send", "iperf3" };

struct txs_srv_msess {
	struct txs_srv_msess *next;
	const struct txs_srv_metrics *sm;
	unsigned id;
	int reg; /* registry id */
	_Atomic int finished;
	double ended; /* mono_s, once finished */
	char client[64];
};

void txs_srv_metrics_path(const struct txs_srv_metrics *sm, unsigned id, const char *kind, char *out, size_t len)
{
	if (!sm->dir[0])
		out[0] = 0;
	else
		snprintf(out, len, "%s/%u-%s.prom", sm->dir, id, kind);
}

static bool metric_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_' || *s == ':'))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == ':'))
			return false;
	return true;
}

static bool label_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_') || (s[0] == '_' && s[1] == '_'))
		return false;
	if (!strcmp(s, "session") || !strcmp(s, "client"))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

/* {a="x",b="y"} at *p (unescaped in place). Returns the label count, -1 if malformed. */
static int parse_labels(char **pp, struct txs_prom_label *l)
{
	char *p = *pp;
	int n = 0;
	if (*p != '{')
		return 0;
	p++;
	while (*p && *p != '}') {
		if (n == RELAY_LABELS)
			return -1;
		char *name = p;
		while (*p && *p != '=')
			p++;
		if (*p != '=' || p[1] != '"')
			return -1;
		*p = 0;
		p += 2;
		char *v = p, *w = p;
		while (*p && *p != '"') {
			if (*p == '\\' && p[1]) {
				p++;
				*w++ = *p == 'n' ? '\n' : *p;
				p++;
				continue;
			}
			*w++ = *p++;
		}
		if (*p != '"')
			return -1;
		p++;
		*w = 0;
		if (!label_name(name))
			return -1;
		l[n].name = name;
		l[n].value = v;
		n++;
		if (*p == ',')
			p++;
	}
	if (*p != '}')
		return -1;
	*pp = p + 1;
	return n;
}

/* One child's file: its counter and gauge families (the registry's own,
 * txscale_metrics_* and txscale_build_info, and histograms left out). */
static void relay(struct txs_prom *p, const char *path)
{
	size_t n = 0;
	char *b = txs_slurp(path, &n);
	if (!b)
		return;
	char *fam[RELAY_FAMILIES];
	unsigned nf = 0;
	char *help = NULL, *save = NULL;
	for (char *line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7)) {
			help = strchr(line + 7, ' ');
			help = help ? help + 1 : NULL;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			char *name = line + 7, *sp = strchr(name, ' ');
			if (!sp)
				continue;
			*sp = 0;
			enum txs_prom_type t;
			if (!strcmp(sp + 1, "counter"))
				t = TXS_PROM_COUNTER;
			else if (!strcmp(sp + 1, "gauge"))
				t = TXS_PROM_GAUGE;
			else
				continue;
			size_t ln = strlen(name);
			if (!metric_name(name) || !strncmp(name, "txscale_metrics_", 16) ||
			    !strcmp(name, "txscale_build_info") || nf == RELAY_FAMILIES ||
			    (t == TXS_PROM_COUNTER && (ln < 6 || strcmp(name + ln - 6, "_total"))))
				continue;
			txs_prom_family(p, name, t, help && *help ? help : "relayed from the session's child");
			fam[nf++] = name;
			help = NULL;
			continue;
		}
		if (line[0] == '#')
			continue;
		char *q = line;
		while (*q && *q != '{' && *q != ' ')
			q++;
		char c = *q;
		*q = 0;
		bool known = false;
		for (unsigned i = 0; i < nf && !known; i++)
			known = !strcmp(fam[i], line);
		if (!known)
			continue;
		struct txs_prom_label l[RELAY_LABELS];
		int nl = 0;
		if (c == '{') {
			*q = c;
			char *name_end = q;
			nl = parse_labels(&q, l);
			*name_end = 0;
			if (nl < 0 || *q != ' ')
				continue;
		} else if (c != ' ') {
			continue;
		}
		q++;
		char *end;
		if (isdigit((unsigned char)*q) && !strpbrk(q, ".eE")) {
			unsigned long long v = strtoull(q, &end, 10);
			if (*end == 0 || *end == ' ')
				txs_prom_u64(p, line, l, (unsigned)nl, v);
			continue;
		}
		double v = strtod(q, &end);
		if (end != q && (*end == 0 || *end == ' '))
			txs_prom_dbl(p, line, l, (unsigned)nl, v);
	}
	free(b);
}

static void sess_collect(struct txs_prom *p, void *arg)
{
	struct txs_srv_msess *s = arg;
	txs_prom_family(p, "txscale_server_session_running", TXS_PROM_GAUGE,
			"1 while the session runs, 0 once it ended (its series stay a while)");
	txs_prom_u64(p, "txscale_server_session_running", NULL, 0, atomic_load(&s->finished) ? 0 : 1);
	for (unsigned k = 0; k < 3; k++) {
		char path[400];
		txs_srv_metrics_path(s->sm, s->id, kinds[k], path, sizeof(path));
		relay(p, path);
	}
}

static void server_collect(struct txs_prom *p, void *arg)
{
	struct txs_srv_metrics *sm = arg;
	txs_prom_family(p, "txscale_server_sessions_active", TXS_PROM_GAUGE, "sessions running now");
	txs_prom_u64(p, "txscale_server_sessions_active", NULL, 0, atomic_load(&sm->active));
	txs_prom_family(p, "txscale_server_sessions_total", TXS_PROM_COUNTER, "sessions started");
	txs_prom_u64(p, "txscale_server_sessions_total", NULL, 0, atomic_load(&sm->total));
	txs_prom_family(p, "txscale_server_sessions_refused_total", TXS_PROM_COUNTER,
			"connections refused as busy, by the limit reached");
	static const char *const why[TXS_SRV_REF_N] = { "max-sessions", "max-sessions-per-client" };
	for (unsigned i = 0; i < TXS_SRV_REF_N; i++) {
		struct txs_prom_label l = { "reason", why[i] };
		txs_prom_u64(p, "txscale_server_sessions_refused_total", &l, 1, atomic_load(&sm->refused[i]));
	}
}

static void say_msg(void *user, const char *line)
{
	txs_srv_msg(user, "%s", line);
}

int txs_srv_metrics_start(struct txs_server *sv, char *err, size_t errlen)
{
	struct txs_srv_metrics *sm = &sv->sm;
	memset(sm, 0, sizeof(*sm));
	int rc = txs_metrics_life_start(&sm->life, &sv->c.metrics, 1.0, say_msg, sv, err, errlen);
	if (rc || !sm->life)
		return rc;
	const char *t = getenv("TMPDIR");
	snprintf(sm->dir, sizeof(sm->dir), "%s/txscale-server-metrics.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(sm->dir)) {
		rc = txs_fail(err, errlen, errno == EINVAL ? -EIO : -errno, "cannot make a temporary directory %s: %s",
			      sm->dir, strerror(errno));
		sm->dir[0] = 0;
		txs_metrics_life_close(sm->life);
		sm->life = NULL;
		return rc;
	}
	sm->keep_max = sv->c.max_sessions * 2 > 16 ? sv->c.max_sessions * 2 : 16;
	if (txs_metrics_add(txs_metrics_life_registry(sm->life), server_collect, sm, NULL, 0) < 0)
		return txs_fail(err, errlen, -ENOMEM, "metrics: out of memory");
	return 0;
}

void txs_srv_metrics_begin(struct txs_srv_metrics *sm, unsigned id, const char *client)
{
	atomic_fetch_add(&sm->total, 1);
	atomic_fetch_add(&sm->active, 1);
	if (!sm->life)
		return;
	struct txs_srv_msess *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->sm = sm;
	s->id = id;
	snprintf(s->client, sizeof(s->client), "%s", client);
	char ids[16];
	snprintf(ids, sizeof(ids), "%u", id);
	struct txs_prom_label l[2] = { { "session", ids }, { "client", s->client } };
	s->reg = txs_metrics_add(txs_metrics_life_registry(sm->life), sess_collect, s, l, 2);
	if (s->reg < 0) {
		free(s);
		return;
	}
	s->next = sm->list;
	sm->list = s;
}

/* A session's files (and their temporary names), its collector unless the registry is gone. */
static void drop(struct txs_srv_metrics *sm, struct txs_srv_msess *s)
{
	struct txs_metrics *m = txs_metrics_life_registry(sm->life);
	if (m)
		txs_metrics_remove(m, s->reg);
	for (unsigned k = 0; k < 3; k++) {
		char path[400];
		txs_srv_metrics_path(sm, s->id, kinds[k], path, sizeof(path));
		unlink(path);
		char tmp[420];
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		unlink(tmp);
	}
	free(s);
}

void txs_srv_metrics_end(struct txs_srv_metrics *sm, unsigned id)
{
	atomic_fetch_sub(&sm->active, 1);
	for (struct txs_srv_msess *s = sm->list; s; s = s->next)
		if (s->id == id && !atomic_load(&s->finished)) {
			s->ended = txs_mono_s();
			atomic_store(&s->finished, 1);
		}
}

void txs_srv_metrics_refused(struct txs_srv_metrics *sm, enum txs_srv_refused why)
{
	atomic_fetch_add(&sm->refused[why], 1);
}

void txs_srv_metrics_tick(struct txs_srv_metrics *sm, double elapsed)
{
	if (!sm->life)
		return;
	txs_metrics_life_tick(sm->life, elapsed);
	double now = txs_mono_s();
	unsigned kept = 0;
	for (struct txs_srv_msess **pp = &sm->list; *pp;) {
		struct txs_srv_msess *s = *pp;
		if (atomic_load(&s->finished) && (now - s->ended > TXS_SRV_KEEP_S || ++kept > sm->keep_max)) {
			*pp = s->next;
			drop(sm, s);
			continue;
		}
		pp = &s->next;
	}
}

void txs_srv_metrics_stop(struct txs_srv_metrics *sm)
{
	if (!sm->life || !sm->dir[0])
		return;
	while (sm->list) {
		struct txs_srv_msess *s = sm->list;
		sm->list = s->next;
		drop(sm, s);
	}
	rmdir(sm->dir);
	sm->dir[0] = 0;
}
