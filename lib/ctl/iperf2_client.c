/* SPDX-License-Identifier: MIT */
/* `txscale send --iperf2 -c HOST` against a stock iperf 2 server
 * (txscale/iperf2.h, docs/iperf2.md): the streams' datagrams at the rate,
 * the end-of-test exchange, the server's reports as exact loss, the lines.
 * As iperf 2.1.8's client: ids from 1, the end datagram's id the next id
 * negated (64-bit two's complement over id and id2), sent again with the
 * next magnitude every TXS_IP2_RETRY_MS until the report comes. We write
 * no client header (the bytes past the 16 of the header are zero): a 2.x
 * server then reads 32-bit ids and asks for nothing else. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <txscale/iperf2.h>
#include <txscale/json.h>
#include "common/err.h"

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void stamp(uint32_t *sec, uint32_t *usec)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	*sec = (uint32_t)ts.tv_sec;
	*usec = (uint32_t)(ts.tv_nsec / 1000);
}

static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9) };
	if (ts.tv_nsec > 999999999)
		ts.tv_nsec = 999999999;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

TXS_API int txs_ip2_client_check(const struct txs_ip2_client_conf *c, char *err, size_t errlen)
{
	if (!c->server || (c->server->ss_family != AF_INET && c->server->ss_family != AF_INET6))
		return txs_fail(err, errlen, -EINVAL, "no server address");
	if (c->local && c->local->ss_family != c->server->ss_family)
		return txs_fail(err, errlen, -EINVAL, "bad value for -B: not of the server's address family");
	if (c->streams < 1 || c->streams > TXS_IP2_STREAMS_MAX)
		return txs_fail(err, errlen, -EINVAL, "bad value for -P: '%u': expected 1..%u streams", c->streams,
				TXS_IP2_STREAMS_MAX);
	if (c->length < TXS_IP2_HDR_LEN || c->length > 65507)
		return txs_fail(err, errlen, -EINVAL,
				"bad value for -l: '%u': an iperf 2 datagram carries its %u-byte header: %u..65507",
				c->length, TXS_IP2_HDR_LEN, TXS_IP2_HDR_LEN);
	if (!(c->rate_pps >= 0) || !isfinite(c->rate_pps))
		return txs_fail(err, errlen, -EINVAL, "bad value for -b: not a rate");
	if (!c->count && !(c->time > 0))
		return txs_fail(err, errlen, -EINVAL, "bad value for -t: '%g': expected more than 0 s (or -n N)", c->time);
	if (!(c->wait_s > 0))
		return txs_fail(err, errlen, -EINVAL, "bad value for --ctl-timeout: '%g': expected more than 0 s", c->wait_s);
	return 0;
}

/* one stream's end datagram, id -(magnitude); true when the host said
 * no one listens (an ICMP port unreachable, reported by this write) */
static bool send_end(int fd, uint8_t *buf, unsigned len, uint64_t magnitude, struct txs_ip2_stream_out *so)
{
	uint32_t sec, usec;
	stamp(&sec, &usec);
	txs_ip2_hdr_write(buf, -(int64_t)magnitude, sec, usec);
	ssize_t w = send(fd, buf, len, MSG_DONTWAIT);
	bool refused = w < 0 && errno == ECONNREFUSED;
	if (refused)
		w = send(fd, buf, len, MSG_DONTWAIT);
	if (w == (ssize_t)len)
		so->ends_sent++;
	return refused;
}

/* what the report says of our data datagrams */
static void judge(struct txs_ip2_stream_out *so, uint64_t last_end)
{
	const struct txs_ip2_report *r = &so->rep;
	so->exact = false;
	if (r->datagrams < so->sent + 1 || r->datagrams > last_end) {
		snprintf(so->why, sizeof(so->why), "the server's total %llu is not an end id we sent (%llu..%llu)",
			 (unsigned long long)r->datagrams, (unsigned long long)so->sent + 1,
			 (unsigned long long)last_end);
		so->received = r->datagrams > r->errors ? r->datagrams - r->errors : 0;
	} else if (r->errors + 1 > r->datagrams || r->datagrams - r->errors - 1 > so->sent) {
		snprintf(so->why, sizeof(so->why), "the server says %llu of %llu lost: more received than we sent",
			 (unsigned long long)r->errors, (unsigned long long)r->datagrams);
		so->received = so->sent;
	} else {
		so->received = r->datagrams - r->errors - 1;
		so->exact = true;
	}
	so->lost = so->sent > so->received ? so->sent - so->received : 0;
}

TXS_API int txs_ip2_client_run(const struct txs_ip2_client_conf *c, struct txs_ip2_client_out *o, char *err,
			       size_t errlen)
{
	memset(o, 0, sizeof(*o));
	int rc = txs_ip2_client_check(c, err, errlen);
	if (rc)
		return rc;
	unsigned n = c->streams;
	o->n = n;
	int fd[TXS_IP2_STREAMS_MAX];
	for (unsigned i = 0; i < n; i++)
		fd[i] = -1;
	uint8_t *buf = calloc(1, c->length);
	if (!buf)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < n; i++) {
		fd[i] = socket(c->server->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0) {
			rc = txs_fail(err, errlen, -errno, "socket: %s", strerror(errno));
			goto out;
		}
		int sb = 4 << 20;
		setsockopt(fd[i], SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
		if (c->local && bind(fd[i], (const struct sockaddr *)c->local, sa_len(c->local)) < 0) {
			rc = txs_fail(err, errlen, -errno, "bind (-B): %s", strerror(errno));
			goto out;
		}
		if (connect(fd[i], (const struct sockaddr *)c->server, sa_len(c->server)) < 0) {
			rc = txs_fail(err, errlen, -errno, "connect: %s", strerror(errno));
			goto out;
		}
	}
	/* the data: datagram g is due at t0 + g / rate, on stream g mod n */
	double t0 = mono(), deadline = c->count ? INFINITY : t0 + c->time, t_last = t0;
	uint64_t g = 0;
	int stopped = 0;
	for (;;) {
		if ((g & 1023) == 0 && c->stop && (stopped = c->stop(c->arg)))
			break;
		if (c->count && g >= c->count)
			break;
		double now = mono();
		if (c->rate_pps > 0) {
			/* every datagram due before the deadline, however late the last wake-up */
			double due = t0 + (double)g / c->rate_pps;
			if (due >= deadline)
				break;
			if (due > now + 20e-6) {
				sleep_until(due);
				continue;
			}
		} else if (now >= deadline) {
			break;
		}
		unsigned i = (unsigned)(g % n);
		struct txs_ip2_stream_out *so = &o->s[i];
		uint32_t sec, usec;
		stamp(&sec, &usec);
		txs_ip2_hdr_write(buf, (int64_t)(so->sent + 1), sec, usec);
		ssize_t w = send(fd[i], buf, c->length, 0);
		if (w < 0 && errno == ECONNREFUSED) { /* an earlier datagram's ICMP error, not this one's: again */
			o->refused++;
			w = send(fd[i], buf, c->length, 0);
		}
		if (w == (ssize_t)c->length) {
			so->sent++;
			so->bytes += c->length;
			t_last = mono();
		} else {
			so->send_errors++;
			if (w < 0 && errno == ECONNREFUSED)
				o->refused++;
		}
		g++;
	}
	o->seconds = t_last - t0;
	/* the end: each stream's end datagram until its report comes */
	/* ICMP refusals, the data's included (the kernel sends few of them: one a second, after a burst) */
	uint64_t last_end[TXS_IP2_STREAMS_MAX], refused = o->refused;
	for (unsigned i = 0; i < n; i++) {
		last_end[i] = o->s[i].sent + 1;
		refused += send_end(fd[i], buf, c->length, last_end[i], &o->s[i]);
	}
	double t_end = mono(), until = t_end + c->wait_s, next = t_end + TXS_IP2_RETRY_MS / 1000.0;
	unsigned waiting = n;
	while (waiting && stopped < 2) {
		double now = mono();
		if (now >= until)
			break;
		if (c->stop && c->stop(c->arg) > 1)
			break;
		if (now >= next) {
			for (unsigned i = 0; i < n; i++)
				if (!o->s[i].report)
					refused += send_end(fd[i], buf, c->length, ++last_end[i], &o->s[i]);
			next = now + TXS_IP2_RETRY_MS / 1000.0;
			continue;
		}
		struct pollfd pf[TXS_IP2_STREAMS_MAX];
		for (unsigned i = 0; i < n; i++)
			pf[i] = (struct pollfd){ .fd = o->s[i].report ? -1 : fd[i], .events = POLLIN };
		int ms = (int)ceil((next - now) * 1000);
		if (poll(pf, n, ms < 1 ? 1 : ms) <= 0)
			continue;
		for (unsigned i = 0; i < n; i++) {
			if (!(pf[i].revents & (POLLIN | POLLERR)))
				continue;
			uint8_t rb[512];
			ssize_t r = recv(fd[i], rb, sizeof(rb), MSG_DONTWAIT);
			if (r < 0) {
				refused += errno == ECONNREFUSED;
				continue;
			}
			if (txs_ip2_report_read(rb, (size_t)r, &o->s[i].rep) < 0)
				continue; /* not a report (a 2.0.13 server's early ack): the next one */
			o->s[i].report = true;
			judge(&o->s[i], last_end[i]);
			waiting--;
		}
		/* "no one listens here" twice and no report at all for a second: no server (the kernel
		 * sends few of them; a stock server between two clients' sockets says so now and
		 * then: -P) */
		if (refused >= 2 && waiting == n && mono() - t_end > 1.0)
			break;
	}
	o->refused = refused;
	rc = waiting == 0 ? 0 : refused >= 2 && waiting == n ? -ECONNREFUSED : -ETIMEDOUT;
	if (rc == -ECONNREFUSED)
		txs_fail(err, errlen, rc, "no iperf 2 server: the host says nothing listens on the UDP port "
					  "(ICMP port unreachable)");
	else if (rc == -ETIMEDOUT)
		txs_fail(err, errlen, rc, "%u of %u stream%s had no server report within %g s (%llu end datagrams sent)",
			 waiting, n, n == 1 ? "" : "s", c->wait_s,
			 (unsigned long long)(last_end[0] - o->s[0].sent));
out:
	for (unsigned i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	free(buf);
	return rc;
}

TXS_API void txs_ip2_client_write(FILE *out, const char *host, const struct txs_ip2_client_out *o, bool json)
{
	uint64_t sent = 0, bytes = 0, errs = 0, rcv = 0, lost = 0, srv_lost = 0, srv_total = 0, ooo = 0;
	double jit = 0;
	unsigned reports = 0;
	bool exact = true;
	const char *why = "";
	for (unsigned i = 0; i < o->n; i++) {
		const struct txs_ip2_stream_out *s = &o->s[i];
		sent += s->sent;
		bytes += s->bytes;
		errs += s->send_errors;
		if (!s->report) {
			exact = false;
			why = "a stream had no server report";
			continue;
		}
		reports++;
		rcv += s->received;
		lost += s->lost;
		srv_lost += s->rep.errors;
		srv_total += s->rep.datagrams;
		ooo += s->rep.out_of_order;
		jit += s->rep.jitter;
		if (!s->exact) {
			exact = false;
			why = s->why;
		}
	}
	jit = reports ? jit / reports * 1e3 : 0;
	if (reports) {
		if (!json) {
			double off = (double)rcv + (double)lost;
			fprintf(out, "receiver %s: received %llu, lost %llu (%.4g%%)%s, jitter %.3f ms (the iperf 2 server's "
				"report: %llu/%llu lost/total, %llu out of order)\n",
				host, (unsigned long long)rcv, (unsigned long long)lost, off > 0 ? lost * 100.0 / off : 0.0,
				exact ? " exact" : " (not exact)", jit, (unsigned long long)srv_lost,
				(unsigned long long)srv_total, (unsigned long long)ooo);
			if (!exact)
				fprintf(out, "receiver %s: not exact: %s\n", host, why);
		} else {
			struct txs_json j;
			txs_json_begin(&j, out);
			txs_json_str(&j, "type", "receiver");
			txs_json_str(&j, "host", host);
			txs_json_str(&j, "device", "iperf2");
			txs_json_u64(&j, "received", rcv);
			txs_json_u64(&j, "lost", lost);
			txs_json_bool(&j, "lost_exact", exact);
			txs_json_u64(&j, "expected", sent);
			txs_json_dbl(&j, "jitter_ms", jit);
			txs_json_obj_open(&j, "iperf2");
			txs_json_u64(&j, "lost", srv_lost);
			txs_json_u64(&j, "datagrams", srv_total);
			txs_json_u64(&j, "out_of_order", ooo);
			txs_json_u64(&j, "reports", reports);
			txs_json_obj_close(&j);
			txs_json_arr_open(&j, "flows");
			for (unsigned i = 0; i < o->n; i++) {
				const struct txs_ip2_stream_out *s = &o->s[i];
				txs_json_obj_open(&j, NULL);
				txs_json_u64(&j, "id", i);
				txs_json_bool(&j, "report", s->report);
				txs_json_u64(&j, "received", s->received);
				txs_json_u64(&j, "lost", s->lost);
				txs_json_bool(&j, "lost_exact", s->report && s->exact);
				txs_json_u64(&j, "iperf2_lost", s->rep.errors);
				txs_json_u64(&j, "iperf2_datagrams", s->rep.datagrams);
				txs_json_dbl(&j, "seconds", s->rep.seconds);
				txs_json_u64(&j, "bytes", s->rep.bytes);
				txs_json_obj_close(&j);
			}
			txs_json_arr_close(&j);
			if (!exact)
				txs_json_str(&j, "not_exact", why);
			txs_json_end(&j);
		}
	}
	uint64_t ends = 0;
	for (unsigned i = 0; i < o->n; i++)
		ends += o->s[i].ends_sent;
	if (!json) {
		fprintf(out, "send: %u stream%s, %.3f s: sent %llu datagrams (%.0f pps), %llu bytes, %llu failed writes, "
			"%llu end datagrams\n",
			o->n, o->n == 1 ? "" : "s", o->seconds, (unsigned long long)sent,
			o->seconds > 0 ? sent / o->seconds : 0.0, (unsigned long long)bytes, (unsigned long long)errs,
			(unsigned long long)ends);
	} else {
		struct txs_json j;
		txs_json_begin(&j, out);
		txs_json_str(&j, "type", "summary");
		txs_json_str(&j, "kind", "send");
		txs_json_str(&j, "device", "iperf2");
		txs_json_dbl(&j, "seconds", o->seconds);
		txs_json_u64(&j, "packets", sent);
		txs_json_u64(&j, "bytes", bytes);
		txs_json_dbl(&j, "pps", o->seconds > 0 ? sent / o->seconds : 0);
		txs_json_u64(&j, "drops", 0);
		txs_json_u64(&j, "errors", errs);
		txs_json_u64(&j, "end_datagrams", ends);
		txs_json_arr_open(&j, "threads");
		for (unsigned i = 0; i < o->n; i++) {
			txs_json_obj_open(&j, NULL);
			txs_json_u64(&j, "id", i);
			txs_json_u64(&j, "packets", o->s[i].sent);
			txs_json_obj_close(&j);
		}
		txs_json_arr_close(&j);
		txs_json_end(&j);
	}
	fflush(out);
}
