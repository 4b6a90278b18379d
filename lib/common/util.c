/* SPDX-License-Identifier: MIT */
/* Helpers every module uses: the clocks, the open-file limit and the
 * worker CPUs (txscale/common.h), and the one-line error formatter (common/err.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <txscale/common.h>
#include "err.h"
#include "sysres.h"

TXS_API uint64_t txs_now_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

TXS_API uint64_t txs_now_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

TXS_API int txs_nofile_raise(unsigned long long need, unsigned long long *limit)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return 0;
	struct rlimit up = rl;
	up.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &up) == 0 && up.rlim_cur >= need)
		return 0;
	*limit = rl.rlim_max;
	return -1;
}

bool txs_cpu_usable(int cpu)
{
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return false;
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return false;
	return CPU_ISSET(cpu, &set);
}

int txs_cpus_check(const char *opt, const int *cpu, unsigned n, bool per_thread, char *err, size_t errlen)
{
	if (n > TXS_MAX_CORES)
		return txs_fail(err, errlen, -EINVAL, "bad value for --%s: %u CPUs: at most %u", opt, n, TXS_MAX_CORES);
	cpu_set_t set;
	CPU_ZERO(&set);
	if (n && sched_getaffinity(0, sizeof(set), &set) < 0)
		CPU_ZERO(&set);
	for (unsigned i = 0; i < n; i++) {
		if (per_thread && cpu[i] == -1)
			continue;
		if (cpu[i] < 0 || cpu[i] >= CPU_SETSIZE || !CPU_ISSET(cpu[i], &set))
			return txs_fail(err, errlen, -EINVAL, "bad value for --%s: CPU %d (entry %u): not a CPU this "
					"process may run on", opt, cpu[i], i);
		for (unsigned j = 0; !per_thread && j < i; j++)
			if (cpu[j] == cpu[i])
				return txs_fail(err, errlen, -EINVAL, "bad value for --%s: CPU %d given twice (entries "
						"%u and %u)", opt, cpu[i], j, i);
	}
	return 0;
}

int txs_nofile_room(unsigned long long need, unsigned long long *limit)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need ||
	    rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need)
		return 0;
	*limit = rl.rlim_max;
	return -1;
}

TXS_API void txs_cpus_assign(const int *given, unsigned n_given, bool no_pin, unsigned n, int *cpus)
{
	int allowed[CPU_SETSIZE];
	unsigned na = 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				allowed[na++] = c;
	for (unsigned i = 0; i < n; i++) {
		if (no_pin || (!n_given && !na))
			cpus[i] = -1;
		else if (n_given)
			cpus[i] = given[i % n_given];
		else
			cpus[i] = allowed[i % na];
	}
}

int txs_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

void txs_say(void (*fn)(void *user, const char *line), void *user, const char *fmt, ...)
{
	if (!fn)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fn(user, line);
}

TXS_API int txs_pin_self(int cpu)
{
	if (cpu < 0)
		return 0;
	if (cpu >= CPU_SETSIZE)
		return -EINVAL;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	return rc ? -rc : 0;
}
