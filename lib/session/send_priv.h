/* SPDX-License-Identifier: MIT */
/* The send session's private state (txscale/session_send.h): what the
 * config resolves to before a device opens (struct send_prep), and the
 * open session. Not public. */
#ifndef TXS_SESSION_SEND_PRIV_H
#define TXS_SESSION_SEND_PRIV_H
#include <txscale/session_send.h>
#include <txscale/engine.h>
#include <txscale/gen.h>
#include <txscale/ident.h>
#include <txscale/linksel.h>
#include <txscale/netdev.h>
#include <txscale/pkt.h>
#include <txscale/replay.h>
#include <txscale/udp.h>

/* flows, address and port ranges, size mixes (docs/udp.md "Flows and sizes") */
struct send_shape {
	struct txs_shape sh;
	bool any;            /* ranges, several flows or several sizes */
	bool ranges;         /* a port or address range */
	uint64_t flow_base;
	char dest[INET6_ADDRSTRLEN], bind[INET6_ADDRSTRLEN];
	uint8_t *pat;        /* the size cycle, for the per-size report */
	uint32_t pat_len;
	uint32_t len;        /* the largest -l size */
	unsigned vlan_len;   /* VLAN tag bytes per frame */
};

/* The config checked and resolved, before the device opens. */
struct send_prep {
	struct txs_send_conf c;    /* dest, bind and time resolved */
	struct send_shape shape;
	struct txs_replay *rpl;    /* --replay */
	struct txs_pace_conf rpace;
	struct txs_gen_conf gc;    /* its spec: the flow */
	unsigned length;           /* the largest -l size */
	unsigned nthreads;
	int cpus[TXS_MAX_CORES];
	uint32_t open_frame;
	double ctl_rate;           /* -b in datagrams/s at one datagram's frame */
	char devspec[256 + 8];     /* --dev with links= / gso=off added */
	const char *devs;
};

int send_prep(struct send_prep *p, const struct txs_send_conf *c, char *err, size_t errlen);
/* --pace-slack: "auto"/NULL or USEC into the engine's window and gaps; -EINVAL */
int send_pace_slack(const char *v, uint64_t *ns, unsigned *gaps);
void send_prep_free(struct send_prep *p);

/* send_shape.c */
int send_shape_ranges(struct send_shape *ss, struct txs_send_conf *c, uint16_t *sport, char *err, size_t errlen);
int send_shape_sizes(struct send_shape *ss, const char *length_s, int family, unsigned *length, char *err,
		     size_t errlen);
int send_shape_vlan(struct send_shape *ss, const char *vlan_s, const char *qinq_s, struct txs_flow_spec *sp,
		    char *err, size_t errlen);
/* after the device opened and the route is chosen (sendmsg: the sendmsg path) */
int send_shape_check(struct send_shape *ss, const struct txs_netdev *dev, bool sendmsg, unsigned gso, bool v4,
		     uint32_t mtu, unsigned nthreads, char *err, size_t errlen);
void send_shape_json(struct txs_json *j, const struct send_shape *ss, const struct txs_stat_row *e, unsigned n);
void send_shape_text(FILE *f, const struct send_shape *ss, const struct txs_stat_row *e, unsigned n);
/* The mean UDP payload over the -l sizes' cycle (length when one size). */
double send_shape_payload(const struct send_shape *ss, unsigned length);
/* A rate in datagrams/s for the whole run: bits/s of UDP payload at the
 * sizes' mean, times the threads when per thread. 0 for 0. */
double send_rate_pps(const struct send_prep *p, const struct txs_send_rate *r);
void send_shape_free(struct send_shape *ss);

/* send_route.c: the template fast path or the sendmsg path, at the device's MTU */
int send_udp_precheck(unsigned gso, bool connected, bool unconnected, const struct txs_flow_spec *sp,
		      uint32_t *frame_size, char *err, size_t errlen);
const char *send_udp_gso_spec(const char *dev, bool off, bool interp, char *buf, size_t len, char *err,
			      size_t errlen);
/* 0: template; 1: sendmsg path with uc filled; -EINVAL */
int send_udp_route(struct txs_netdev *dev, unsigned mtu_opt, unsigned gso, bool unconnected,
		   const struct txs_flow_spec *sp, struct txs_udp_gen_conf *uc, unsigned *min_burst, uint32_t *wire,
		   char *err, size_t errlen);
void send_udp_gso_sum(const struct txs_netdev *dev, struct txs_link_counters *t);

/* send_replay.c */
int send_replay_open(struct send_prep *p, char *err, size_t errlen);
int send_replay_route_udp(const struct txs_send_conf *c, struct txs_replay *r, struct txs_netdev *dev,
			  const struct txs_flow_spec *sp, struct txs_replay_udp_info *info, struct txs_pace_conf *pace,
			  unsigned *burst, uint32_t *wire, char *err, size_t errlen);
int send_replay_route(const struct txs_send_conf *c, const struct txs_replay *r, struct txs_netdev *dev,
		      unsigned *burst, uint32_t *wire, char *err, size_t errlen);
const char *send_replay_skips_str(const struct txs_replay_udp_info *in, char *b, size_t n);

struct txs_send {
	struct send_prep p;
	struct txs_send_info info;
	struct txs_netdev *dev;
	struct txs_linksel *ls;
	struct txs_linkmon *mon;
	struct txs_engine *eng;
	struct txs_udp_gen_conf uc;
	struct txs_engine_conf ec;
	struct txs_replay_udp_info rudp;
	int route;                 /* 0 template, 1 sendmsg */
	bool gso_said;
	/* the run's rows and result */
	struct txs_stat_row *cur, *prev, *delta, *erows;
	struct txs_stat_row links[TXS_MAX_LINKS], plinks[TXS_MAX_LINKS], dl[TXS_MAX_LINKS];
	struct txs_prof_summary prof;
	struct txs_ts_check tsc;
	bool have_prof, have_tsc;
	uint64_t due_unsent; /* txs_engine_due_unsent: behind its rate at -t */
	struct txs_send_result res;
};

/* send_count.c: one count per fact */
void send_read_threads(struct txs_send *s, struct txs_stat_row *rows);
void send_read_links(struct txs_send *s, struct txs_stat_row *links);
bool send_rows_sub(struct txs_stat_row *d, const struct txs_stat_row *a, const struct txs_stat_row *b, unsigned n);
bool send_check_counts(const struct txs_send *s, FILE *f, const char *prefix);
#endif
