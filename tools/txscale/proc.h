/* SPDX-License-Identifier: MIT */
/* Child processes of this very binary (tools/txscale/proc.c). */
#ifndef TXS_PROC_H
#define TXS_PROC_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MAX_ARGS 96
#define MAX_FILE (1u << 20)
#define PROC_NULL (-1)    /* spawn_io: the stream goes to /dev/null */
#define PROC_INHERIT (-2) /* spawn_io: the stream stays ours */

double mono_s(void);

/* A temporary directory with the four files of a trial. */
struct paths {
	char dir[PATH_MAX - 64]; /* room for the file names below */
	char send_json[PATH_MAX], recv_json[PATH_MAX], send_err[PATH_MAX], recv_err[PATH_MAX];
};
void paths_remove(const struct paths *p);
int paths_make(struct paths *p);                         /* $TMPDIR/txscale-ndr.XXXXXX */
int paths_make_named(struct paths *p, const char *what); /* $TMPDIR/txscale-WHAT.XXXXXX */

/* Whole file into a NUL-terminated buffer (at most MAX_FILE); NULL if absent. */
char *slurp(const char *path, size_t *len);
/* The last non-empty line of a child's stderr, for one-line errors. */
void last_line(const char *path, char *out, size_t outlen);
/* text + newline into path via path.tmp and rename: 0 or -errno */
int write_atomic(const char *path, const char *text);
/* Trim trailing newlines and spaces; returns the new length. */
size_t trim(char *b, size_t n);

struct args {
	const char *v[MAX_ARGS + 1];
	unsigned n;
	char num[16][48];
	unsigned nnum;
	bool overflow;
};
void arg(struct args *a, const char *s);
const char *fmt_arg(struct args *a, const char *fmt, double v);
/* ip netns exec NS EXE (or EXE alone) */
void arg_prefix(struct args *a, const char *netns, const char *exe);

/* fork + exec with stdout to /dev/null, stderr to errpath; keep_fd stays
 * open across exec. Returns the pid or -errno. The child is killed when
 * its parent dies (PR_SET_PDEATHSIG). */
pid_t spawn(const struct args *a, const char *errpath, int keep_fd);
/* The same with a choice: stdout to out_fd (or PROC_NULL / PROC_INHERIT);
 * stderr to errpath when not NULL, else to err_fd (or PROC_NULL / PROC_INHERIT). */
pid_t spawn_io(const struct args *a, int out_fd, const char *errpath, int err_fd, int keep_fd);
/* fork and run fn(arg) in the child as spawn() would run a program there
 * (stdout to /dev/null, stderr to errpath, the descriptors marked
 * close-on-exec closed but keep_fd, killed with its parent); the child
 * exits with fn's return value. For a process that runs no other thread.
 * Returns the pid or -errno. */
pid_t spawn_call(int (*fn)(void *), void *arg, const char *errpath, int keep_fd);
/* Reap pid if it has exited: 1 and *status, 0 still running. */
int reaped(pid_t pid, int *status);
/* Wait up to grace s for pid to exit by itself, then SIGTERM, then SIGKILL
 * after 2 s; always reaps. Returns true when it had exited by itself
 * (*status set). */
bool stop_child(pid_t pid, double grace, int *status);
void describe_exit(int st, char *out, size_t len);
/* One step of reading the line a child writes on its ready fd (line has
 * len bytes, got of them read): waits up to 50 ms. 1: the line is whole
 * (or line is full), -1: the fd is closed or failed, 0: not yet. */
int ready_line_step(int fd, char *line, size_t len, size_t *got);
#endif
