/* SPDX-License-Identifier: MIT */
/* The receive session's config: every refusal, and the plan it resolves to. */
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <txscale/pkt.h>
#include "common/sysres.h"
#include "recv_priv.h"

TXS_API void txs_recv_conf_init(struct txs_recv_conf *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < TXS_MAX_CORES; i++)
		c->cpu[i] = -1;
}

TXS_API unsigned txs_recv_conf_threads(const struct txs_recv_conf *c)
{
	return c->threads ? c->threads : c->n_affinity ? c->n_affinity : 1;
}

static bool is_udp_dev(const char *dev)
{
	return strcmp(dev, "udp") == 0 || strncmp(dev, "udp:", 4) == 0;
}

static int check_payload(struct txs_recv_plan *p, const struct txs_recv_conf *c, char *err, size_t errlen)
{
	p->payload = TXS_RX_PAYLOAD_TXSCALE;
	if (!c->payload || strcmp(c->payload, "txscale") == 0)
		return 0;
	if (strcmp(c->payload, "iperf3") == 0)
		p->payload = TXS_RX_PAYLOAD_IPERF3;
	else if (strcmp(c->payload, "iperf3-64") == 0)
		p->payload = TXS_RX_PAYLOAD_IPERF3_64;
	else if (strcmp(c->payload, "iperf2") == 0)
		p->payload = TXS_RX_PAYLOAD_IPERF2;
	else
		return txs_fail(err, errlen, -EINVAL,
				"bad value for --payload: '%s': expected txscale, iperf3, iperf3-64 or iperf2", c->payload);
	if (c->verify || c->sender_summary)
		return txs_fail(err, errlen, -EINVAL, "%s: not with --payload %s (a txscale sender's; use --expect N)",
				c->verify ? "--verify checks txscale's fill pattern" : "--sender-summary counts txscale's flows",
				c->payload);
	return 0;
}

unsigned long long txs_recv_nofile_need(const struct txs_recv_plan *p)
{
	return p->port_hi && p->is_udp ? (unsigned long long)(p->port_hi - p->port + 1) * p->threads + 64 : 0;
}

/* the shapes' port range syntax, without a walk (a receiver takes every port) */
static int check_port(struct txs_recv_plan *p, const struct txs_recv_conf *c, char *err, size_t errlen)
{
	if (!c->port)
		return 0;
	uint16_t lo;
	struct txs_range r;
	char perr[96];
	if (strchr(c->port, ',') || txs_range_parse_port(c->port, &lo, &r, perr, sizeof(perr)) < 0)
		return txs_fail(err, errlen, -EINVAL,
				"bad value for --port: '%s': expected a port 1..65535 or a range LO-HI", c->port);
	if (r.span > TXS_RX_UDP_MAX_PORTS)
		return txs_fail(err, errlen, -EINVAL, "bad value for --port: '%s': at most %u ports", c->port,
				TXS_RX_UDP_MAX_PORTS);
	uint64_t hi = lo + r.span - 1;
	p->port = lo;
	p->port_hi = hi > lo ? (uint16_t)hi : 0;
	/* the hard limit only: the soft one is raised at open (a check changes nothing) */
	unsigned long long need = txs_recv_nofile_need(p), lim;
	if (need && txs_nofile_room(need, &lim) < 0)
		return txs_fail(err, errlen, -EMFILE,
				"bad value for --port: '%s': a socket per port and thread needs %llu open files, "
				"the hard limit is %llu (ulimit -Hn)", c->port, need, lim);
	return 0;
}

static int check_bind(struct txs_recv_plan *p, const struct txs_recv_conf *c, char *err, size_t errlen)
{
	if (!c->bind)
		return 0;
	if (txs_addr_parse(&p->bind, c->bind) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --bind: '%s': expected an IPv4 or IPv6 address",
				c->bind);
	if ((c->v4 && p->bind.family != AF_INET) || (c->v6 && p->bind.family != AF_INET6))
		return txs_fail(err, errlen, -EINVAL, "bad value for --bind: '%s': not %s (--%s)", c->bind,
				c->v4 ? "IPv4" : "IPv6", c->v4 ? "ipv4" : "ipv6");
	p->have_bind = true;
	return 0;
}

/* --rx-timestamps kernel | user | hardware[:IFACE] */
static int check_rx_ts(struct txs_recv_plan *p, const char *v, char *err, size_t errlen)
{
	if (!v || strcmp(v, "kernel") == 0) {
		p->rx_ts = TXS_RX_TS_KERNEL;
		return 0;
	}
	if (strcmp(v, "user") == 0) {
		p->rx_ts = TXS_RX_TS_USER;
		return 0;
	}
	if (strcmp(v, "hardware") != 0 && strncmp(v, "hardware:", 9) != 0)
		return txs_fail(err, errlen, -EINVAL,
				"bad value for --rx-timestamps: '%s': valid are kernel, user, hardware[:IFACE]", v);
	if (!p->is_udp)
		return txs_fail(err, errlen, -EINVAL, "--rx-timestamps %s applies to --dev udp only (packet: and pcap: "
				"take their own per-packet times)", v);
	p->rx_ts = TXS_RX_TS_HARDWARE;
	if (v[8] == ':') {
		const char *ifn = v + 9;
		if (!*ifn || strlen(ifn) >= sizeof(p->hw_ifname))
			return txs_fail(err, errlen, -EINVAL, "bad value for --rx-timestamps: '%s': expected "
					"hardware:IFACE with an interface name of 1-%zu characters", v,
					sizeof(p->hw_ifname) - 1);
		if (!if_nametoindex(ifn))
			return txs_fail(err, errlen, -EINVAL, "bad value for --rx-timestamps: '%s': no interface '%s' here",
					v, ifn);
		snprintf(p->hw_ifname, sizeof(p->hw_ifname), "%s", ifn);
	}
	return 0;
}

static int check_run(struct txs_recv_plan *p, const struct txs_recv_conf *c, char *err, size_t errlen)
{
	if (c->n_affinity && c->threads && c->threads > c->n_affinity)
		return txs_fail(err, errlen, -EINVAL, "--parallel %u needs at least %u CPUs in --affinity (got %u)",
				c->threads, c->threads, c->n_affinity);
	if (p->is_pcap && p->threads != 1)
		return txs_fail(err, errlen, -EINVAL, "--dev pcap: is read by one thread: --parallel/--affinity give %u",
				p->threads);
	if (!(c->outage_min <= 3600) || !(c->outage_min >= 0))
		return txs_fail(err, errlen, -EINVAL, "bad value for --outage-min: '%g': expected at most 3600 seconds",
				c->outage_min);
	p->time = c->time == TXS_RECV_NO_TIME_LIMIT ? 0 : c->time; /* the plan's 0: no limit */
	if (!p->is_pcap) {
		if (c->time == 0)
			p->time = TXS_RECV_LIVE_TIME_DEFAULT;
		else if (c->time == TXS_RECV_NO_TIME_LIMIT && c->idle == 0)
			return txs_fail(err, errlen, -EINVAL, "--time 0 (no time limit) needs --idle SEC to end the run");
	}
	return 0;
}

static int secs(const char *opt, double v, const char *what, char *err, size_t errlen)
{
	if (isfinite(v) && v >= 0 && v <= TXS_RECV_MAX_SECONDS)
		return 0;
	return txs_fail(err, errlen, -EINVAL, "bad value for --%s: '%g': expected seconds 0 (%s) .. 1e7", opt, v,
			what);
}

/* Every number's range, before any string is parsed. */
static int check_numbers(const struct txs_recv_conf *c, unsigned threads, char *err, size_t errlen)
{
	int rc;
	if ((c->time != TXS_RECV_NO_TIME_LIMIT && (rc = secs("time", c->time, "-t 0: no limit, needs --idle", err, errlen))) ||
	    (rc = secs("idle", c->idle, "never", err, errlen)) ||
	    (rc = secs("interval", c->interval, "none", err, errlen)))
		return rc;
	if (c->n_affinity > TXS_MAX_CORES)
		return txs_fail(err, errlen, -EINVAL, "bad value for --affinity: %u CPUs: at most %u", c->n_affinity,
				TXS_MAX_CORES);
	if (threads > TXS_MAX_CORES)
		return txs_fail(err, errlen, -EINVAL, "bad value for --parallel: '%u': at most %u", threads,
				TXS_MAX_CORES);
	if ((rc = txs_cpus_check("affinity", c->cpu, threads, true, err, errlen)))
		return rc;
	if (c->window && (c->window < 64 || c->window > TXS_RX_WINDOW_MAX))
		return txs_fail(err, errlen, -EINVAL, "bad value for --window: '%u': expected a power of two 64..%u",
				c->window, TXS_RX_WINDOW_MAX);
	if (c->max_flows > (1u << 22))
		return txs_fail(err, errlen, -EINVAL, "bad value for --max-flows: '%u': at most %u", c->max_flows,
				1u << 22);
	if (c->batch > 1024)
		return txs_fail(err, errlen, -EINVAL, "bad value for --batch: '%u': at most 1024", c->batch);
	if (c->rcvbuf > INT32_MAX)
		return txs_fail(err, errlen, -EINVAL, "bad value for --rcvbuf: '%llu': at most %d bytes",
				(unsigned long long)c->rcvbuf, INT32_MAX);
	return 0;
}

int txs_recv_plan_make(struct txs_recv_plan *p, const struct txs_recv_conf *c, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->dev = c->dev ? c->dev : "udp";
	p->threads = txs_recv_conf_threads(c);
	p->is_udp = is_udp_dev(p->dev);
	p->is_pcap = strncmp(p->dev, "pcap:", 5) == 0 || strcmp(p->dev, "pcap") == 0;
	p->family = c->v4 ? AF_INET : c->v6 ? AF_INET6 : 0;
	if (c->v4 && c->v6)
		return txs_fail(err, errlen, -EINVAL, "--ipv4 and --ipv6 exclude each other");
	int rc = check_numbers(c, p->threads, err, errlen);
	if (rc)
		return rc;
	rc = check_payload(p, c, err, errlen);
	if (rc)
		return rc;
	if (c->expect && c->sender_summary)
		return txs_fail(err, errlen, -EINVAL, "--expect and --sender-summary exclude each other");
	rc = check_port(p, c, err, errlen);
	if (rc)
		return rc;
	if (c->window & (c->window - 1))
		return txs_fail(err, errlen, -EINVAL, "bad value for --window: '%u': expected a power of two", c->window);
	rc = check_bind(p, c, err, errlen);
	if (!rc)
		rc = check_run(p, c, err, errlen);
	if (!rc)
		rc = check_rx_ts(p, c->rx_ts, err, errlen);
	return rc;
}

TXS_API int txs_recv_conf_check(const struct txs_recv_conf *c, char *err, size_t errlen)
{
	struct txs_recv_plan p;
	return txs_recv_plan_make(&p, c, err, errlen);
}
