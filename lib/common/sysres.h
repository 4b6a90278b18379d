/* SPDX-License-Identifier: MIT */
/* What the process may use, read without changing anything: the CPUs of its
 * affinity mask and the room its open-file limit leaves (lib/common/util.c).
 * For the config checks, which must leave the process as they found it.
 * Not public. */
#ifndef TXS_COMMON_SYSRES_H
#define TXS_COMMON_SYSRES_H
#include <stdbool.h>
#include <stddef.h>

/* cpu is one this process may run on (sched_getaffinity); false for a
 * negative or out-of-range index, or when the mask cannot be read. */
bool txs_cpu_usable(int cpu);

/* cpu[0..n), at most TXS_MAX_CORES: CPUs this process may run on. A list
 * (-A) names each once; per_thread (one entry per thread): -1 is a thread
 * left unpinned, and threads may share a CPU. 0, or -EINVAL with "bad value
 * for --OPT: CPU N (entry I): ..." in err. */
int txs_cpus_check(const char *opt, const int *cpu, unsigned n, bool per_thread, char *err, size_t errlen);

/* The hard RLIMIT_NOFILE allows `need` open files (the soft limit may be
 * raised to it at open: txs_nofile_raise). 0, or -1 with *limit = the hard
 * limit. Changes nothing. */
int txs_nofile_room(unsigned long long need, unsigned long long *limit);
#endif
