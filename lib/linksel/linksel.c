/* SPDX-License-Identifier: MIT */
/* Link selection: the mode registry, --bond spec parsing, the link-state word,
 * per-core handles and their cold paths. The per-packet code is inline in
 * include/txscale/linksel.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/alloc.h"
#include "common/err.h"
#include "linksel_priv.h"

static const struct txs_linksel_mode_ops *const modes[TXS_LS_N_MODES] = {
	[TXS_LS_BALANCE_RR] = &txs_ls_balance_rr_ops,
	[TXS_LS_ACTIVE_BACKUP] = &txs_ls_active_backup_ops,
	[TXS_LS_BALANCE_XOR] = &txs_ls_balance_xor_ops,
	[TXS_LS_BROADCAST] = &txs_ls_broadcast_ops,
};

static const char *const scope_names[TXS_LS_N_SCOPES] = {
	[TXS_LS_SCOPE_SHARED] = "shared",
	[TXS_LS_SCOPE_PERCORE] = "percore",
	[TXS_LS_SCOPE_STAGGERED] = "staggered",
};

static const char *const hash_names[TXS_LS_N_HASHES] = {
	[TXS_HASH_LAYER2] = "layer2",
	[TXS_HASH_LAYER34] = "layer3+4",
	[TXS_HASH_LAYER23] = "layer2+3",
};

TXS_API const char *txs_linksel_mode_name(enum txs_linksel_mode m)
{
	return (unsigned)m < TXS_LS_N_MODES ? modes[m]->name : "?";
}

TXS_API const char *txs_linksel_scope_name(enum txs_linksel_scope s)
{
	return (unsigned)s < TXS_LS_N_SCOPES ? scope_names[s] : "?";
}

TXS_API const char *txs_linksel_hash_name(enum txs_xmit_hash h)
{
	return (unsigned)h < TXS_LS_N_HASHES ? hash_names[h] : "?";
}

/* every refusal here is a bad value: -EINVAL */
#define fail(err, errlen, ...) txs_fail(err, errlen, -EINVAL, __VA_ARGS__)

static int parse_uint(const char *v, unsigned long max, unsigned *out)
{
	if (!*v || *v == '-' || *v == '+')
		return -1;
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (*end || errno || n > max)
		return -1;
	*out = (unsigned)n;
	return 0;
}

static int find_name(const char *const *names, unsigned n, const char *v)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(names[i], v) == 0)
			return (int)i;
	return -1;
}

TXS_API int txs_linksel_parse(struct txs_linksel_params *p, const char *spec, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = 0;
	char buf[256];
	if (!spec || !*spec)
		return fail(err, errlen, "empty bond spec (expected MODE[,key=value...])");
	if (strlen(spec) >= sizeof(buf))
		return fail(err, errlen, "bond spec too long");
	strcpy(buf, spec);
	*p = (struct txs_linksel_params){ .mode = TXS_LS_BALANCE_RR,
					  .packets_per_slave = 1,
					  .scope = TXS_LS_SCOPE_STAGGERED,
					  .hash = TXS_HASH_LAYER2,
					  .primary = 0 };
	char *save = NULL;
	char *item = strtok_r(buf, ",", &save);
	if (!item)
		return fail(err, errlen, "empty bond spec (expected MODE[,key=value...])");
	int m = -1;
	for (unsigned i = 0; i < TXS_LS_N_MODES; i++) {
		char num[4];
		snprintf(num, sizeof(num), "%u", (unsigned)modes[i]->mode);
		if (strcmp(item, modes[i]->name) == 0 || strcmp(item, num) == 0)
			m = (int)i;
	}
	if (m < 0)
		return fail(err, errlen, "unknown mode '%s' (expected balance-rr, active-backup, balance-xor, broadcast)",
			    item);
	const struct txs_linksel_mode_ops *ops = modes[m];
	p->mode = ops->mode;
	while ((item = strtok_r(NULL, ",", &save))) {
		char *val = strchr(item, '=');
		if (val)
			*val++ = 0;
		unsigned key;
		if (strcmp(item, "packets_per_slave") == 0)
			key = LS_KEY_PPS;
		else if (strcmp(item, "scope") == 0)
			key = LS_KEY_SCOPE;
		else if (strcmp(item, "hash") == 0 || strcmp(item, "xmit_hash_policy") == 0)
			key = LS_KEY_HASH;
		else if (strcmp(item, "primary") == 0)
			key = LS_KEY_PRIMARY;
		else
			return fail(err, errlen,
				    "unknown item '%s' (expected packets_per_slave=N, scope=S, hash=POLICY, primary=L)",
				    item);
		if (!(ops->keys & key))
			return fail(err, errlen, "'%s' does not apply to mode %s", item, ops->name);
		if (!val || !*val)
			return fail(err, errlen, "'%s' needs a value", item);
		int k;
		switch (key) {
		case LS_KEY_PPS:
			if (parse_uint(val, 65535, &p->packets_per_slave) < 0)
				return fail(err, errlen, "packets_per_slave=%s: expected 0..65535", val);
			break;
		case LS_KEY_SCOPE:
			if ((k = find_name(scope_names, TXS_LS_N_SCOPES, val)) < 0)
				return fail(err, errlen, "scope=%s: expected shared, percore or staggered", val);
			p->scope = (enum txs_linksel_scope)k;
			break;
		case LS_KEY_HASH:
			if ((k = find_name(hash_names, TXS_LS_N_HASHES, val)) < 0)
				return fail(err, errlen, "%s=%s: expected layer2, layer2+3 or layer3+4", item, val);
			p->hash = (enum txs_xmit_hash)k;
			break;
		default:
			if (parse_uint(val, TXS_MAX_LINKS - 1, &p->primary) < 0)
				return fail(err, errlen, "primary=%s: expected a link 0..%d", val, TXS_MAX_LINKS - 1);
			break;
		}
	}
	return 0;
}

TXS_API const char *txs_linksel_params_str(const struct txs_linksel_params *p, char *buf, size_t len)
{
	switch (p->mode) {
	case TXS_LS_BALANCE_RR:
		snprintf(buf, len, "balance-rr,packets_per_slave=%u,scope=%s", p->packets_per_slave,
			 txs_linksel_scope_name(p->scope));
		break;
	case TXS_LS_ACTIVE_BACKUP:
		snprintf(buf, len, "active-backup,primary=%u", p->primary);
		break;
	case TXS_LS_BALANCE_XOR:
		snprintf(buf, len, "balance-xor,hash=%s", txs_linksel_hash_name(p->hash));
		break;
	default:
		snprintf(buf, len, "%s", txs_linksel_mode_name(p->mode));
		break;
	}
	return buf;
}

TXS_API int txs_linksel_create(struct txs_linksel **out, const struct txs_linksel_conf *conf, char *err,
			       size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	struct txs_linksel_params p;
	int rc = txs_linksel_parse(&p, conf->mode ? conf->mode : "balance-rr", err, errlen);
	if (rc < 0)
		return rc;
	if (conf->n_links < 1 || conf->n_links > TXS_MAX_LINKS)
		return fail(err, errlen, "%u links: expected 1..%d", conf->n_links, TXS_MAX_LINKS);
	unsigned max_cores = conf->max_cores ? conf->max_cores : 1;
	if (max_cores > TXS_MAX_CORES)
		return fail(err, errlen, "%u cores: at most %d", max_cores, TXS_MAX_CORES);
	const struct txs_linksel_mode_ops *ops = modes[p.mode];
	if (ops->check && (rc = ops->check(&p, conf->n_links, err, errlen)) < 0)
		return rc;
	struct txs_linksel *ls = txs_zalloc_line(sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	ls->cores = txs_zalloc_line(sizeof(*ls->cores) * max_cores);
	if (!ls->cores) {
		free(ls);
		return -ENOMEM;
	}
	ls->p = p;
	ls->ops = ops;
	ls->n_links = conf->n_links;
	ls->max_cores = max_cores;
	ls->seed = conf->seed ? conf->seed : 0x7478736c696e6b73ull; /* "txslinks" */
	uint32_t all = conf->n_links == 32 ? UINT32_MAX : (1u << conf->n_links) - 1;
	ls->state = (uint64_t)1 << 32 | all; /* generation 1, every link up */
	*out = ls;
	return 0;
}

TXS_API void txs_linksel_destroy(struct txs_linksel *ls)
{
	if (!ls)
		return;
	free(ls->cores);
	free(ls);
}

TXS_API const struct txs_linksel_params *txs_linksel_params(const struct txs_linksel *ls)
{
	return &ls->p;
}

TXS_API unsigned txs_linksel_n_links(const struct txs_linksel *ls)
{
	return ls->n_links;
}

TXS_API int txs_linksel_set_link(struct txs_linksel *ls, unsigned link, bool up)
{
	if (link >= ls->n_links)
		return -EINVAL;
	uint64_t old = __atomic_load_n(&ls->state, __ATOMIC_RELAXED);
	for (;;) {
		uint32_t mask = (uint32_t)old;
		uint32_t nm = up ? mask | 1u << link : mask & ~(1u << link);
		if (nm == mask)
			return 0;
		uint64_t gen = (old >> 32) + 1;
		uint64_t nw = gen << 32 | nm;
		if (__atomic_compare_exchange_n(&ls->state, &old, nw, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			break;
	}
	__atomic_add_fetch(&ls->changes, 1, __ATOMIC_RELAXED);
	return 0;
}

TXS_API uint32_t txs_linksel_up_mask(const struct txs_linksel *ls)
{
	return (uint32_t)__atomic_load_n(&ls->state, __ATOMIC_RELAXED);
}

unsigned txs_ls_up_list(const struct txs_linksel *ls, uint32_t mask, uint8_t *up)
{
	unsigned n = 0;
	for (unsigned l = 0; l < ls->n_links; l++)
		if (mask & 1u << l)
			up[n++] = (uint8_t)l;
	return n;
}

TXS_API int txs_linksel_core_open(struct txs_linksel *ls, unsigned core, struct txs_linksel_core **out)
{
	*out = NULL;
	if (core >= ls->max_cores)
		return -EINVAL;
	struct txs_linksel_core *c = &ls->cores[core];
	if (c->open)
		return -EBUSY;
	/* the array was zeroed at create; the stats fields are left alone, as
	 * another thread may be reading them */
	c->ctr = 0;
	c->rng = 0;
	c->ls = ls;
	c->id = core;
	c->state = &ls->state;
	c->shared_ctr = &ls->shared_ctr;
	c->kind = (uint8_t)ls->ops->kind(&ls->p);
	if (ls->p.packets_per_slave > 1)
		c->pps_m = txs_fastdiv_m(ls->p.packets_per_slave);
	c->view = 0; /* generation starts at 1: the first select() builds the view */
	if (ls->ops->core_init)
		ls->ops->core_init(ls, c);
	c->open = true;
	*out = c;
	return 0;
}

TXS_API void txs_linksel_core_close(struct txs_linksel_core *c)
{
	if (c)
		c->open = false; /* counters stay readable until destroy */
}

TXS_API void txs_linksel_refresh_(struct txs_linksel_core *c, uint64_t state)
{
	const struct txs_linksel *ls = c->ls;
	uint32_t mask = (uint32_t)state;
	c->n_up = (uint8_t)txs_ls_up_list(ls, mask, c->up);
	c->up_mask = mask;
	c->mod_m = c->n_up ? txs_fastdiv_m(c->n_up) : 0;
	if (ls->ops->view)
		ls->ops->view(ls, c);
	c->view = state;
	TXS_STAT_ADD(c->refresh, 1);
}

TXS_API int txs_linksel_nolink_(struct txs_linksel_core *c)
{
	TXS_STAT_ADD(c->nolink, 1);
	return -ENETDOWN;
}

TXS_API void txs_linksel_stats(const struct txs_linksel *ls, struct txs_linksel_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < ls->max_cores; i++) {
		out->nolink += TXS_STAT_READ(ls->cores[i].nolink);
		out->refresh += TXS_STAT_READ(ls->cores[i].refresh);
	}
	out->changes = __atomic_load_n(&ls->changes, __ATOMIC_RELAXED);
}
