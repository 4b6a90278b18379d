/* SPDX-License-Identifier: MIT */
/* Child processes bounded in time (proc.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/proc.h"

/* ---- files ------------------------------------------------------------------- */

void txs_paths_remove(const struct txs_paths *p)
{
	unlink(p->send_json);
	unlink(p->recv_json);
	unlink(p->send_err);
	unlink(p->recv_err);
	if (p->dir[0])
		rmdir(p->dir);
}

int txs_paths_make(struct txs_paths *p, const char *what)
{
	const char *t = getenv("TMPDIR");
	int n = snprintf(p->dir, sizeof(p->dir), "%s/txscale-%s.XXXXXX", t && *t ? t : "/tmp", what);
	if (n < 0 || (size_t)n >= sizeof(p->dir)) {
		p->dir[0] = 0;
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(p->dir)) {
		p->dir[0] = 0;
		return -errno;
	}
	/* the receiver may run as another namespace's root: same uid, keep 0700 */
	snprintf(p->send_json, sizeof(p->send_json), "%s/send.json", p->dir);
	snprintf(p->recv_json, sizeof(p->recv_json), "%s/recv.json", p->dir);
	snprintf(p->send_err, sizeof(p->send_err), "%s/send.err", p->dir);
	snprintf(p->recv_err, sizeof(p->recv_err), "%s/recv.err", p->dir);
	return 0;
}

/* Whole file into a NUL-terminated buffer (at most TXS_PROC_MAX_FILE); NULL if absent. */
char *txs_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *b = malloc(TXS_PROC_MAX_FILE + 1);
	size_t n = b ? fread(b, 1, TXS_PROC_MAX_FILE, f) : 0;
	fclose(f);
	if (!b)
		return NULL;
	b[n] = 0;
	*len = n;
	return b;
}

/* The last non-empty line of a child's stderr, for one-line errors. */
void txs_last_line(const char *path, char *out, size_t outlen)
{
	size_t n;
	char *b = txs_slurp(path, &n);
	out[0] = 0;
	if (!b)
		return;
	while (n && (b[n - 1] == '\n' || b[n - 1] == '\r'))
		b[--n] = 0;
	char *s = strrchr(b, '\n');
	snprintf(out, outlen, "%s", s ? s + 1 : b);
	free(b);
}

/* One JSON line: trim trailing newlines; the summary files hold exactly one. */
size_t txs_trim(char *b, size_t n)
{
	while (n && (b[n - 1] == '\n' || b[n - 1] == '\r' || b[n - 1] == ' '))
		b[--n] = 0;
	return n;
}

/* ---- child processes ----------------------------------------------------------- */

void txs_arg(struct txs_args *a, const char *s)
{
	if (a->n < TXS_PROC_MAX_ARGS)
		a->v[a->n++] = s;
	else
		a->overflow = true;
	a->v[a->n] = NULL;
}

const char *txs_arg_fmt(struct txs_args *a, const char *fmt, double v)
{
	if (a->nnum >= 16) {
		a->overflow = true;
		return "0";
	}
	char *b = a->num[a->nnum++];
	snprintf(b, sizeof(a->num[0]), fmt, v);
	return b;
}

/* ip netns exec NS EXE (or EXE alone) */
void txs_arg_prefix(struct txs_args *a, const char *netns, const char *exe)
{
	if (netns) {
		txs_arg(a, "ip");
		txs_arg(a, "netns");
		txs_arg(a, "exec");
		txs_arg(a, netns);
	}
	txs_arg(a, exe);
}

/* In a new child: dies with its parent, stdin and stdout from and to
 * /dev/null, stderr to errpath (NULL: /dev/null), keep_fd kept across
 * exec, the signals the parent handles back to their defaults. false: the
 * parent is gone. */
static bool child_setup(pid_t parent, const char *errpath, int keep_fd)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		return false;
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	int err = errpath ? open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
	if (nul >= 0) {
		dup2(nul, STDIN_FILENO);
		dup2(nul, STDOUT_FILENO);
	}
	if (err >= 0)
		dup2(err, STDERR_FILENO);
	else if (nul >= 0)
		dup2(nul, STDERR_FILENO);
	if (keep_fd >= 0)
		fcntl(keep_fd, F_SETFD, 0);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* a thread that blocks signals (a library session's) does not hand that on: exec keeps the mask */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return true;
}

/* fork, and in the child child_setup (or _exit 127): 0 in the child, the
 * pid or -errno in the parent. */
static pid_t fork_child(const char *errpath, int keep_fd)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	/* a child never outlives the process that runs it */
	if (pid == 0 && !child_setup(parent, errpath, keep_fd))
		_exit(127);
	return pid;
}

pid_t txs_spawn(const struct txs_args *a, const char *errpath, int keep_fd)
{
	pid_t pid = fork_child(errpath, keep_fd);
	if (pid == 0) {
		execvp(a->v[0], (char *const *)a->v);
		fprintf(stderr, "cannot run %s: %s\n", a->v[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* What exec would do to the descriptors: those marked close-on-exec close */
static void close_cloexec(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd <= STDERR_FILENO || fd == self)
			continue;
		int fl = fcntl((int)fd, F_GETFD);
		if (fl >= 0 && (fl & FD_CLOEXEC))
			close((int)fd);
	}
	closedir(d);
}

pid_t txs_spawn_call(int (*fn)(void *), void *arg, const char *errpath, int keep_fd)
{
	fflush(NULL); /* the child flushes its copy of our buffers when it ends */
	pid_t pid = fork_child(errpath, keep_fd);
	if (pid == 0) {
		close_cloexec();
		int rc = fn(arg);
		fflush(NULL);
		_exit(rc & 0xff);
	}
	return pid;
}

/* Reap pid if it has exited: 1 and *status, 0 still running. */
int txs_reaped(pid_t pid, int *status)
{
	pid_t r = waitpid(pid, status, WNOHANG);
	return r == pid ? 1 : 0;
}

/* Wait up to grace s for pid to exit by itself, then SIGTERM, then SIGKILL
 * after 2 s; always reaps. Returns true when it had exited by itself
 * (*status set). */
bool txs_stop_child(pid_t pid, double grace, int *status)
{
	int st = 0;
	if (pid <= 0)
		return false;
	double end = txs_mono_s() + grace;
	for (;;) {
		if (txs_reaped(pid, &st)) {
			if (status)
				*status = st;
			return true;
		}
		if (txs_mono_s() >= end)
			break;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGTERM);
	end = txs_mono_s() + 2.0;
	while (txs_mono_s() < end) {
		if (txs_reaped(pid, &st))
			return false;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return false;
}

void txs_describe_exit(int st, char *out, size_t len)
{
	if (WIFEXITED(st))
		snprintf(out, len, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(out, len, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(out, len, "status %d", st);
}

/* Write text (and a newline) to path through a temporary name, so a reader
 * sees all or nothing. 0 or -errno. */
int txs_write_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fputs(text, f);
	fputc('\n', f);
	if (fclose(f) != 0) {
		unlink(tmp);
		return -EIO;
	}
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return -e;
	}
	return 0;
}

int txs_ready_line_step(int fd, char *line, size_t len, size_t *got)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	if (poll(&pf, 1, 50) <= 0)
		return 0;
	ssize_t n = read(fd, line + *got, len - 1 - *got);
	if (n > 0) {
		*got += (size_t)n;
		line[*got] = 0;
		return strchr(line, '\n') || *got == len - 1 ? 1 : 0;
	}
	return n < 0 && errno == EINTR ? 0 : -1;
}

/* ---- a child's readiness, end and failure ---------------------------------------- */

void txs_child_why(char *out, size_t len, const char *what, const int *status, const char *otherwise,
		   const char *errpath)
{
	char why[256], ex[64];
	if (status)
		txs_describe_exit(*status, ex, sizeof(ex));
	else
		snprintf(ex, sizeof(ex), "%s", otherwise);
	txs_last_line(errpath, why, sizeof(why));
	snprintf(out, len, "%s (%s): %s", what, ex, why[0] ? why : "no message");
}

int txs_wait_ready(int rfd, pid_t pid, const char *who, const char *errpath, double timeout_s,
		   const volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	double t0 = txs_mono_s();
	char line[16] = "";
	size_t got = 0;
	for (;;) {
		if (txs_stopped(stop)) {
			txs_stop_child(pid, 0, NULL);
			return -EINTR;
		}
		if (txs_mono_s() - t0 > timeout_s) {
			snprintf(err, errlen, "%s was not ready within %.0f s", who, timeout_s);
			txs_stop_child(pid, 0, NULL);
			return -ETIMEDOUT;
		}
		if (txs_ready_line_step(rfd, line, sizeof(line), &got) != 0)
			break;
	}
	if (strncmp(line, "ready\n", 6) == 0)
		return 0;
	char what[128];
	int st;
	bool self = txs_stop_child(pid, 1.0, &st);
	snprintf(what, sizeof(what), "%s did not start", who);
	txs_child_why(err, errlen, what, self ? &st : NULL, "no ready line", errpath);
	return -EIO;
}

pid_t txs_spawn_ready(const struct txs_args *a, const char *errpath, int ready[2], const char *who, double timeout_s,
		      const volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	pid_t pid = txs_spawn(a, errpath, ready[1]);
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		snprintf(err, errlen, "cannot start %s: %s", who, strerror((int)-pid));
		return pid;
	}
	int rc = txs_wait_ready(ready[0], pid, who, errpath, timeout_s, stop, err, errlen);
	close(ready[0]);
	return rc < 0 ? rc : pid;
}

/* Stop the children of c[0..n) still running, in order. Returns rc. */
static int stop_children(struct txs_child *c, unsigned n, int rc)
{
	for (unsigned i = 0; i < n; i++)
		if (c[i].pid > 0 && !c[i].done)
			c[i].done = txs_stop_child(c[i].pid, 0, &c[i].status);
	return rc;
}

static bool child_ok(const struct txs_child *c)
{
	return c->pid <= 0 || (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0);
}

static int child_failed(const struct txs_child *c, char *err, size_t errlen)
{
	char what[128];
	snprintf(what, sizeof(what), "%s failed", c->who);
	txs_child_why(err, errlen, what, &c->status, NULL, c->errpath);
	return -EIO;
}

int txs_wait_children(struct txs_child *c, unsigned n, double limit_s, const volatile sig_atomic_t *stop, char *err,
		      size_t errlen)
{
	double deadline = txs_mono_s() + limit_s;
	for (unsigned i = 0; i < n; i++) {
		c[i].done = c[i].pid <= 0;
		c[i].status = 0;
	}
	for (;;) {
		unsigned running = 0;
		if (txs_stopped(stop))
			return stop_children(c, n, -EINTR);
		if (txs_mono_s() > deadline) {
			for (unsigned i = 0; i < n; i++)
				if (!c[i].done) {
					snprintf(err, errlen, "%s did not finish within %.0f s", c[i].who, limit_s);
					break;
				}
			return stop_children(c, n, -ETIMEDOUT);
		}
		for (unsigned i = 0; i < n; i++) {
			if (!c[i].done && txs_reaped(c[i].pid, &c[i].status)) {
				c[i].done = true;
				if (c[i].fail_fast && !child_ok(&c[i])) {
					child_failed(&c[i], err, errlen);
					return stop_children(c, n, -EIO);
				}
			}
			running += !c[i].done;
		}
		if (!running)
			break;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	for (unsigned i = 0; i < n; i++)
		if (!child_ok(&c[i]))
			return child_failed(&c[i], err, errlen);
	return 0;
}
