/* SPDX-License-Identifier: MIT */
/* The option tables of the sessions (lib/session/opts_send.c, opts_recv.c):
 * one line per setting names it once, and yields the CLI's flags and
 * --help (tools/txscale/opt.c), the keys of a JSON session config
 * (session_json.c, txscale/session_json.h) and the Python keywords. Values
 * are parsed here, as users write them, into the table's config struct at
 * `off`. Not public: the CLI links the static library and includes this
 * header. */
#ifndef TXS_SESSION_OPT_H
#define TXS_SESSION_OPT_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <txscale/common.h>
#include <txscale/session_send.h>
#include <txscale/session_recv.h>

enum txs_opt_type {
	OPT_FLAG,     /* bool, set true */
	OPT_FLAG_OFF, /* bool, set false */
	OPT_STR,      /* const char * (the caller keeps the string alive) */
	OPT_U64,      /* uint64_t with k/M/G suffixes (powers of 1000) */
	OPT_UINT,     /* unsigned, plain, range lo..hi */
	OPT_PORT,     /* uint16_t 1..65535 */
	OPT_SECONDS,  /* double seconds >= 0 ("10", "0.5", "2s", "100ms") */
	OPT_RATE,     /* struct opt_rate */
	OPT_CPULIST,  /* struct opt_cpus, "0-3,6" checked against online CPUs */
	OPT_CUSTOM,   /* parse() callback */
	OPT_INCLUDE,  /* the CLI only: the lines of another table (include) here */
};

struct opt_rate {
	double value; /* 0 = unlimited */
	bool bits;    /* value is bits/s (needs the frame size) */
};

struct opt_cpus {
	unsigned n;
	int cpu[TXS_MAX_CORES];
};

struct txs_opt {
	const char *lng;     /* long name without "--" */
	int shrt;            /* short letter or 0 */
	enum txs_opt_type type;
	size_t off;          /* offset in the config struct */
	const char *metavar; /* shown in --help */
	const char *help;
	const char *def;     /* default, parsed like user input (NULL = zero) */
	uint64_t lo, hi;     /* range for OPT_UINT / OPT_U64 (hi 0 = none) */
	int (*parse)(const char *val, void *dst, char *err, size_t errlen);
	const char *implicit; /* non-NULL (long options only): the value is optional (--name[=VALUE]);
			       * given without one, the option takes this */
	const struct txs_opt *include; /* OPT_INCLUDE: that table's lines, at the same base */
};

#define OPT_END { NULL, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL }
#define OPT_INCLUDE_TABLE(t) { "", 0, OPT_INCLUDE, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, (t) }

/* The value of option o (val: as a user writes it) into cfg. 0, or -EINVAL
 * with one line in err: "bad value for --NAME: 'VAL': why" (short: "-X/--NAME"
 * when the option has a short letter). Any thread; cfg is the caller's. */
int txs_opt_apply(const struct txs_opt *o, void *cfg, const char *val, bool short_name, char *err, size_t errlen);
/* Every default of the table into cfg (what parsing does first). 0, or
 * -EINVAL with err (a table's default that does not parse: a bug). */
int txs_opt_defaults(const struct txs_opt *opts, void *cfg, char *err, size_t errlen);
/* The line named lng (long name), or NULL. */
const struct txs_opt *txs_opt_find(const struct txs_opt *opts, const char *lng);
/* Whether o takes a value (not a flag). */
static inline bool txs_opt_takes_value(const struct txs_opt *o)
{
	return o->type != OPT_FLAG && o->type != OPT_FLAG_OFF;
}

/* A CPU list into c (txs_parse_cpus). 0, or -EINVAL with err. */
static inline int opt_cpus_parse(const char *s, struct opt_cpus *c, char *err, size_t errlen)
{
	return txs_parse_cpus(s, c->cpu, TXS_MAX_CORES, &c->n, err, errlen);
}

/* ---- the sessions' tables and their configs -------------------------------------------------- */

/* send: what its options fill; txs_send_args_conf makes the session's config. */
struct txs_send_gso {
	unsigned size; /* --gso SIZE, 0 = auto or off */
	bool off;
};
struct txs_send_ramp {
	struct opt_rate from, to;
	double secs;
};
struct txs_send_args {
	const char *dest;
	uint16_t port;
	const char *sport_s, *dport_s, *src_s, *dst_s, *length_s, *vlan_s, *qinq_s;
	unsigned flows;
	uint64_t flow_base;
	const char *bind;
	bool v4, v6;
	struct opt_rate rate;
	double time;
	uint64_t count;
	unsigned threads;
	struct opt_cpus cpus;
	double interval;
	const char *dev;
	unsigned tos, ttl;
	bool df, no_df, no_csum, udp;
	const char *src_mac, *dst_mac;
	uint64_t seed;
	bool no_pin;
	const char *ident;
	bool ident_df_zero;
	struct txs_send_gso gso;
	bool connected, unconnected;
	unsigned burst;
	unsigned links;
	const char *bond;
	unsigned miimon, updelay, downdelay;
	unsigned profile;
	const char *schedule_file;
	unsigned mtu;
	struct txs_send_ramp ramp;
	const char *pace;
	uint64_t burst_on;
	double burst_off_us;
	const char *pace_slack;
	const char *timestamps;
	const char *replay;
	double replay_speed;
};
/* The send table; txs_send_opt_table() (once, before the table is shown)
 * fills its --dev help with the registered devices. */
extern const struct txs_opt txs_send_opts[];
const struct txs_opt *txs_send_opt_table(void);
/* args into c (zeroed first; hooks and stamp_shift_ns the caller's). */
void txs_send_args_conf(const struct txs_send_args *a, struct txs_send_conf *c);

/* recv: the session's config and what it holds otherwise. */
struct txs_recv_args_time {
	bool set;
	double v;
};
struct txs_recv_args_offset {
	bool set;
	int64_t ns;
};
struct txs_recv_args {
	struct txs_recv_conf c;
	struct opt_cpus cpus;
	bool no_pin;
	struct txs_recv_args_time time;
	struct txs_recv_args_offset clock_offset;
};
/* args with txs_recv_conf_init's defaults, before the table's. */
void txs_recv_args_init(struct txs_recv_args *a);
extern const struct txs_opt txs_recv_opts[];
const struct txs_opt *txs_recv_opt_table(void);
/* The options a's config does not hold as they are, into a->c (threads'
 * CPUs, -t, --clock-offset). */
void txs_recv_args_conf(struct txs_recv_args *a);

/* ndr: what its options fill (lib/session/opts_ndr.c); the search runs in
 * ndr_sess.c. */
struct txs_ndr_pct {
	bool set;
	double v;
};
struct txs_ndr_args {
	const char *dest;      /* the receiver's address (the CLI's DEST) */
	const char *dev;
	uint16_t port;
	unsigned length;
	unsigned threads;
	struct opt_cpus cpus;
	const char *bind;
	double trial;
	struct txs_ndr_pct precision, loss;
	struct opt_rate lo, hi;
	unsigned max_trials;
	const char *send_netns, *recv_netns;
	const char *recv_dev, *recv_args;
};
/* OPT_CUSTOM parser of a percentage 0 <= PCT < 100 ("1", "0.5%") into a struct txs_ndr_pct. */
int txs_opt_parse_pct(const char *val, void *dst, char *err, size_t errlen);
/* The same for 0 < PCT < 100 (a search's precision: 0 would never end) */
int txs_opt_parse_pct_pos(const char *val, void *dst, char *err, size_t errlen);
extern const struct txs_opt txs_ndr_opts[];
const struct txs_opt *txs_ndr_opt_table(void);
/* The options as a whole, after the table checked each (--lo and --hi in
 * whole datagrams/s from here on): 0, or -EINVAL with one line in err
 * ("bad value for --lo: ...", "no destination: ..."). */
int txs_ndr_args_check(struct txs_ndr_args *a, char *err, size_t errlen);

#endif
