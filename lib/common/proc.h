/* SPDX-License-Identifier: MIT */
/* Child processes bounded in time: argument vectors, fork + exec (or fork +
 * a function), reaping, a graceful-then-forced stop, and the small file
 * helpers around the summaries children leave. A child never outlives the
 * process that started it. For processes that run no other thread while
 * they fork (the server's sessions, ndr's trials). Not public. */
#ifndef TXS_COMMON_PROC_H
#define TXS_COMMON_PROC_H
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <txscale/common.h>
#include "clock.h"

#define TXS_PROC_MAX_ARGS 96
#define TXS_PROC_MAX_FILE (1u << 20)

/* A temporary directory with the four files of a trial. */
struct txs_paths {
	char dir[PATH_MAX - 64]; /* room for the file names below */
	char send_json[PATH_MAX], recv_json[PATH_MAX], send_err[PATH_MAX], recv_err[PATH_MAX];
};
void txs_paths_remove(const struct txs_paths *p);
int txs_paths_make(struct txs_paths *p, const char *what); /* $TMPDIR/txscale-WHAT.XXXXXX */

/* Whole file into a NUL-terminated buffer (at most TXS_PROC_MAX_FILE); NULL if absent. */
char *txs_slurp(const char *path, size_t *len);
/* The last non-empty line of a child's stderr, for one-line errors. */
void txs_last_line(const char *path, char *out, size_t outlen);
/* text + newline into path via path.tmp and rename: 0 or -errno */
int txs_write_atomic(const char *path, const char *text);
/* Trim trailing newlines and spaces; returns the new length. */
size_t txs_trim(char *b, size_t n);

struct txs_args {
	const char *v[TXS_PROC_MAX_ARGS + 1];
	unsigned n;
	char num[16][48];
	unsigned nnum;
	bool overflow;
};
void txs_arg(struct txs_args *a, const char *s);
const char *txs_arg_fmt(struct txs_args *a, const char *fmt, double v);
/* ip netns exec NS EXE (or EXE alone) */
void txs_arg_prefix(struct txs_args *a, const char *netns, const char *exe);

/* fork + exec with stdout to /dev/null, stderr to errpath (NULL:
 * /dev/null); keep_fd stays open across exec. Returns the pid or -errno.
 * The child is killed when its parent dies (PR_SET_PDEATHSIG). */
pid_t txs_spawn(const struct txs_args *a, const char *errpath, int keep_fd);
/* fork and run fn(arg) in the child as txs_spawn() would run a program there
 * (stdout to /dev/null, stderr to errpath, the descriptors marked
 * close-on-exec closed but keep_fd, killed with its parent); the child
 * exits with fn's return value. For a process that runs no other thread.
 * Returns the pid or -errno. */
pid_t txs_spawn_call(int (*fn)(void *), void *arg, const char *errpath, int keep_fd);
/* Reap pid if it has exited: 1 and *status, 0 still running. */
int txs_reaped(pid_t pid, int *status);
/* Wait up to grace s for pid to exit by itself, then SIGTERM, then SIGKILL
 * after 2 s; always reaps. Returns true when it had exited by itself
 * (*status set). */
bool txs_stop_child(pid_t pid, double grace, int *status);
/* Whether *stop (a stop flag a signal handler or another thread sets; NULL:
 * never) is set: a relaxed atomic load. */
static inline bool txs_stopped(const volatile sig_atomic_t *stop)
{
	return stop && __atomic_load_n(stop, __ATOMIC_RELAXED);
}
void txs_describe_exit(int st, char *out, size_t len);
/* One step of reading the line a child writes on its ready fd (line has
 * len bytes, got of them read): waits up to 50 ms. 1: the line is whole
 * (or line is full), -1: the fd is closed or failed, 0: not yet. */
int txs_ready_line_step(int fd, char *line, size_t len, size_t *got);

/* Why a child failed, as one line into out: "WHAT (HOW): LAST", HOW being
 * txs_describe_exit(*status), or `otherwise` when status is NULL (the child
 * did not end by itself), LAST the last line of its stderr file errpath
 * (up to 255 bytes; "no message" when it wrote none). */
void txs_child_why(char *out, size_t len, const char *what, const int *status, const char *otherwise,
		   const char *errpath);

/* Wait for the "ready" line that child pid writes on rfd once it is set
 * up (recv --ready-fd), at most timeout_s, looking at *stop (stop may be
 * NULL) every 50 ms. 0: ready, the child runs on. Otherwise the child is
 * stopped and reaped, and the return is
 *   -EINTR      *stop was set;
 *   -ETIMEDOUT  err: "WHO was not ready within T s";
 *   -EIO        rfd ended without the line: err "WHO did not start (HOW):
 *               LAST" (txs_child_why; HOW "no ready line" when the child
 *               had not exited 1 s later).
 * WHO is `who` as given ("the receiver"). rfd stays the caller's. */
int txs_wait_ready(int rfd, pid_t pid, const char *who, const char *errpath, double timeout_s,
		   const volatile sig_atomic_t *stop, char *err, size_t errlen);
/* txs_spawn(a, errpath, ready[1]) and txs_wait_ready on ready[0]: a's
 * argument vector names ready[1] as the child's ready fd, ready is the
 * caller's pipe2(O_CLOEXEC); both ends are closed on return. The pid of the
 * ready child, or -errno as txs_wait_ready says (nothing left running);
 * when fork fails, err: "cannot start WHO: REASON". */
pid_t txs_spawn_ready(const struct txs_args *a, const char *errpath, int ready[2], const char *who, double timeout_s,
		      const volatile sig_atomic_t *stop, char *err, size_t errlen);

/* A child that txs_wait_children waits for. */
struct txs_child {
	pid_t pid;           /* <= 0: none (counts as exited with status 0) */
	const char *who;     /* "the sender": names it in err */
	const char *errpath; /* its stderr file (txs_child_why) */
	bool fail_fast;      /* its failure ends the wait at once */
	bool done;           /* out: it exited by itself (status set) */
	int status;          /* out: its wait status */
};
/* Wait until each of the n children has exited by itself, at most limit_s,
 * looking at *stop (stop may be NULL) every 10 ms. 0 when each exited with
 * status 0. Otherwise the children still running are stopped
 * (txs_stop_child, in array order) and reaped, and the return is
 *   -EINTR      *stop was set;
 *   -ETIMEDOUT  err: "WHO did not finish within T s", WHO the first child
 *               still running;
 *   -EIO        err: "WHO failed (HOW): LAST" (txs_child_why) for a
 *               fail_fast child that exited with a status other than 0
 *               (at once), else, once all exited, for the first that did. */
int txs_wait_children(struct txs_child *c, unsigned n, double limit_s, const volatile sig_atomic_t *stop, char *err,
		      size_t errlen);
#endif
