/* SPDX-License-Identifier: MIT */
/* A send session's config: the defaults, and every check that needs no
 * device, in the order the CLI has always made them (the first bad value
 * is the one named). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/err.h"
#include "common/sysres.h"
#include "send_priv.h"

void txs_send_conf_init(struct txs_send_conf *c)
{
	*c = (struct txs_send_conf){ .port = 5201, .sport = "40000", .length = "16", .interval = 1, .dev = "dummy",
				     .ttl = 64, .ident = "lease", .miimon = 100, .pace = "const",
				     .timestamps = "burst", .replay_speed = 1, .pace_slack = "auto" };
}

/* --ident NAME: one of the registered strategies, else one line listing them. */
static int check_ident(const char *name, char *err, size_t errlen)
{
	unsigned n;
	const char *const *names = txs_ident_strategies(&n);
	for (unsigned i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return 0;
	size_t o = (size_t)snprintf(err, errlen, "bad value for --ident: '%s': valid are", name);
	for (unsigned i = 0; i < n && o < errlen; i++)
		o += (size_t)snprintf(err + o, errlen - o, "%s %s", i ? "," : "", names[i]);
	return -EINVAL;
}

int send_pace_slack(const char *v, uint64_t *ns, unsigned *gaps)
{
	uint64_t n = TXS_PACE_SLACK_DEFAULT_NS;
	unsigned g = TXS_PACE_SLACK_GAPS;
	if (v && strcmp(v, "auto") != 0) {
		char *end;
		errno = 0;
		double us = strtod(v, &end);
		if (errno || end == v || *end || !(us >= 0) || !(us * 1000 <= TXS_PACE_SLACK_MAX_NS))
			return -EINVAL;
		n = (uint64_t)(us * 1000 + 0.5);
		g = 0;
	}
	if (ns)
		*ns = n;
	if (gaps)
		*gaps = g;
	return 0;
}

/* Rate profile and timestamp options. */
static int pace_check(const struct txs_send_conf *c, char *err, size_t errlen)
{
	bool poisson = strcmp(c->pace, "poisson") == 0;
	if (!poisson && strcmp(c->pace, "const") != 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --pace: '%s': valid are const, poisson", c->pace);
	if (strcmp(c->timestamps, "burst") != 0 && strcmp(c->timestamps, "packet") != 0 &&
	    strcmp(c->timestamps, "interp") != 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --timestamps: '%s': valid are burst, packet, interp",
				c->timestamps);
	bool ramp = c->ramp.secs > 0;
	if (ramp && c->rate.value > 0)
		return txs_fail(err, errlen, -EINVAL, "--ramp and --bitrate both set the rate: give one");
	if (poisson && !(c->rate.value > 0))
		return txs_fail(err, errlen, -EINVAL, "--pace poisson needs a mean rate: give --bitrate RATE");
	if (poisson && ramp)
		return txs_fail(err, errlen, -EINVAL, "--pace poisson and --ramp exclude each other");
	if ((c->burst_on > 0) != (c->burst_off_us > 0))
		return txs_fail(err, errlen, -EINVAL, "--burst-on and --burst-off go together (N datagrams, then USEC "
				"of silence)");
	if (c->replay_speed != 1 && !c->replay)
		return txs_fail(err, errlen, -EINVAL, "--replay-speed applies to --replay");
	if (c->replay_speed != 1 && (c->rate.value > 0 || ramp || poisson || c->burst_on))
		return txs_fail(err, errlen, -EINVAL, "--replay-speed scales the capture's own timing: --bitrate, --ramp, "
				"--pace poisson and --burst-on replace it");
	if (c->burst_on && (poisson || ramp))
		return txs_fail(err, errlen, -EINVAL, "--burst-on/--burst-off combine with --bitrate only, not with --%s",
				poisson ? "pace poisson" : "ramp");
	if (send_pace_slack(c->pace_slack, NULL, NULL) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --pace-slack: '%s': expected auto, or microseconds "
				"0 (spin-exact) .. %u", c->pace_slack, TXS_PACE_SLACK_MAX_NS / 1000);
	if (c->schedule_file && (!c->count || c->count > TXS_SEND_SCHEDULE_MAX))
		return txs_fail(err, errlen, -EINVAL, "--schedule-file needs --packets N (at most %u datagrams), got %s",
				TXS_SEND_SCHEDULE_MAX, c->count ? "more" : "none");
	if (c->profile && !TXS_PROF_SUPPORTED)
		return txs_fail(err, errlen, -EINVAL, "--profile=%u: needs the x86-64 cycle counter (rdtsc), which this "
				"architecture lacks", c->profile);
	return 0;
}

/* DEST, -B, -l, the MACs and the header fields into the flow spec. */
static int flow_check(struct send_prep *p, uint16_t sport, char *err, size_t errlen)
{
	struct txs_send_conf *c = &p->c;
	struct txs_flow_spec *sp = &p->gc.spec;
	if (txs_addr_parse(&sp->dst, c->dest) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for dest (DEST): '%s': expected an IPv4 or IPv6 address",
				c->dest);
	if ((c->v4 && sp->dst.family != AF_INET) || (c->v6 && sp->dst.family != AF_INET6))
		return txs_fail(err, errlen, -EINVAL, "destination '%s' is not %s (--%s)", c->dest, c->v4 ? "IPv4" : "IPv6",
				c->v4 ? "ipv4" : "ipv6");
	bool v4 = sp->dst.family == AF_INET;
	const char *src = c->bind ? c->bind : v4 ? "198.18.0.1" : "2001:2::1";
	if (txs_addr_parse(&sp->src, src) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --bind: '%s': expected an IPv4 or IPv6 address", src);
	if (sp->src.family != sp->dst.family)
		return txs_fail(err, errlen, -EINVAL, "source '%s' and destination '%s' are of different families", src,
				c->dest);
	int rc = send_shape_sizes(&p->shape, c->length, sp->dst.family, &p->length, err, errlen);
	if (rc)
		return rc;
	unsigned maxlen = v4 ? 65507 : 65527;
	if (p->length > maxlen)
		return txs_fail(err, errlen, -EINVAL, "bad value for --length: '%u': at most %u bytes for %s",
				p->length, maxlen, v4 ? "IPv4" : "IPv6");
	if (c->no_csum && !v4)
		return txs_fail(err, errlen, -EINVAL, "--no-csum is IPv4 only: IPv6 UDP must carry a checksum");
	if ((c->src_mac && txs_mac_parse(sp->src_mac, c->src_mac) < 0) ||
	    (c->dst_mac && txs_mac_parse(sp->dst_mac, c->dst_mac) < 0))
		return c->src_mac && txs_mac_parse(sp->src_mac, c->src_mac) < 0
			       ? txs_fail(err, errlen, -EINVAL, "bad value for --src-mac: '%s': expected a MAC "
					  "address, six hex bytes separated by ':'", c->src_mac)
			       : txs_fail(err, errlen, -EINVAL, "bad value for --dst-mac: '%s': expected a MAC "
					  "address, six hex bytes separated by ':'", c->dst_mac);
	sp->sport = sport;
	sp->dport = c->port;
	sp->flow_id = (uint32_t)c->flow_base;
	p->gc.shape = &p->shape.sh;
	rc = send_shape_vlan(&p->shape, c->vlan, c->qinq, sp, err, errlen);
	if (rc)
		return rc;
	if (p->rpl && sp->n_vlan)
		/* frame devices send the capture's own tags; through udp: the
		 * kernel's interface decides */
		return txs_fail(err, errlen, -EINVAL, "--replay sends the capture's frames or payloads: --%s does not "
				"apply", c->qinq ? "qinq" : "vlan");
	sp->payload_len = p->length;
	sp->tos = (uint8_t)c->tos;
	sp->ttl = (uint8_t)c->ttl;
	if (c->df && c->no_df)
		return txs_fail(err, errlen, -EINVAL, "--df and --no-df exclude each other");
	sp->df = c->df;
	sp->no_udp_csum = c->no_csum;
	p->gc.spread_sport = true;
	p->gc.seed = c->seed;
	return 0;
}


/* Threads and CPUs, the run's length and -b in datagrams/s. */
static int threads_check(struct send_prep *p, char *err, size_t errlen)
{
	struct txs_send_conf *c = &p->c;
	struct txs_flow_spec *sp = &p->gc.spec;
	p->nthreads = c->threads ? c->threads : c->n_cpus ? c->n_cpus : 1;
	if (c->n_cpus && c->threads && c->threads > c->n_cpus)
		return txs_fail(err, errlen, -EINVAL, "--parallel %u needs at least %u CPUs in --affinity (got %u)", c->threads,
				c->threads, c->n_cpus);
	if (sp->sport + p->nthreads - 1 > 65535)
		return txs_fail(err, errlen, -EINVAL, "--sport %u + %u threads exceeds port 65535", sp->sport,
				p->nthreads);
	/* unpinned unless -A names CPUs: a pinned sender on CPU 0 fights a
	 * receiver or the kernel's softirq work there */
	txs_cpus_assign(c->cpus, c->n_cpus, c->no_pin || !c->n_cpus, p->nthreads, p->cpus);
	if (c->time == 0 && c->count == 0)
		c->time = 10;
	struct txs_tmpl probe;
	int rc = txs_tmpl_build(&probe, sp);
	if (rc < 0)
		return txs_fail(err, errlen, -EINVAL, "cannot build packets: %s", txs_strerror(rc));
	txs_tmpl_free(&probe);
	bool bits = (c->rate.value > 0 && c->rate.bits) || (c->ramp.secs > 0 && c->ramp.from.bits);
	if (bits && c->replay)
		return txs_fail(err, errlen, -EINVAL, "--replay sends the capture's payloads: give --%s in datagrams/s "
				"(e.g. 10kpps), not bits/s", c->ramp.secs > 0 ? "ramp" : "bitrate");
	if (bits && !(send_shape_payload(&p->shape, p->length) > 0))
		return txs_fail(err, errlen, -EINVAL, "--%s in bits/s counts UDP payload, and --length %s has none: give "
				"datagrams/s (e.g. 10kpps)", c->ramp.secs > 0 ? "ramp" : "bitrate", c->length);
	p->ctl_rate = send_rate_pps(p, &c->rate);
	return 0;
}

double send_rate_pps(const struct send_prep *p, const struct txs_send_rate *r)
{
	if (!(r->value > 0))
		return 0;
	double pps = r->bits ? r->value / (send_shape_payload(&p->shape, p->length) * 8.0) : r->value;
	return r->per_thread ? pps * p->nthreads : pps;
}

/* --links N adds links=N to the dummy spec, --gso off (or interp) gso=off to
 * udp:'s; --bond parses. */
static int dev_check(struct send_prep *p, char *err, size_t errlen)
{
	const struct txs_send_conf *c = &p->c;
	char spec[256];
	const char *devs = c->dev;
	if (c->links) {
		if (strncmp(c->dev, "dummy", 5) != 0 || (c->dev[5] && c->dev[5] != ':'))
			return txs_fail(err, errlen, -EINVAL, "--links %u applies to the dummy device; --dev %s takes its "
					"links from the device", c->links, c->dev);
		if (strstr(c->dev, "links="))
			return txs_fail(err, errlen, -EINVAL, "--links %u and --dev %s both set the links", c->links, c->dev);
		int dl = snprintf(spec, sizeof(spec), "%s%slinks=%u", c->dev, strchr(c->dev, ':') ? "," : ":", c->links);
		if (dl < 0 || (size_t)dl >= sizeof(spec))
			return txs_fail(err, errlen, -EINVAL, "bad value for --dev: '%.40s...': too long with --links %u",
					c->dev, c->links);
		devs = spec;
	}
	char gspec[sizeof(p->devspec)];
	devs = send_udp_gso_spec(devs, c->gso_off, strcmp(c->timestamps, "interp") == 0, gspec, sizeof(gspec), err,
				 errlen);
	if (!devs)
		return -EINVAL;
	snprintf(p->devspec, sizeof(p->devspec), "%s", devs);
	p->devs = devs == c->dev ? c->dev : p->devspec;
	struct txs_linksel_params bp;
	char why[256];
	if (c->bond && txs_linksel_parse(&bp, c->bond, why, sizeof(why)) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --bond: '%s': %s", c->bond, why);
	return 0;
}

/* NULL strings and the zeros that stand for a default: what
 * txs_send_conf_init would have set (a zeroed config is a valid start). */
static void conf_defaults(struct txs_send_conf *c)
{
	if (!c->sport)
		c->sport = "40000";
	if (!c->length)
		c->length = "16";
	if (!c->dev)
		c->dev = "dummy";
	if (!c->ident)
		c->ident = "lease";
	if (!c->pace)
		c->pace = "const";
	if (!c->timestamps)
		c->timestamps = "burst";
	if (!c->ttl)
		c->ttl = 64;
	if (c->replay_speed == 0)
		c->replay_speed = 1;
}

/* A double option: finite, within [lo, hi] (lo itself refused when open_lo). */
static int range_d(const char *opt, double v, double lo, bool open_lo, double hi, const char *what, char *err,
		   size_t errlen)
{
	if (isfinite(v) && (open_lo ? v > lo : v >= lo) && v <= hi)
		return 0;
	return txs_fail(err, errlen, -EINVAL, "bad value for --%s: '%g': expected %s", opt, v, what);
}

static int range_u(const char *opt, unsigned long long v, unsigned long long lo, unsigned long long hi, char *err,
		   size_t errlen)
{
	if (v >= lo && v <= hi)
		return 0;
	return txs_fail(err, errlen, -EINVAL, "bad value for --%s: '%llu': expected %llu..%llu", opt, v, lo, hi);
}

/* Every number's range, before any string is parsed. */
static int limits_check(const struct txs_send_conf *c, char *err, size_t errlen)
{
	int rc;
	const char *rate = "bits/s of UDP payload or datagrams/s, 0 (unlimited) .. 1e12";
	if ((rc = range_d("bitrate", c->rate.value, 0, false, TXS_SEND_MAX_RATE, rate, err, errlen)) ||
	    (rc = range_d("time", c->time, 0, false, TXS_SEND_MAX_SECONDS, "seconds 0 .. 1e7 (0: 10 s unless "
			  "--packets)", err, errlen)) ||
	    (rc = range_d("interval", c->interval, 0, false, TXS_SEND_MAX_SECONDS, "seconds 0 (none) .. 1e7", err,
			  errlen)) ||
	    (rc = range_d("ramp", c->ramp.secs, 0, false, TXS_SEND_MAX_SECONDS, "ramp seconds 0 (no ramp) .. 1e7",
			  err, errlen)) ||
	    (rc = range_d("burst-off", c->burst_off_us, 0, false, 1e12, "microseconds 0 .. 1e12", err, errlen)) ||
	    (rc = range_d("replay-speed", c->replay_speed, 0, true, 1e9, "a factor over 0, at most 1e9", err,
			  errlen)))
		return rc;
	if (c->ramp.secs > 0 &&
	    ((rc = range_d("ramp", c->ramp.from.value, 0, false, TXS_SEND_MAX_RATE, "FROM in packets/s or bits/s, "
			   "0 .. 1e12", err, errlen)) ||
	     (rc = range_d("ramp", c->ramp.to.value, 0, false, TXS_SEND_MAX_RATE, "TO in packets/s or bits/s, "
			   "0 .. 1e12", err, errlen))))
		return rc;
	if (!c->dport && c->port == 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --port: '0': expected a port 1..65535 (or a "
				"--dport range)");
	if ((rc = range_u("parallel", c->threads, 0, TXS_MAX_CORES, err, errlen)) ||
	    (rc = txs_cpus_check("affinity", c->cpus, c->n_cpus, false, err, errlen)) ||
	    (rc = range_u("tos", c->tos, 0, 255, err, errlen)) || (rc = range_u("ttl", c->ttl, 1, 255, err, errlen)) ||
	    (rc = range_u("burst", c->burst, 0, TXS_SEND_MAX_BURST, err, errlen)) ||
	    (rc = range_u("links", c->links, 0, TXS_MAX_LINKS, err, errlen)) ||
	    (rc = range_u("flows", c->flows, 0, 1u << 20, err, errlen)) ||
	    (rc = range_u("flow-base", c->flow_base, 0, 0xffffffffu, err, errlen)) ||
	    (rc = range_u("miimon", c->miimon, 0, 60000, err, errlen)) ||
	    (rc = range_u("updelay", c->updelay, 0, 600000, err, errlen)) ||
	    (rc = range_u("downdelay", c->downdelay, 0, 600000, err, errlen)) ||
	    (rc = range_u("profile", c->profile, 0, 1u << 20, err, errlen)) ||
	    (rc = range_u("gso", c->gso_size, 0, 65535, err, errlen)))
		return rc;
	if (c->mtu && (c->mtu < TXS_SEND_MIN_MTU || c->mtu > 65535))
		return txs_fail(err, errlen, -EINVAL, "bad value for --mtu: '%u': expected %u..65535 bytes (0: the "
				"device's)", c->mtu, TXS_SEND_MIN_MTU);
	return 0;
}

int send_prep(struct send_prep *p, const struct txs_send_conf *conf, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->c = *conf;
	struct txs_send_conf *c = &p->c;
	conf_defaults(c);
	int rc = limits_check(c, err, errlen);
	if (rc)
		return rc;
	/* flows, ranges: --dst/--src give DEST/-B their first address */
	uint16_t sport = 0;
	rc = send_shape_ranges(&p->shape, c, &sport, err, errlen);
	if (rc)
		return rc;
	/* --replay: the capture's frames as they are (docs/replay.md) */
	if (c->replay && p->shape.any)
		return txs_fail(err, errlen, -EINVAL, "--replay sends the capture's own frames: flows, ranges and size "
				"mixes do not apply to it");
	if (c->replay && (rc = send_replay_open(p, err, errlen)) < 0)
		return rc;
	if (!c->dest)
		return txs_fail(err, errlen, -EINVAL, "no destination: give dest (DEST) or --dst ADDRS");
	if (c->v4 && c->v6)
		return txs_fail(err, errlen, -EINVAL, "--ipv4 and --ipv6 exclude each other");
	if ((rc = check_ident(c->ident, err, errlen)) < 0 || (rc = pace_check(c, err, errlen)) < 0 ||
	    (rc = flow_check(p, sport, err, errlen)) < 0)
		return rc;
	rc = send_udp_precheck(c->gso_size, c->connected, c->unconnected, &p->gc.spec, &p->open_frame, err, errlen);
	if (rc)
		return rc;
	if (p->rpl)
		p->open_frame = txs_replay_max_len(p->rpl, NULL);
	if ((rc = threads_check(p, err, errlen)) < 0)
		return rc;
	return dev_check(p, err, errlen);
}

void send_prep_free(struct send_prep *p)
{
	send_shape_free(&p->shape);
	txs_replay_free(p->rpl);
	p->rpl = NULL;
}

int txs_send_conf_check(const struct txs_send_conf *conf, struct txs_send_plan *plan, char *err, size_t errlen)
{
	struct send_prep *p = malloc(sizeof(*p));
	if (!p)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	int rc = send_prep(p, conf, err, errlen);
	if (!rc && plan) {
		*plan = (struct txs_send_plan){ .port = p->c.port, .length = p->length, .threads = p->nthreads, .time = p->c.time,
						.rate_pps = p->ctl_rate, .shaped = p->shape.any,
						.tagged = p->gc.spec.n_vlan > 0 };
		snprintf(plan->dest, sizeof(plan->dest), "%s", p->c.dest);
	}
	send_prep_free(p);
	free(p);
	return rc;
}
