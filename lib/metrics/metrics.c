/* SPDX-License-Identifier: MIT */
/* The registry of collectors, the HTTP endpoint (libmicrohttpd, its own
 * thread) and the textfile writer. A scrape renders every collector under
 * the registry's lock into a fresh buffer, then the lock is dropped before
 * the response goes out: a client that reads slowly or never holds nothing
 * but its own connection, which the daemon closes after the timeout. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/metrics.h>
#ifdef TXS_HAVE_MHD
#include <microhttpd.h>
#endif

#define LABELS_MAX 8
/* The most request bytes (line and headers) a connection may hold: beyond,
 * the daemon answers 431 and closes it. */
#define HTTP_MEMORY_LIMIT (32u << 10)

struct coll {
	txs_metrics_collect_fn fn;
	void *arg;
	int id;
	unsigned n_l;
	struct txs_prom_label l[LABELS_MAX];
	char *mem[LABELS_MAX][2];
};

struct txs_metrics {
	pthread_mutex_t lock;
	struct coll *c;
	unsigned n, cap;
	int next_id;
	uint64_t scrapes, refused, render_errors;
	unsigned port;
	int lfd;
#ifdef TXS_HAVE_MHD
	struct MHD_Daemon *d;
#endif
};

TXS_API int txs_metrics_create(struct txs_metrics **out)
{
	struct txs_metrics *m = calloc(1, sizeof(*m));
	*out = NULL;
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	m->lfd = -1;
	*out = m;
	return 0;
}

static void coll_free(struct coll *c)
{
	for (unsigned i = 0; i < c->n_l; i++) {
		free(c->mem[i][0]);
		free(c->mem[i][1]);
	}
}

TXS_API void txs_metrics_destroy(struct txs_metrics *m)
{
	if (!m)
		return;
#ifdef TXS_HAVE_MHD
	if (m->d)
		MHD_stop_daemon(m->d);
#endif
	if (m->lfd >= 0)
		close(m->lfd);
	for (unsigned i = 0; i < m->n; i++)
		coll_free(&m->c[i]);
	free(m->c);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

TXS_API int txs_metrics_add(struct txs_metrics *m, txs_metrics_collect_fn fn, void *arg,
			    const struct txs_prom_label *labels, unsigned n)
{
	if (!fn || n > LABELS_MAX)
		return -EINVAL;
	struct coll c = { .fn = fn, .arg = arg, .n_l = 0 };
	for (unsigned i = 0; i < n; i++) {
		c.mem[i][0] = strdup(labels[i].name ? labels[i].name : "");
		c.mem[i][1] = strdup(labels[i].value ? labels[i].value : "");
		c.n_l = i + 1;
		if (!c.mem[i][0] || !c.mem[i][1]) {
			coll_free(&c);
			return -ENOMEM;
		}
		c.l[i] = (struct txs_prom_label){ c.mem[i][0], c.mem[i][1] };
	}
	pthread_mutex_lock(&m->lock);
	if (m->n == m->cap) {
		unsigned cap = m->cap ? m->cap * 2 : 8;
		struct coll *q = realloc(m->c, cap * sizeof(*q));
		if (!q) {
			pthread_mutex_unlock(&m->lock);
			coll_free(&c);
			return -ENOMEM;
		}
		m->c = q;
		m->cap = cap;
	}
	c.id = m->next_id++;
	/* the label pointers move with the struct: set them in place */
	m->c[m->n] = c;
	for (unsigned i = 0; i < c.n_l; i++)
		m->c[m->n].l[i] = (struct txs_prom_label){ c.mem[i][0], c.mem[i][1] };
	m->n++;
	pthread_mutex_unlock(&m->lock);
	return c.id;
}

TXS_API void txs_metrics_remove(struct txs_metrics *m, int id)
{
	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < m->n; i++)
		if (m->c[i].id == id) {
			coll_free(&m->c[i]);
			memmove(&m->c[i], &m->c[i + 1], (m->n - i - 1) * sizeof(m->c[0]));
			m->n--;
			break;
		}
	pthread_mutex_unlock(&m->lock);
}

/* under the lock */
static int render_locked(struct txs_metrics *m, char **out, size_t *len)
{
	struct txs_prom *p;
	int rc = txs_prom_create(&p);
	if (rc)
		return rc;
	for (unsigned i = 0; i < m->n && !txs_prom_error(p); i++) {
		rc = txs_prom_const_labels(p, m->c[i].l, m->c[i].n_l);
		if (rc)
			break;
		m->c[i].fn(p, m->c[i].arg);
	}
	if (!rc) {
		txs_prom_const_labels(p, NULL, 0);
		m->scrapes++;
		txs_prom_family(p, "txscale_metrics_scrapes_total", TXS_PROM_COUNTER,
				"Renderings of these metrics (HTTP scrapes and textfile writes), this one included.");
		txs_prom_u64(p, "txscale_metrics_scrapes_total", NULL, 0, m->scrapes);
		txs_prom_family(p, "txscale_metrics_http_refused_total", TXS_PROM_COUNTER,
				"HTTP requests answered with an error (not GET, unknown path).");
		txs_prom_u64(p, "txscale_metrics_http_refused_total", NULL, 0, m->refused);
		txs_prom_family(p, "txscale_build_info", TXS_PROM_GAUGE, "The txscale library's version (always 1).");
		txs_prom_u64(p, "txscale_build_info", (struct txs_prom_label[]){ { "version", txs_version() } }, 1, 1);
		rc = txs_prom_text(p, out, len);
	}
	if (rc)
		m->render_errors++;
	txs_prom_destroy(p);
	return rc;
}

TXS_API int txs_metrics_render(struct txs_metrics *m, char **out, size_t *len)
{
	pthread_mutex_lock(&m->lock);
	int rc = render_locked(m, out, len);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

TXS_API int txs_metrics_write_file(struct txs_metrics *m, const char *path)
{
	char *text;
	size_t len;
	int rc = txs_metrics_render(m, &text, &len);
	if (rc)
		return rc;
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;
	if (!*base) {
		free(text);
		return -EISDIR;
	}
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	if (!tmp) {
		free(text);
		return -ENOMEM;
	}
	snprintf(tmp, n, "%.*s.%s.tmp.%ld", (int)dirlen, path, base, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)w;
	}
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
out:
	free(tmp);
	free(text);
	return rc;
}

TXS_API int txs_metrics_parse_addr(const char *s, struct txs_addr *addr, uint16_t *port)
{
	char host[64];
	const char *colon;
	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *e = strchr(s, ']');
		if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = 0;
		colon = e + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host) || strchr(s, ':') != colon)
			return -EINVAL;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = 0;
	}
	const char *ps = colon + 1;
	if (!*ps || strlen(ps) > 5)
		return -EINVAL;
	unsigned long v = 0;
	for (const char *c = ps; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*c - '0');
	}
	if (v > 65535 || txs_addr_parse(addr, host) < 0 || (s[0] == '[') != (addr->family == AF_INET6))
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

TXS_API bool txs_metrics_have_http(void)
{
#ifdef TXS_HAVE_MHD
	return true;
#else
	return false;
#endif
}

TXS_API unsigned txs_metrics_port(const struct txs_metrics *m)
{
	return m->port;
}

#ifdef TXS_HAVE_MHD
static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	(void)version;
	(void)upload_data;
	struct txs_metrics *m = cls;
	bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && !head) {
		/* a body is never read: answered at once, the connection closed */
		pthread_mutex_lock(&m->lock);
		m->refused++;
		pthread_mutex_unlock(&m->lock);
		*upload_data_size = 0;
		return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n");
	}
	if (!*con_cls) { /* first call: headers only */
		*con_cls = m;
		return MHD_YES;
	}
	*upload_data_size = 0;
	if (strcmp(url, "/") == 0)
		return answer(conn, MHD_HTTP_OK, "txscale: metrics at /metrics\n");
	if (strcmp(url, "/metrics") != 0) {
		pthread_mutex_lock(&m->lock);
		m->refused++;
		pthread_mutex_unlock(&m->lock);
		return answer(conn, MHD_HTTP_NOT_FOUND, "not found: metrics at /metrics\n");
	}
	char *text;
	size_t len;
	if (txs_metrics_render(m, &text, &len) != 0)
		return answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics could not be rendered\n");
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static void mhd_quiet(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap; /* the library prints nothing */
}
#endif

TXS_API int txs_metrics_listen(struct txs_metrics *m, const char *addr_port, char *err, size_t errlen)
{
	struct txs_addr a;
	uint16_t port;
	if (txs_metrics_parse_addr(addr_port, &a, &port) < 0) {
		snprintf(err, errlen, "'%s': expected ADDR:PORT, e.g. 127.0.0.1:9101 or [::1]:9101", addr_port);
		return -EINVAL;
	}
#ifndef TXS_HAVE_MHD
	(void)m;
	snprintf(err, errlen, "this txscale was built without libmicrohttpd (libmicrohttpd-dev): no HTTP endpoint");
	return -EOPNOTSUPP;
#else
	if (m->d) {
		snprintf(err, errlen, "an endpoint is served already");
		return -EALREADY;
	}
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof(ss));
	if (a.family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, a.bytes, 4);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, a.bytes, 16);
		sl = sizeof(*s6);
	}
	int fd = socket(a.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "'%s': socket: %s", addr_port, strerror(e));
		return -e;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a.family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 128) < 0) {
		int e = errno;
		close(fd);
		snprintf(err, errlen, "'%s': %s", addr_port, strerror(e));
		return -e;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		m->port = ntohs(a.family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						    : ((struct sockaddr_in6 *)&ss)->sin6_port);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	if (a.family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)TXS_METRICS_HTTP_CONNS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TXS_METRICS_HTTP_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_LIMIT,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_quiet, NULL, MHD_OPTION_END);
	if (!m->d) {
		close(fd);
		m->port = 0;
		snprintf(err, errlen, "'%s': the HTTP daemon did not start", addr_port);
		return -EIO;
	}
	m->lfd = fd; /* MHD_stop_daemon leaves a socket it was given open */
	return 0;
#endif
}
