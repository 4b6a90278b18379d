/* SPDX-License-Identifier: MIT */
/* The sender's JSON summary line -> expected counts (read with jansson,
 * lib/common/jsonpath.h). */
#include <errno.h>
#include <string.h>
#include "common/jsonpath.h"
#include "rx_priv.h"

/* An unsigned field: absent is fine (*have false); present, it must be a
 * plain non-negative integer. */
static bool opt_uint(const json_t *o, const char *path, uint64_t *v, bool *have)
{
	int rc = txs_jget_u64(o, path, v);
	*have = rc == 0;
	return rc != -EINVAL;
}

/* A string field equal to s. */
static bool str_is(const json_t *o, const char *path, const char *s)
{
	const json_t *v = txs_jpath(o, path);
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

static int parse_obj(struct txs_rx_expect *e, const json_t *o)
{
	struct {
		bool have_id, have_packets, have_drops, have_errors;
		uint64_t id, packets, drops, errors;
	} th[TXS_MAX_CORES];
	uint64_t packets = 0, drops = 0, fpt = 1, base = 0;
	bool have_packets, have_drops, have_fpt, have_base;
	/* the numbers we read must be unsigned integers wherever they are,
	 * whatever the line's type */
	if (!opt_uint(o, "packets", &packets, &have_packets) || !opt_uint(o, "drops", &drops, &have_drops) ||
	    !opt_uint(o, "flows_per_thread", &fpt, &have_fpt) || !opt_uint(o, "flow_base", &base, &have_base))
		return -EINVAL;
	if (!have_fpt)
		fpt = 1;
	if (!have_base)
		base = 0;
	const json_t *threads = json_object_get(o, "threads");
	size_t n_threads = json_is_array(threads) ? json_array_size(threads) : 0;
	bool bad_thread = n_threads > TXS_MAX_CORES;
	if (bad_thread)
		n_threads = TXS_MAX_CORES;
	for (size_t i = 0; i < n_threads; i++) {
		th[i].have_id = th[i].have_packets = false;
		const json_t *t = json_array_get(threads, i);
		if (!json_is_object(t))
			continue; /* not a thread object: no id, refused below */
		if (!opt_uint(t, "id", &th[i].id, &th[i].have_id) ||
		    !opt_uint(t, "packets", &th[i].packets, &th[i].have_packets) ||
		    !opt_uint(t, "drops", &th[i].drops, &th[i].have_drops) ||
		    !opt_uint(t, "errors", &th[i].errors, &th[i].have_errors))
			return -EINVAL;
	}
	if (!str_is(o, "type", "summary"))
		return -ENOENT;
	/* a "kind" string other than "" or "send" is another tool's summary */
	const json_t *kind = json_object_get(o, "kind");
	if (json_is_string(kind) && json_string_length(kind) && !str_is(o, "kind", "send"))
		return -EINVAL;
	if (!have_packets || bad_thread || fpt == 0 || fpt > (1u << 20) || base > 0xffffffffull)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->have_total = true;
	e->total = packets;
	e->sender_drops = have_drops ? drops : 0;
	uint64_t sum = 0;
	bool seen[TXS_MAX_CORES] = { false }, per_flow = true;
	e->flow_base = (uint32_t)base;
	for (size_t i = 0; i < n_threads; i++) {
		if (!th[i].have_id || !th[i].have_packets || th[i].id >= TXS_MAX_CORES)
			return -EINVAL;
		unsigned id = (unsigned)th[i].id;
		if (seen[id])
			return -EINVAL; /* the same thread twice */
		seen[id] = true;
		/* thread id sends flows base + id*fpt + i in turn: exact per flow
		 * only where none of its datagrams was dropped */
		uint64_t first = (uint64_t)id * fpt, last = first + fpt;
		if ((fpt > 1 && ((th[i].have_drops && th[i].drops) || (th[i].have_errors && th[i].errors))) ||
		    last > TXS_RX_EXPECT_FLOWS)
			per_flow = false;
		for (uint64_t k = first; per_flow && k < last; k++)
			e->per_flow[k] = th[i].packets / fpt + (k - first < th[i].packets % fpt);
		if (per_flow && last > e->n_flows)
			e->n_flows = (unsigned)last;
		if (sum + th[i].packets < sum)
			return -EINVAL;
		sum += th[i].packets;
	}
	if (n_threads && sum != e->total)
		return -EINVAL;
	if (!per_flow) {
		e->n_flows = 0;
		memset(e->per_flow, 0, sizeof(e->per_flow));
	}
	return 0;
}

TXS_API int txs_rx_expect_parse(struct txs_rx_expect *e, const char *text, size_t len)
{
	memset(e, 0, sizeof(*e));
	/* last line first */
	const char *end = text + len;
	int rc = -EINVAL;
	while (end > text) {
		const char *le = end;
		while (le > text && (le[-1] == '\n' || le[-1] == '\r'))
			le--;
		const char *ls = le;
		while (ls > text && ls[-1] != '\n')
			ls--;
		if (le > ls) {
			json_t *o = txs_jload(ls, (size_t)(le - ls));
			rc = o ? parse_obj(e, o) : -EINVAL;
			json_decref(o);
			if (rc != -ENOENT)
				return rc;
		}
		end = ls;
	}
	memset(e, 0, sizeof(*e));
	return -EINVAL;
}
