/* SPDX-License-Identifier: MIT */
/* What a trial of `txscale ndr` needs around its two processes
 * (<txscale/ndr.h>): the receiver's CPU and the summaries read back. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/proc.h"
#include <txscale/ndr.h>

int txs_ndr_trial_load(struct txs_ndr_trial *t, const char *send_json_path, const char *recv_json_path, char *err,
		       size_t errlen)
{
	size_t sn = 0, rn = 0;
	int rc = -EIO;
	memset(t, 0, sizeof(*t));
	char *sb = txs_slurp(send_json_path, &sn), *rb = txs_slurp(recv_json_path, &rn);
	if (!sb || !rb) {
		snprintf(err, errlen, "no %s summary file", !sb ? "sender" : "receiver");
		goto out;
	}
	sn = txs_trim(sb, sn);
	rn = txs_trim(rb, rn);
	if (txs_ndr_trial_parse(t, sb, sn, rb, rn) < 0) {
		snprintf(err, errlen, "cannot read the summaries (sender: %.120s; receiver: %.120s)", sb, rb);
		goto out;
	}
	if (!t->lost_exact) {
		snprintf(err, errlen, "the receiver could not count loss exactly (sender summary unread)");
		txs_ndr_trial_release(t);
		goto out;
	}
	rc = 0;
out:
	free(sb);
	free(rb);
	return rc;
}

/* Do the receiver's extra options choose its CPUs or threads? */
static bool recv_args_pin(const char *const *argv, unsigned argc)
{
	static const char *const k[] = { "-A", "--affinity", "--no-pin", "-P", "--parallel" };
	for (unsigned i = 0; i < argc; i++)
		for (unsigned j = 0; j < TXS_ARRAY_SIZE(k); j++)
			if (strncmp(argv[i], k[j], strlen(k[j])) == 0)
				return true;
	return false;
}

int txs_ndr_recv_cpu(const int *send_cpus, unsigned n, unsigned threads, const char *const *recv_argv,
		     unsigned recv_argc)
{
	if (recv_args_pin(recv_argv, recv_argc))
		return -1;
	cpu_set_t online, used;
	CPU_ZERO(&online);
	CPU_ZERO(&used);
	sched_getaffinity(0, sizeof(online), &online);
	for (unsigned i = 0; i < n; i++)
		if (send_cpus[i] >= 0 && send_cpus[i] < CPU_SETSIZE)
			CPU_SET(send_cpus[i], &used);
	if (!n) {
		unsigned want = threads ? threads : 1;
		for (int cpu = 0; cpu < CPU_SETSIZE && want; cpu++)
			if (CPU_ISSET(cpu, &online)) {
				CPU_SET(cpu, &used);
				want--;
			}
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &online) && !CPU_ISSET(cpu, &used))
			return cpu;
	return -1;
}
