/* SPDX-License-Identifier: MIT */
/* The kernel's own receive drop counters, read before and after a run:
 * UDP MIB (/proc/net/snmp, snmp6: the caller's network namespace), softnet
 * backlog drops (/proc/net/softnet_stat: host-wide, per CPU), interface
 * receive drops (/proc/net/dev: the caller's namespace). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rx_priv.h"

static const char *const udp_names[TXS_KS_UDP__COUNT] = {
	[TXS_KS_IN_DATAGRAMS] = "InDatagrams",   [TXS_KS_NO_PORTS] = "NoPorts",
	[TXS_KS_IN_ERRORS] = "InErrors",         [TXS_KS_RCVBUF_ERRORS] = "RcvbufErrors",
	[TXS_KS_IN_CSUM_ERRORS] = "InCsumErrors", [TXS_KS_MEM_ERRORS] = "MemErrors",
};

TXS_API const char *txs_rx_ks_udp_str(enum txs_rx_ks_udp k)
{
	return (unsigned)k < TXS_KS_UDP__COUNT ? udp_names[k] : "unknown";
}

static FILE *open_under(const char *root, const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root ? root : "/proc", rel);
	return fopen(path, "re");
}

static int udp_index(const char *name)
{
	for (int i = 0; i < TXS_KS_UDP__COUNT; i++)
		if (strcmp(name, udp_names[i]) == 0)
			return i;
	return -1;
}

/* "Udp: Name Name ..." followed by "Udp: 1 2 ..." */
static void read_snmp(struct txs_rx_kstats *k, const char *root)
{
	FILE *f = open_under(root, "net/snmp");
	if (!f)
		return;
	char names[1024], vals[1024];
	while (fgets(names, sizeof(names), f)) {
		if (strncmp(names, "Udp: ", 5) != 0)
			continue;
		if (!fgets(vals, sizeof(vals), f) || strncmp(vals, "Udp: ", 5) != 0)
			break;
		char *sn = NULL, *sv = NULL;
		char *n = strtok_r(names + 5, " \n", &sn);
		char *v = strtok_r(vals + 5, " \n", &sv);
		while (n && v) {
			int i = udp_index(n);
			if (i >= 0)
				k->udp[i] = strtoull(v, NULL, 10);
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
		k->have_udp = true;
		break;
	}
	fclose(f);
}

/* Call fn on each line of root/rel until it returns false (no file:
 * nothing read). */
static void each_line(struct txs_rx_kstats *k, const char *root, const char *rel,
		      bool (*fn)(struct txs_rx_kstats *k, char *line))
{
	FILE *f = open_under(root, rel);
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f) && fn(k, line))
		;
	fclose(f);
}

/* net/snmp6: "Udp6InDatagrams   123" */
static bool snmp6_line(struct txs_rx_kstats *k, char *line)
{
	char name[128];
	unsigned long long v;
	if (sscanf(line, "%127s %llu", name, &v) != 2 || strncmp(name, "Udp6", 4) != 0)
		return true;
	int i = udp_index(name + 4);
	if (i >= 0) {
		k->udp6[i] = v;
		k->have_udp6 = true;
	}
	return true;
}

/* net/softnet_stat: one line per CPU, hex: processed dropped time_squeeze ... */
static bool softnet_line(struct txs_rx_kstats *k, char *line)
{
	unsigned long long processed, dropped, squeezed;
	if (sscanf(line, "%llx %llx %llx", &processed, &dropped, &squeezed) != 3)
		return true;
	k->softnet_dropped += dropped;
	k->softnet_squeezed += squeezed;
	k->have_softnet = true;
	return true;
}

/* net/dev: "  rx0: bytes packets errs drop fifo frame compressed multicast | tx ..." */
static bool dev_line(struct txs_rx_kstats *k, char *line)
{
	if (k->n_if >= TXS_KS_MAX_IF)
		return false;
	char *colon = strchr(line, ':');
	if (!colon)
		return true;
	*colon = 0;
	char *name = line;
	while (*name == ' ')
		name++;
	if (!*name || strchr(name, '|'))
		return true;
	unsigned long long bytes, pk, errs, drop, fifo;
	if (sscanf(colon + 1, "%llu %llu %llu %llu %llu", &bytes, &pk, &errs, &drop, &fifo) != 5)
		return true;
	unsigned i = k->n_if++;
	snprintf(k->ifs[i].name, sizeof(k->ifs[i].name), "%.31s", name);
	k->ifs[i].rx_packets = pk;
	k->ifs[i].rx_errs = errs;
	k->ifs[i].rx_drop = drop;
	k->ifs[i].rx_fifo = fifo;
	return true;
}

TXS_API int txs_rx_kstats_read(struct txs_rx_kstats *k, const char *proc_root)
{
	memset(k, 0, sizeof(*k));
	read_snmp(k, proc_root);
	each_line(k, proc_root, "net/snmp6", snmp6_line);
	each_line(k, proc_root, "net/softnet_stat", softnet_line);
	each_line(k, proc_root, "net/dev", dev_line);
	return 0;
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a >= b ? a - b : 0; /* a counter that went back (device re-created) */
}

TXS_API void txs_rx_kstats_delta(struct txs_rx_kstats *o, const struct txs_rx_kstats *b,
				 const struct txs_rx_kstats *a)
{
	memset(o, 0, sizeof(*o));
	o->have_udp = a->have_udp && b->have_udp;
	o->have_udp6 = a->have_udp6 && b->have_udp6;
	o->have_softnet = a->have_softnet && b->have_softnet;
	for (int i = 0; i < TXS_KS_UDP__COUNT; i++) {
		o->udp[i] = sub(a->udp[i], b->udp[i]);
		o->udp6[i] = sub(a->udp6[i], b->udp6[i]);
	}
	o->softnet_dropped = sub(a->softnet_dropped, b->softnet_dropped);
	o->softnet_squeezed = sub(a->softnet_squeezed, b->softnet_squeezed);
	for (unsigned i = 0; i < a->n_if; i++) {
		unsigned j = 0;
		while (j < b->n_if && strcmp(a->ifs[i].name, b->ifs[j].name) != 0)
			j++;
		unsigned n = o->n_if++;
		o->ifs[n] = a->ifs[i];
		if (j < b->n_if) {
			o->ifs[n].rx_packets = sub(a->ifs[i].rx_packets, b->ifs[j].rx_packets);
			o->ifs[n].rx_errs = sub(a->ifs[i].rx_errs, b->ifs[j].rx_errs);
			o->ifs[n].rx_drop = sub(a->ifs[i].rx_drop, b->ifs[j].rx_drop);
			o->ifs[n].rx_fifo = sub(a->ifs[i].rx_fifo, b->ifs[j].rx_fifo);
		}
	}
}

static bool if_wanted(const char *name, const char *const *ifnames, unsigned n)
{
	if (!ifnames || !n)
		return true;
	for (unsigned i = 0; i < n; i++)
		if (ifnames[i] && strcmp(ifnames[i], name) == 0)
			return true;
	return false;
}

/* One UDP MIB (udp or udp6) as an object of its counters by name. */
static void udp_json(struct txs_json *j, const char *key, const uint64_t *v)
{
	txs_json_obj_open(j, key);
	for (int i = 0; i < TXS_KS_UDP__COUNT; i++)
		txs_json_u64(j, udp_names[i], v[i]);
	txs_json_obj_close(j);
}

TXS_API void txs_rx_kstats_json(struct txs_json *j, const char *key, const struct txs_rx_kstats *d,
				const char *const *ifnames, unsigned n, int64_t socket_drops)
{
	txs_json_obj_open(j, key);
	if (socket_drops >= 0)
		txs_json_u64(j, "sockets", (uint64_t)socket_drops);
	else
		txs_json_dbl(j, "sockets", NAN);
	if (d->have_udp)
		udp_json(j, "udp", d->udp);
	if (d->have_udp6)
		udp_json(j, "udp6", d->udp6);
	if (d->have_softnet) {
		txs_json_obj_open(j, "softnet");
		txs_json_u64(j, "dropped", d->softnet_dropped);
		txs_json_u64(j, "time_squeeze", d->softnet_squeezed);
		txs_json_obj_close(j);
	}
	txs_json_obj_open(j, "interfaces");
	for (unsigned i = 0; i < d->n_if; i++) {
		if (!if_wanted(d->ifs[i].name, ifnames, n))
			continue;
		txs_json_obj_open(j, d->ifs[i].name);
		txs_json_u64(j, "rx_packets", d->ifs[i].rx_packets);
		txs_json_u64(j, "rx_dropped", d->ifs[i].rx_drop);
		txs_json_u64(j, "rx_errors", d->ifs[i].rx_errs);
		txs_json_u64(j, "rx_fifo", d->ifs[i].rx_fifo);
		txs_json_obj_close(j);
	}
	txs_json_obj_close(j);
	txs_json_obj_close(j);
}

TXS_API void txs_rx_kstats_text(FILE *f, const struct txs_rx_kstats *d, const char *const *ifnames, unsigned n,
				int64_t socket_drops)
{
	fprintf(f, "kernel   (during the run)");
	if (socket_drops >= 0)
		fprintf(f, " our sockets dropped %" PRId64 ";", socket_drops);
	if (d->have_udp)
		fprintf(f, " Udp RcvbufErrors %" PRIu64 " InErrors %" PRIu64 " MemErrors %" PRIu64 ";",
			d->udp[TXS_KS_RCVBUF_ERRORS], d->udp[TXS_KS_IN_ERRORS], d->udp[TXS_KS_MEM_ERRORS]);
	if (d->have_udp6)
		fprintf(f, " Udp6 RcvbufErrors %" PRIu64 " InErrors %" PRIu64 ";", d->udp6[TXS_KS_RCVBUF_ERRORS],
			d->udp6[TXS_KS_IN_ERRORS]);
	if (d->have_softnet)
		fprintf(f, " softnet dropped %" PRIu64 " (host-wide);", d->softnet_dropped);
	for (unsigned i = 0; i < d->n_if; i++)
		if (if_wanted(d->ifs[i].name, ifnames, n) && (ifnames || d->ifs[i].rx_drop || d->ifs[i].rx_errs))
			fprintf(f, " %s rx_dropped %" PRIu64 " rx_errors %" PRIu64 ";", d->ifs[i].name,
				d->ifs[i].rx_drop, d->ifs[i].rx_errs);
	fputc('\n', f);
}
