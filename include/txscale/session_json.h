/* SPDX-License-Identifier: MIT */
/* The JSON session boundary (docs/library.md): the stable way for a
 * program, or another language (python/txscale), to run txscale's
 * sessions, as libnftables' JSON is for nftables. Config in, stats and
 * summary out, all JSON; no struct whose layout the caller fills.
 *
 *   struct txs_session *s;
 *   char err[256];
 *   txs_session_new(&s, "recv", "{\"port\": 5201, \"time\": 5}", err, sizeof(err));
 *   txs_session_start(s);                    runs on the library's own thread
 *   txs_session_stats_json(s, &line);        a snapshot, any thread
 *   txs_session_stop(s);                     any thread, a signal handler
 *   txs_session_wait(s, -1, &summary);       the summary line
 *   txs_session_free(s);
 *
 * Kinds (txs_session_kinds()): "send" and "recv"; "ndr", the no-drop-rate
 * search (its trials run the txscale program, found as $TXSCALE_BIN, the
 * calling program when it is txscale, or txscale in $PATH: -ENOENT at new
 * when none is); "server", which forks a process per session (fork from
 * a threaded program: the children run only libtxscale's code) and ends
 * when stopped or, with one-off, after its one session.
 *
 * Config: one JSON object whose keys are the long options of `txscale
 * KIND` (txscale KIND --help), the values as the CLI takes them: a string
 * ("10kpps", "0-1", "250ms"), a number (5, 0.5: as its decimal text), or a
 * boolean (true sets a flag; false leaves it off). send's and ndr's
 * destination is the key "dest". The options of the CLI alone (-J, --summary-file,
 * --dry-run, the control channel, --metrics) are not session keys. One
 * option table in the library drives the CLI, these keys, --help and the
 * Python keywords.
 *
 * Errors: every function returns 0 or a negative errno and never prints or
 * exits. A refused config is -EINVAL with one line in err naming the option
 * by its long name and the value ("bad value for --bitrate: 'x': expected
 * ..."; "unknown option 'rate' for a send session"; "config: bad JSON ...").
 *
 * Concurrency: new, start, wait and free from one controlling thread (or
 * from threads that the caller orders); txs_session_stats_json and
 * txs_session_error from any thread while the session exists;
 * txs_session_stop from any thread or a signal handler, at any time
 * between new and free (one atomic store: async-signal-safe, wait-free). */
#ifndef TXSCALE_SESSION_JSON_H
#define TXSCALE_SESSION_JSON_H
#include <stddef.h>
#include <txscale/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_session;

/* The kinds txs_session_new takes, NULL-terminated. Any thread. */
TXS_API const char *const *txs_session_kinds(void);

/* Parse and check config_json (NULL = "{}") for a session of kind, and open
 * what it needs (send: the device, the engine; recv: the input, bound):
 * nothing runs yet. 0 with *out set, or -errno with one line in err (*out
 * NULL): -EINVAL for a refused kind, config or value (NULL out or kind
 * included); for the input/device, -ENODEV, -ENOENT, -EADDRINUSE and the
 * like as txs_send_open / txs_recv_open return them. */
TXS_API int txs_session_new(struct txs_session **out, const char *kind, const char *config_json, char *err,
			    size_t errlen);

/* Run the session on a thread of the library's own (signals blocked on it).
 * Once: -EALREADY after the first; -EINVAL for NULL; -errno when the
 * thread could not be created. */
TXS_API int txs_session_start(struct txs_session *s);

/* A snapshot of the session's counters as one JSON object (no newline),
 * {"type":"stats","kind":...,"state":"new"|"running"|"done",...}
 * (docs/json-schema.md, "session stats"), read from the per-core counters
 * as the interval reports are (never the per-packet path). *json is
 * malloc'd: txs_session_str_free it. Any thread. 0, -EINVAL, -ENOMEM. */
TXS_API int txs_session_stats_json(struct txs_session *s, char **json);

/* End the run early (or, before start, make it end at once). Any thread,
 * async-signal-safe. NULL is fine. */
TXS_API void txs_session_stop(struct txs_session *s);

/* Wait for the run to end, at most timeout_ms (negative: no limit). On the
 * end, *summary_json (may be NULL) is the summary line of `txscale KIND -J`
 * (ndr: its result line; server: the session's own summary; docs/json-schema.md, no newline), owned by the session until
 * txs_session_free, and the return is the run's: 0, or -errno when it
 * failed (the summary still set when one was made; txs_session_error says
 * why). -ETIMEDOUT: still running; -EINVAL: NULL or not started. */
TXS_API int txs_session_wait(struct txs_session *s, int timeout_ms, const char **summary_json);

/* What went wrong or was noted during the run, one line each (no program
 * name), or "" when nothing was. Owned by the session; after wait returned
 * the run's end, stable. */
TXS_API const char *txs_session_error(struct txs_session *s);

/* Stop the run if it runs, wait for it, close everything. NULL is fine. */
TXS_API void txs_session_free(struct txs_session *s);

/* Free a string the sessions malloc'd for the caller (stats). */
TXS_API void txs_session_str_free(char *p);

/* The options a kind's config takes, as one JSON array of objects
 * {"name":..., "short":"b"|null, "metavar":..., "flag":bool, "default":...|null,
 * "help":...} in --help's order; "dest" first for send. *json is malloc'd
 * (txs_session_str_free). 0, -EINVAL (unknown kind), -ENOMEM. */
TXS_API int txs_session_options_json(const char *kind, char **json);

#ifdef __cplusplus
}
#endif
#endif
