/* SPDX-License-Identifier: MIT */
/* The bounded child processes of lib/common/proc.h that the ndr trials use:
 * a child's "ready" line (written, never written before it exits, never
 * written at all, a stop asked for meanwhile), the wait for several
 * children (all fine, one failing, a deadline, a stop) and the one line
 * saying why a child failed. Each child is a forked function or /bin/sh;
 * every path that gives up on a child must leave it reaped. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/proc.h"
#define T_TMPDIR_NAME "txs_proc"
#include "test_tmpdir.h"

/* ---- children (forked functions: stderr goes to the errpath given) ---- */

static int child_ready(void *arg)
{
	int fd = *(int *)arg;
	return write(fd, "ready\n", 6) == 6 ? 0 : 1;
}

static int child_fails(void *arg)
{
	(void)arg;
	fprintf(stderr, "starting\ntxscale recv: bad value for --dev: 'nope'\n\n");
	return 3;
}

static int child_hangs(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static int child_exits(void *arg)
{
	fprintf(stderr, "child exits %d\n", *(int *)arg);
	return *(int *)arg;
}

/* pid is gone: reaped by the code under test, no zombie left for us */
static void assert_reaped(pid_t pid)
{
	int st;
	errno = 0;
	assert_int_equal(waitpid(pid, &st, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static pid_t spawn_fn(int (*fn)(void *), void *arg, const char *errpath, int keep_fd)
{
	pid_t pid = txs_spawn_call(fn, arg, errpath, keep_fd);
	assert_true(pid > 0);
	return pid;
}

/* ---- txs_child_why ---------------------------------------------------------------- */

static void why_names_status_and_last_line(void **st)
{
	(void)st;
	char path[256], out[512];
	t_tmppath(path, sizeof(path), "why.err");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("first line\nthe last line\n\n", f);
	fclose(f);
	txs_child_why(out, sizeof(out), "the sender failed", &(int){ 2 << 8 }, NULL, path);
	assert_string_equal(out, "the sender failed (exit status 2): the last line");
	txs_child_why(out, sizeof(out), "the sender failed", &(int){ SIGKILL }, NULL, path);
	assert_string_equal(out, "the sender failed (killed by signal 9): the last line");
	txs_child_why(out, sizeof(out), "sender check failed", NULL, "did not finish", path);
	assert_string_equal(out, "sender check failed (did not finish): the last line");
	t_tmppath(path, sizeof(path), "absent.err");
	txs_child_why(out, sizeof(out), "the receiver failed", &(int){ 1 << 8 }, NULL, path);
	assert_string_equal(out, "the receiver failed (exit status 1): no message");
}

/* ---- txs_wait_ready ----------------------------------------------------------------- */

static void ready_child_runs_on(void **st)
{
	(void)st;
	int pfd[2], s;
	char path[256], err[512] = "";
	t_tmppath(path, sizeof(path), "ready.err");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = spawn_fn(child_ready, &pfd[1], path, pfd[1]);
	close(pfd[1]);
	assert_int_equal(txs_wait_ready(pfd[0], pid, "the receiver", path, 10, NULL, err, sizeof(err)), 0);
	close(pfd[0]);
	assert_string_equal(err, "");
	/* the child is the caller's again: not reaped by the wait */
	assert_int_equal(waitpid(pid, &s, 0), pid);
	assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
}

static void ready_from_a_program(void **st)
{
	(void)st;
	int pfd[2], s;
	char path[256], cmd[64], err[512] = "";
	volatile sig_atomic_t stop = 0;
	t_tmppath(path, sizeof(path), "sh.err");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	snprintf(cmd, sizeof(cmd), "echo ready >/proc/self/fd/%d", pfd[1]);
	struct txs_args a = { .n = 0 };
	txs_arg(&a, "/bin/sh");
	txs_arg(&a, "-c");
	txs_arg(&a, cmd);
	pid_t pid = txs_spawn_ready(&a, path, pfd, "the receiver", 10, &stop, err, sizeof(err));
	assert_true(pid > 0);
	assert_string_equal(err, "");
	assert_int_equal(fcntl(pfd[0], F_GETFD), -1); /* both ends closed */
	assert_int_equal(fcntl(pfd[1], F_GETFD), -1);
	assert_int_equal(waitpid(pid, &s, 0), pid);
	assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
}

static void exits_before_ready(void **st)
{
	(void)st;
	int pfd[2];
	char path[256], err[512] = "";
	t_tmppath(path, sizeof(path), "early.err");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = spawn_fn(child_fails, NULL, path, pfd[1]);
	close(pfd[1]);
	assert_int_equal(txs_wait_ready(pfd[0], pid, "the receiver", path, 10, NULL, err, sizeof(err)), -EIO);
	close(pfd[0]);
	assert_string_equal(err, "the receiver did not start (exit status 3): txscale recv: bad value for --dev: 'nope'");
	assert_reaped(pid);
}

static void never_ready_times_out(void **st)
{
	(void)st;
	int pfd[2];
	char path[256], err[512] = "";
	t_tmppath(path, sizeof(path), "hang.err");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = spawn_fn(child_hangs, NULL, path, pfd[1]);
	/* our copy of the write end stays open: no EOF, only the timeout ends the wait */
	assert_int_equal(txs_wait_ready(pfd[0], pid, "the receiver", path, 0.2, NULL, err, sizeof(err)), -ETIMEDOUT);
	close(pfd[0]);
	close(pfd[1]);
	assert_string_equal(err, "the receiver was not ready within 0 s");
	assert_reaped(pid);
}

static void stop_while_waiting_for_ready(void **st)
{
	(void)st;
	int pfd[2];
	char path[256], err[512] = "";
	volatile sig_atomic_t stop = 1;
	t_tmppath(path, sizeof(path), "stop.err");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = spawn_fn(child_hangs, NULL, path, pfd[1]);
	assert_int_equal(txs_wait_ready(pfd[0], pid, "the receiver", path, 3600, &stop, err, sizeof(err)), -EINTR);
	close(pfd[0]);
	close(pfd[1]);
	assert_reaped(pid);
}

static void spawn_ready_fails_to_exec(void **st)
{
	(void)st;
	int pfd[2];
	char path[256], err[512] = "";
	t_tmppath(path, sizeof(path), "noexec.err");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	struct txs_args a = { .n = 0 };
	txs_arg(&a, "/nonexistent/txscale");
	assert_int_equal(txs_spawn_ready(&a, path, pfd, "the receiver", 10, NULL, err, sizeof(err)), -EIO);
	assert_string_equal(err, "the receiver did not start (exit status 127): cannot run /nonexistent/txscale: No "
				 "such file or directory");
}

/* ---- txs_wait_children --------------------------------------------------------------- */

static void children_all_fine(void **st)
{
	(void)st;
	char p0[256], p1[256], err[512] = "";
	int zero = 0;
	t_tmppath(p0, sizeof(p0), "ok0.err");
	t_tmppath(p1, sizeof(p1), "ok1.err");
	struct txs_child c[3] = { { .pid = spawn_fn(child_exits, &zero, p0, -1), .who = "the sender", .errpath = p0,
				    .fail_fast = true },
				  { .pid = -1, .who = "nobody" }, /* none: as if it exited 0 */
				  { .pid = spawn_fn(child_exits, &zero, p1, -1), .who = "the receiver", .errpath = p1 } };
	pid_t pids[2] = { c[0].pid, c[2].pid };
	assert_int_equal(txs_wait_children(c, 3, 3600, NULL, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_true(c[0].done && c[2].done);
	assert_true(WIFEXITED(c[0].status) && WEXITSTATUS(c[0].status) == 0);
	assert_reaped(pids[0]);
	assert_reaped(pids[1]);
}

static void fail_fast_child_stops_the_others(void **st)
{
	(void)st;
	char p0[256], p1[256], err[512] = "";
	t_tmppath(p0, sizeof(p0), "ff0.err");
	t_tmppath(p1, sizeof(p1), "ff1.err");
	struct txs_child c[2] = { { .pid = spawn_fn(child_fails, NULL, p0, -1), .who = "the sender", .errpath = p0,
				    .fail_fast = true },
				  { .pid = spawn_fn(child_hangs, NULL, p1, -1), .who = "the receiver", .errpath = p1 } };
	assert_int_equal(txs_wait_children(c, 2, 3600, NULL, err, sizeof(err)), -EIO);
	assert_string_equal(err, "the sender failed (exit status 3): txscale recv: bad value for --dev: 'nope'");
	assert_true(c[0].done);
	assert_false(c[1].done); /* stopped, not ended by itself */
	assert_reaped(c[0].pid);
	assert_reaped(c[1].pid);
}

static void failure_named_once_all_ended(void **st)
{
	(void)st;
	char p0[256], p1[256], err[512] = "";
	int zero = 0, four = 4;
	t_tmppath(p0, sizeof(p0), "late0.err");
	t_tmppath(p1, sizeof(p1), "late1.err");
	struct txs_child c[2] = { { .pid = spawn_fn(child_exits, &zero, p0, -1), .who = "the sender", .errpath = p0,
				    .fail_fast = true },
				  { .pid = spawn_fn(child_exits, &four, p1, -1), .who = "the receiver", .errpath = p1 } };
	assert_int_equal(txs_wait_children(c, 2, 3600, NULL, err, sizeof(err)), -EIO);
	assert_string_equal(err, "the receiver failed (exit status 4): child exits 4");
	assert_true(c[0].done && c[1].done);
	assert_reaped(c[0].pid);
	assert_reaped(c[1].pid);
}

static void children_past_the_deadline(void **st)
{
	(void)st;
	char p0[256], p1[256], err[512] = "";
	t_tmppath(p0, sizeof(p0), "dl0.err");
	t_tmppath(p1, sizeof(p1), "dl1.err");
	struct txs_child c[2] = { { .pid = spawn_fn(child_hangs, NULL, p0, -1), .who = "the sender", .errpath = p0,
				    .fail_fast = true },
				  { .pid = spawn_fn(child_hangs, NULL, p1, -1), .who = "the receiver", .errpath = p1 } };
	assert_int_equal(txs_wait_children(c, 2, 0.2, NULL, err, sizeof(err)), -ETIMEDOUT);
	assert_string_equal(err, "the sender did not finish within 0 s"); /* the first still running */
	assert_false(c[0].done || c[1].done);
	assert_reaped(c[0].pid);
	assert_reaped(c[1].pid);
	/* without a sender, the receiver is the one named */
	struct txs_child d[2] = { { .pid = -1, .who = "the sender", .fail_fast = true },
				  { .pid = spawn_fn(child_hangs, NULL, p1, -1), .who = "the receiver", .errpath = p1 } };
	assert_int_equal(txs_wait_children(d, 2, 0.2, NULL, err, sizeof(err)), -ETIMEDOUT);
	assert_string_equal(err, "the receiver did not finish within 0 s");
	assert_reaped(d[1].pid);
}

static void stop_kills_and_reaps_children(void **st)
{
	(void)st;
	char p0[256], p1[256], err[512] = "";
	volatile sig_atomic_t stop = 1;
	t_tmppath(p0, sizeof(p0), "st0.err");
	t_tmppath(p1, sizeof(p1), "st1.err");
	struct txs_child c[2] = { { .pid = spawn_fn(child_hangs, NULL, p0, -1), .who = "the sender", .errpath = p0,
				    .fail_fast = true },
				  { .pid = spawn_fn(child_hangs, NULL, p1, -1), .who = "the receiver", .errpath = p1 } };
	assert_int_equal(txs_wait_children(c, 2, 3600, &stop, err, sizeof(err)), -EINTR);
	assert_false(c[0].done || c[1].done);
	assert_reaped(c[0].pid);
	assert_reaped(c[1].pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(why_names_status_and_last_line),
		cmocka_unit_test(ready_child_runs_on),
		cmocka_unit_test(ready_from_a_program),
		cmocka_unit_test(exits_before_ready),
		cmocka_unit_test(never_ready_times_out),
		cmocka_unit_test(stop_while_waiting_for_ready),
		cmocka_unit_test(spawn_ready_fails_to_exec),
		cmocka_unit_test(children_all_fine),
		cmocka_unit_test(fail_fast_child_stops_the_others),
		cmocka_unit_test(failure_named_once_all_ended),
		cmocka_unit_test(children_past_the_deadline),
		cmocka_unit_test(stop_kills_and_reaps_children),
	};
	return cmocka_run_group_tests(tests, t_tmpdir_setup, t_tmpdir_teardown);
}
