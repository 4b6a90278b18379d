/* SPDX-License-Identifier: MIT */
/* A send session opened and closed: the device and the checks that need it
 * (its MTU, the route, the rate at its frame size), link selection, the
 * link monitor, the ID allocator, the engine; one teardown. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "common/err.h"
#include "send_priv.h"

/* The device's conf from the flow and the shape. */
static struct txs_netdev_conf dev_conf(const struct send_prep *p)
{
	const struct txs_flow_spec *sp = &p->gc.spec;
	const struct send_shape *sh = &p->shape;
	struct txs_netdev_conf dc = { .max_queues = p->nthreads, .frame_size = p->open_frame + sh->vlan_len,
				      .vlan_len = (uint16_t)sh->vlan_len,
				      .flows = sh->ranges && sh->sh.flows > 1 ? sh->sh.flows : 0,
				      .dst = sp->dst, .dport = sp->dport, .sport = sp->sport,
				      .sizes_vary = sh->sh.n_sizes > 1, .ipv4_df = sp->df,
				      .ipv4_pmtu_want = !p->c.df && !p->c.no_df };
	if (p->c.bind)
		dc.src = sp->src;
	if (p->c.src_mac) {
		memcpy(dc.src_mac, sp->src_mac, 6);
		dc.have_src_mac = true;
	}
	if (p->c.dst_mac) {
		memcpy(dc.dst_mac, sp->dst_mac, 6);
		dc.have_dst_mac = true;
	}
	return dc;
}

/* What the device knows: the source it sends from (udp: the kernel's
 * choice; packet:/xdp: the interface's address), its MACs. */
static void dev_source(struct txs_send *s)
{
	struct txs_flow_spec *sp = &s->p.gc.spec;
	struct txs_netdev *dev = s->dev;
	if (dev->src_addr.family == sp->dst.family) {
		char a[INET6_ADDRSTRLEN], k[INET6_ADDRSTRLEN];
		if (!s->p.c.bind)
			sp->src = dev->src_addr;
		else if (memcmp(sp->src.bytes, dev->src_addr.bytes, sp->dst.family == AF_INET ? 4 : 16) != 0)
			txs_say(s->p.c.on_note, s->p.c.user, "--bind %s is not a local address: the kernel sends from %s",
				  txs_addr_str(&sp->src, a, sizeof(a)), txs_addr_str(&dev->src_addr, k, sizeof(k)));
	}
	if (dev->l2_needed) {
		if (!s->p.c.src_mac)
			memcpy(sp->src_mac, dev->src_mac, 6);
		if (!s->p.c.dst_mac)
			memcpy(sp->dst_mac, dev->dst_mac, 6);
	}
}

/* The route at the device's MTU (fast path or sendmsg semantics), the
 * burst and the rate in datagrams/s. 0, or -EINVAL with one line. */
static int route(struct txs_send *s, unsigned *burst_out, double *pps, char *err,
		 size_t errlen)
{
	struct send_prep *p = &s->p;
	const struct txs_send_conf *c = &p->c;
	struct txs_flow_spec *sp = &p->gc.spec;
	struct txs_netdev *dev = s->dev;
	bool v4 = sp->dst.family == AF_INET;
	unsigned burst = 0;
	uint32_t wire = 0;
	if (v4 && dev->kernel_ip && !c->df && !c->no_df && !p->rpl) {
		/* udp: the kernel socket's default (IP_PMTUDISC_WANT): the
		 * frames say DF as the wire will, when the largest fits */
		uint32_t mtu = c->mtu ? c->mtu : dev->mtu ? dev->mtu : 1500;
		sp->df = p->length + TXS_IPV4_HLEN + TXS_UDP_HLEN <= mtu;
	}
	int r = p->rpl && dev->kernel_ip ? send_replay_route_udp(c, p->rpl, dev, sp, &s->rudp, &p->rpace, &burst,
								 &wire, err, errlen)
		: p->rpl ? send_replay_route(c, p->rpl, dev, &burst, &wire, err, errlen)
			 : send_udp_route(dev, c->mtu, c->gso_size, c->unconnected, sp, &s->uc, &burst, &wire, err,
					  errlen);
	if (r < 0)
		return r;
	if (c->burst && c->burst < burst)
		return txs_fail(err, errlen, -EINVAL, "bad value for --burst: '%u': one %u-byte send makes %u frames",
				c->burst, p->length, burst);
	int bad = p->rpl ? 0 : send_shape_check(&p->shape, dev, r == 1, c->gso_size, v4, dev->mtu, p->nthreads, err,
						errlen);
	if (bad < 0)
		return bad;
	s->route = p->rpl ? 0 : r;
	if (s->route == 1)
		dev->conf.frame_size += p->shape.vlan_len; /* tags go in after the MACs (lib/udp/sockgen.c) */
	burst = c->burst ? c->burst : burst > 32 ? burst : 32;
	if (!c->burst && dev->tx_burst > burst)
		burst = dev->tx_burst; /* udp: with GSO, a full call is the kernel's segment limit */
	*burst_out = burst;
	*pps = send_rate_pps(p, &c->rate);
	if (c->rate.value > 0 && *pps / p->nthreads < TXS_SEND_MIN_PPS)
		return txs_fail(err, errlen, -EINVAL, "bad value for --bitrate: '%g%s': below the lowest rate, %g "
				"datagrams/s per thread (%u thread%s)", c->rate.value, c->rate.bits ? "bit" : "pps",
				TXS_SEND_MIN_PPS, p->nthreads, p->nthreads > 1 ? "s" : "");
	return 0;
}

/* Link selection (--bond, or a device with links) and the link monitor. */
static int links_open(struct txs_send *s, unsigned burst, char *err, size_t errlen)
{
	struct send_prep *p = &s->p;
	const struct txs_send_conf *c = &p->c;
	char why[256];
	if (!p->rpl && (c->bond || s->dev->n_links > 1)) {
		struct txs_linksel_conf lc = { .mode = c->bond, .n_links = s->dev->n_links, .max_cores = p->nthreads,
					       .seed = c->seed };
		int rc = txs_linksel_create(&s->ls, &lc, why, sizeof(why));
		if (rc < 0)
			return txs_fail(err, errlen, rc == -EINVAL ? rc : -EIO, "bad value for --bond: '%s': %s",
					c->bond ? c->bond : "", rc == -EINVAL ? why : txs_strerror(rc));
		p->gc.linksel = s->ls;
		s->uc.linksel = s->ls;
		if (s->route && txs_linksel_params(s->ls)->mode == TXS_LS_BROADCAST)
			return txs_fail(err, errlen, -EINVAL, "--bond broadcast copies one-frame datagrams only: --length %u "
					"makes %u frames per send (use a datagram within the MTU, without "
					"--gso/--unconnected)", p->length, burst);
	}
	/* link monitoring for devices with interfaces (packet:, xdp:) */
	struct txs_linkmon_conf mc = { .linksel = s->ls, .miimon_ms = c->miimon, .updelay_ms = c->updelay,
				       .downdelay_ms = c->downdelay, .on_change = c->on_link, .arg = c->user };
	int rc = txs_linkmon_start(&s->mon, s->dev, &mc, why, sizeof(why));
	if (rc < 0 && rc != -EOPNOTSUPP)
		return txs_fail(err, errlen, rc == -EINVAL || rc == -ENODEV ? -EIO : rc, "--dev %s: %s",
				s->dev->spec, why);
	return 0;
}

/* The pace from the options (pace_check passed): a ramp's ends in
 * datagrams/s for the whole run, as -b. */
static struct txs_pace_conf pace_conf(const struct send_prep *sp)
{
	const struct txs_send_conf *c = &sp->c;
	struct txs_pace_conf p = { .kind = TXS_PACE_CONST, .seed = c->seed };
	if (c->ramp.secs > 0) {
		p.kind = TXS_PACE_RAMP;
		p.ramp_from = send_rate_pps(sp, &c->ramp.from);
		p.ramp_to = send_rate_pps(sp, &c->ramp.to);
		p.ramp_secs = c->ramp.secs;
	} else if (strcmp(c->pace, "poisson") == 0) {
		p.kind = TXS_PACE_POISSON;
	}
	p.burst_on = c->burst_on;
	p.burst_off_ns = (uint64_t)(c->burst_off_us * 1000 + 0.5);
	return p;
}

/* The ID allocator and the engine's conf. */
static int engine_conf(struct txs_send *s, unsigned burst, double pps)
{
	struct send_prep *p = &s->p;
	const struct txs_send_conf *c = &p->c;
	struct txs_ident_conf ic = { .strategy = c->ident, .max_cores = p->nthreads, .seed = c->seed,
				     .df_zero = c->ident_df_zero };
	p->gc.ident = c->ident;
	int rc = txs_ident_create(&p->gc.ident_inst, &ic);
	if (rc < 0)
		return rc;
	s->uc.spec = p->gc.spec;
	s->uc.shape = &p->shape.sh;
	s->uc.seed = c->seed;
	s->uc.ident = p->gc.ident_inst; /* the sendmsg path shares the --ident allocator */
	s->ec = (struct txs_engine_conf){
		.n_workers = p->nthreads,
		.cpus = p->cpus,
		.count = c->count,
		.duration = c->time,
		.rate_pps = pps,
		.dev = s->dev,
		.burst = burst,
		.gen = p->rpl ? &txs_replay_gen_ops : s->route ? &txs_udp_sock_gen_ops : &txs_udp_gen_ops,
		.gen_conf = p->rpl ? (void *)p->rpl : s->route ? (void *)&s->uc : (void *)&p->gc,
		.profile_every = c->profile,
		.pace = pace_conf(p),
		.timestamps = strcmp(c->timestamps, "packet") == 0   ? TXS_TS_PACKET
			      : strcmp(c->timestamps, "interp") == 0 ? TXS_TS_INTERP
								     : TXS_TS_BURST,
		.stamp_shift_ns = c->stamp_shift_ns,
	};
	send_pace_slack(c->pace_slack, &s->ec.pace_slack_ns, &s->ec.pace_slack_gaps);
	if (c->stamp_shift_ns)
		txs_say(c->on_note, c->user, "test only: timestamps shifted by %lld ns (TXS_TEST_STAMP_SHIFT_NS)",
			  (long long)c->stamp_shift_ns);
	/* --replay: the capture's own timing (at --replay-speed) unless a rate or profile is given */
	if (p->rpl && !(c->rate.value > 0) && s->ec.pace.kind == TXS_PACE_CONST && !s->ec.pace.burst_on)
		s->ec.pace = p->rpace;
	return 0;
}

static int open_all(struct txs_send *s, char *err, size_t errlen)
{
	struct send_prep *p = &s->p;
	struct txs_netdev_conf dc = dev_conf(p);
	char why[256];
	int rc = txs_netdev_open(&s->dev, p->devs, &dc, why, sizeof(why));
	if (rc < 0)
		return txs_fail(err, errlen, rc, "--dev %s", why);
	dev_source(s);
	unsigned burst = 0;
	double pps = 0;
	if ((rc = route(s, &burst, &pps, err, errlen)) < 0 || (rc = links_open(s, burst, err, errlen)) < 0)
		return rc;
	if ((rc = engine_conf(s, burst, pps)) < 0)
		return txs_fail(err, errlen, rc == -EINVAL ? -EIO : rc, "--ident %s: %s", p->c.ident, txs_strerror(rc));
	size_t n = p->nthreads;
	s->cur = calloc(n, sizeof(*s->cur));
	s->prev = calloc(n, sizeof(*s->prev));
	s->delta = calloc(n, sizeof(*s->delta));
	s->erows = calloc(n, sizeof(*s->erows));
	if (!s->cur || !s->prev || !s->delta || !s->erows)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	rc = txs_engine_create(&s->eng, &s->ec);
	if (rc < 0)
		return txs_fail(err, errlen, rc == -EINVAL ? -EIO : rc, "engine: %s", txs_strerror(rc));
	s->info = (struct txs_send_info){ .n_threads = p->nthreads, .cpus = p->cpus, .dev = s->dev,
					  .n_links = s->dev->n_links, .uses_stdout = s->dev->uses_stdout };
	return 0;
}

int txs_send_open(struct txs_send **out, const struct txs_send_conf *c, char *err, size_t errlen)
{
	*out = NULL;
	struct txs_send *s = calloc(1, sizeof(*s));
	if (!s)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	int rc = send_prep(&s->p, c, err, errlen);
	if (!rc)
		rc = open_all(s, err, errlen);
	if (rc < 0) {
		txs_send_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

const struct txs_send_info *txs_send_info(const struct txs_send *s)
{
	return &s->info;
}

void txs_send_stop(struct txs_send *s)
{
	if (s && s->eng)
		txs_engine_stop(s->eng);
}

int txs_send_write_schedule(struct txs_send *s, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return txs_fail(err, errlen, -errno, "bad value for --schedule-file: '%s': %s", path, strerror(errno));
	const struct txs_engine_conf *ec = &s->ec;
	uint64_t base = ec->count / ec->n_workers, rem = ec->count % ec->n_workers;
	uint64_t *due = malloc((base + 1) * sizeof(*due));
	int rc = due ? 0 : -ENOMEM;
	for (unsigned w = 0; !rc && w < ec->n_workers; w++) {
		int64_t n = txs_pace_schedule(ec, w, due, base + (w < rem));
		if (n < 0)
			rc = (int)n;
		for (int64_t j = 0; j < n; j++)
			fprintf(f, "%u %lld %llu\n", w, (long long)j, (unsigned long long)due[j]);
	}
	free(due);
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	if (rc)
		return txs_fail(err, errlen, rc, "--schedule-file '%s': %s", path, txs_strerror(rc));
	return 0;
}

void txs_send_close(struct txs_send *s)
{
	if (!s)
		return;
	txs_engine_destroy(s->eng);
	txs_ident_destroy(s->p.gc.ident_inst);
	txs_linkmon_stop(s->mon);
	txs_netdev_close(s->dev);
	txs_linksel_destroy(s->ls);
	send_prep_free(&s->p);
	free(s->cur);
	free(s->prev);
	free(s->delta);
	free(s->erows);
	free(s);
}
