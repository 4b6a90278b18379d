/* SPDX-License-Identifier: MIT */
/* txscale: shared definitions (cache-line layout, visibility, helpers). */
#ifndef TXSCALE_COMMON_H
#define TXSCALE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <txscale/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every exported symbol carries TXS_API; everything else is hidden. */
#define TXS_API __attribute__((visibility("default")))

/* What is stable (docs/abi.md): the names lib/txscale.map lists under
 * TXSCALE_<MAJOR>.<MINOR> (the version functions, txs_strerror, the JSON
 * sessions). Everything else these headers declare, the structs and their
 * layouts included, is the unstable API (node TXSCALE_UNSTABLE_<VERSION>,
 * renamed every release): a program using it is rebuilt with every release.
 *
 * TXS_UNSTABLE_API: the fast path's inline functions (txs_txq_*,
 * txs_rx_input_poll, txs_tmpl_patch*, txs_pcap_next, txs_stamper_*,
 * txs_ident_*reserve_fast, txs_linksel_select*, txs_hist_add_fast) compile
 * the library's internal struct layouts into the caller, where no symbol
 * version can catch a change. They are declared only to a program that
 * defines TXS_UNSTABLE_API before its first txscale include (-DTXS_UNSTABLE_API),
 * and so says it is built for this release only. The library, the CLI, the
 * tests and the benchmarks define it (CMakeLists.txt). */

/* Cache-line size used for per-core layout. */
#define TXS_CACHE_LINE 64
#define TXS_CACHE_ALIGNED __attribute__((aligned(TXS_CACHE_LINE)))
/* A named guard line: placed after per-core hot data so that the adjacent-line
 * prefetcher does not couple two cores' lines (DPDK RTE_CACHE_GUARD). */
#define TXS_CACHE_GUARD_(l) char txs_cache_guard_##l[TXS_CACHE_LINE] TXS_CACHE_ALIGNED
#define TXS_CACHE_GUARD_X(l) TXS_CACHE_GUARD_(l)
#define TXS_CACHE_GUARD TXS_CACHE_GUARD_X(__LINE__)

#define TXS_LIKELY(x) __builtin_expect(!!(x), 1)
#define TXS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TXS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TXS_STR_(x) #x
#define TXS_XSTR(x) TXS_STR_(x) /* a macro's value as a string literal */

/* Most cores / workers one engine runs. */
#define TXS_MAX_CORES 256
/* Most links one device exposes. */
#define TXS_MAX_LINKS 16

/* Single-writer counters: the owning thread adds, any thread may read.
 * Relaxed atomics compile to plain loads/stores on x86 and keep TSan honest. */
#define TXS_STAT_ADD(field, n) \
	__atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (n), __ATOMIC_RELAXED)
#define TXS_STAT_READ(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

/* Monotonic and realtime clocks in ns (lib/common/util.c). Any thread. */
TXS_API uint64_t txs_now_mono_ns(void);
TXS_API uint64_t txs_now_real_ns(void);

/* Room for `need` open files: the soft RLIMIT_NOFILE raised to need (at
 * most the hard limit; lib/common/util.c). 0, or -1 with *limit = the most
 * there can be. Any thread (the limit is the process's). */
TXS_API int txs_nofile_raise(unsigned long long need, unsigned long long *limit);
/* Pin the calling thread to CPU `cpu` (-1: leave it where it may run).
 * 0, or -EINVAL (no such CPU, or not one this process may use). */
TXS_API int txs_pin_self(int cpu);

/* Worker CPUs (lib/common/util.c): the given list in order, wrapping, or
 * (none given) the CPUs this process may run on, in order, wrapping; -1
 * for every worker with no_pin. Any thread. */
TXS_API void txs_cpus_assign(const int *given, unsigned n_given, bool no_pin, unsigned n, int *cpus);

/* The values of options as users write them (lib/common/parse.c); each
 * returns 0, or -EINVAL on a bad value. Any thread.
 *   count:   "1000", "10k", "1.5M", "2G" (powers of 1000), a whole number
 *   seconds: "10", "0.5", "2s", "250ms", "100us", "1m"/"1min"; at most 1e7
 *   rate:    packets/s "1M", "10kpps", or frame bits/s (*bits) "100Mbit",
 *            "1.5Gbps"; "0" = unlimited; at most 1e12
 *   cpus:    a CPU list "0-3,6" of CPUs this process may run on, each once,
 *            at most max; err names the bad part */
TXS_API int txs_parse_count(const char *s, uint64_t *out);
TXS_API int txs_parse_seconds(const char *s, double *out);
/* A rate in iperf's grammar: NUMBER[k|M|G|T][bit|bps|pps] (powers of 1000);
 * bits/s unless "pps" ends it (datagrams/s). *bits says which. */
TXS_API int txs_parse_rate(const char *s, double *value, bool *bits);
TXS_API int txs_parse_cpus(const char *s, int *cpu, unsigned max, unsigned *n, char *err, size_t errlen);

/* splitmix64 step: the workers' RNG, and the seeding of every per-core
 * generator (ident's xoshiro, the pacers). */
static inline uint64_t txs_rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The version of the library running ("MAJOR.MINOR.PATCH"), and its parts:
 * compare with TXS_VERSION_MAJOR/MINOR/PATCH (txscale/version.h), the
 * headers' version, to learn what the program was built against. Any
 * thread. */
TXS_API const char *txs_version(void);
TXS_API int txs_version_major(void);
TXS_API int txs_version_minor(void);
TXS_API int txs_version_patch(void);

/* A short text for a txscale error code (negative errno). */
TXS_API const char *txs_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif
