/* SPDX-License-Identifier: MIT */
/* txs_ctl_client_run_sides (txscale/ctl_session.h): our sides on threads
 * of their own against a scripted server over a socketpair. Both ways at
 * once (the server's sender summary reaches our receiver, ours reaches the
 * server, both of ours come back; the side threads block SIGINT), a soft
 * stop that our sender obeys with its summary, and a sender that fails
 * without one (the server is told, the caller gets the exit status). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <txscale/ctl_session.h>
#include "test_util.h"

static const char srv_send[] = "{\"type\":\"summary\",\"kind\":\"send\",\"packets\":777,\"threads\":[{\"id\":0,\"packets\":777}]}";
static const char srv_recv[] = "{\"type\":\"summary\",\"kind\":\"recv\",\"received\":990,\"unique\":990,\"duplicates\":0,\"late\":0,\"unsequenced\":0,\"overflow\":0,\"lost\":10,\"expected\":1000,\"excess\":0,\"lost_exact\":true}";
static const char cli_send[] = "{\"type\":\"summary\",\"kind\":\"send\",\"packets\":1000,\"threads\":[{\"id\":0,\"packets\":1000}]}";
static const char cli_recv[] = "{\"type\":\"summary\",\"kind\":\"recv\",\"received\":777}";

/* ---- a scripted server: hello, setup, ready, its results, our done ---------------------------------- */

struct ssrv {
	int fd;
	struct txs_ctl_msg setup;
	struct txs_ctl_msg done;
	bool got_done;
};

static void *script(void *arg)
{
	struct ssrv *f = arg;
	char err[256];
	struct txs_ctl_msg m = { .type = TXS_CTL_HELLO };
	snprintf(m.software, sizeof(m.software), "script");
	if (txs_ctl_write(f->fd, &m, 2000, err, sizeof(err)) < 0 ||
	    txs_ctl_read(f->fd, &f->setup, TXS_CTL_SMALL_MAX, 2000, err, sizeof(err)) < 0)
		return NULL;
	uint32_t test = f->setup.test;
	m = (struct txs_ctl_msg){ .type = TXS_CTL_READY, .test = test };
	txs_ctl_write(f->fd, &m, 2000, err, sizeof(err));
	if (f->setup.send.on) { /* our receiver needs this before its idle end */
		m = (struct txs_ctl_msg){ .type = TXS_CTL_RESULT, .test = test, .sender = (char *)srv_send };
		txs_ctl_write(f->fd, &m, 2000, err, sizeof(err));
	}
	if (f->setup.recv.on && txs_ctl_read(f->fd, &f->done, TXS_CTL_SMALL_MAX, 10000, err, sizeof(err)) == 0) {
		f->got_done = true;
		m = (struct txs_ctl_msg){ .type = TXS_CTL_RESULT, .test = test, .receiver = (char *)srv_recv };
		txs_ctl_write(f->fd, &m, 2000, err, sizeof(err));
	}
	struct txs_ctl_msg bye;
	if (txs_ctl_read(f->fd, &bye, TXS_CTL_SMALL_MAX, 5000, err, sizeof(err)) == 0)
		txs_ctl_msg_free(&bye);
	return NULL;
}

/* ---- our sides --------------------------------------------------------------------------------- */

struct ours {
	int stopping;         /* what stopping() answers */
	int send_status;      /* our sender's exit status */
	bool send_summary;    /* ... whether it writes one */
	bool wait_stop;       /* ... whether it runs until asked to stop */
	int stop_seen;        /* atomic: our sender saw io->stop */
	int sigint_blocked;   /* atomic: in a side thread */
	char local[64];
	bool recv_had_peer;
};

static void note_mask(struct ours *o)
{
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	if (sigismember(&cur, SIGINT) && sigismember(&cur, SIGTERM))
		__atomic_add_fetch(&o->sigint_blocked, 1, __ATOMIC_RELAXED);
}

static int o_stopping(void *arg)
{
	return ((struct ours *)arg)->stopping;
}

static int o_send(void *arg, const struct txs_ctl_side_io *io)
{
	struct ours *o = arg;
	note_mask(o);
	while (o->wait_stop && !io->stop(io->arg))
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (o->wait_stop)
		__atomic_store_n(&o->stop_seen, 1, __ATOMIC_RELAXED);
	if (o->send_summary)
		fprintf(io->sumf, "%s\n", cli_send);
	fclose(io->sumf);
	return o->send_status;
}

static int o_recv(void *arg, const char *local, const int64_t *clock_offset_ns, const struct txs_ctl_side_io *io)
{
	struct ours *o = arg;
	(void)clock_offset_ns;
	note_mask(o);
	snprintf(o->local, sizeof(o->local), "%s", local);
	io->ready(io->arg);
	char *text = NULL;
	size_t len = 0;
	for (int i = 0; i < 5000 && !io->stop(io->arg); i++) {
		if (io->sender_summary(io->arg, &text, &len) == 0)
			break;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	o->recv_had_peer = text && len == strlen(srv_send) && memcmp(text, srv_send, len) == 0;
	free(text);
	fprintf(io->sumf, "%s\n", cli_recv);
	fclose(io->sumf);
	return 0;
}

/* Run one test against the script; the server's view in *f. */
static int run(struct ours *o, bool fwd, bool rev, struct ssrv *f, struct txs_ctl_client_result *res, char *err,
	       size_t errlen)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	memset(f, 0, sizeof(*f));
	f->fd = sv[0];
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, script, f), 0);
	struct txs_ctl_client *c = txs_ctl_client_greet(sv[1], "198.18.0.2", NULL, 2, NULL, err, errlen);
	assert_non_null(c);
	struct txs_ctl_client_test t = { .fwd = fwd, .rev = rev, .est = 1, .own_idle = 0.2, .extra = 5 };
	t.recv = (struct txs_ctl_recv_spec){ .port = 9000, .idle = 0.2, .time = 1 };
	snprintf(t.recv.dev, sizeof(t.recv.dev), "udp");
	t.send = (struct txs_ctl_send_spec){ .port = 9000, .length = 100, .count = 777 };
	struct txs_ctl_sides sides = { .arg = o, .hold = true, .stopping = o_stopping, .send = o_send, .recv = o_recv };
	int rc = txs_ctl_client_run_sides(c, &t, &sides, res, err, errlen);
	txs_ctl_client_close(c, rc == 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	close(sv[0]);
	return rc;
}

static void result_free(struct txs_ctl_client_result *res)
{
	free(res->peer_send);
	free(res->peer_recv);
	free(res->own_send);
	free(res->own_recv);
}

static void both_ways(void **st)
{
	(void)st;
	struct ours o = { .send_summary = true };
	struct ssrv f;
	struct txs_ctl_client_result res;
	char err[512];
	assert_int_equal(run(&o, true, true, &f, &res, err, sizeof(err)), 0);
	assert_false(res.failed);
	assert_string_equal(res.peer_recv, srv_recv);
	assert_string_equal(res.peer_send, srv_send);
	char want[256];
	snprintf(want, sizeof(want), "%s\n", cli_send);
	assert_string_equal(res.own_send, want);
	snprintf(want, sizeof(want), "%s\n", cli_recv);
	assert_string_equal(res.own_recv, want);
	assert_true(o.recv_had_peer);
	assert_true(f.got_done);
	assert_string_equal(f.done.sender, cli_send); /* trimmed */
	assert_true(f.setup.recv.on && f.setup.send.on);
	assert_int_equal(o.sigint_blocked, 2);
	txs_ctl_msg_free(&f.setup);
	txs_ctl_msg_free(&f.done);
	result_free(&res);
}

static void soft_stop(void **st)
{
	(void)st;
	struct ours o = { .send_summary = true, .wait_stop = true, .stopping = 1 };
	struct ssrv f;
	struct txs_ctl_client_result res;
	char err[512];
	assert_int_equal(run(&o, true, false, &f, &res, err, sizeof(err)), 0);
	assert_true(o.stop_seen);
	assert_false(res.failed); /* stopped when asked, summary written */
	assert_true(f.got_done);
	assert_false(f.done.failed);
	assert_string_equal(res.peer_recv, srv_recv);
	assert_null(res.own_recv);
	txs_ctl_msg_free(&f.setup);
	txs_ctl_msg_free(&f.done);
	result_free(&res);
}

static void sender_fails(void **st)
{
	(void)st;
	struct ours o = { .send_status = 2 };
	struct ssrv f;
	struct txs_ctl_client_result res;
	char err[512];
	assert_int_equal(run(&o, true, false, &f, &res, err, sizeof(err)), -EIO);
	assert_string_equal(err, "our sender failed (exit status 2)");
	assert_true(f.got_done);
	assert_true(f.done.failed);
	assert_string_equal(f.done.message, "our sender failed (exit status 2)");
	assert_non_null(res.own_send);
	assert_string_equal(res.own_send, "");
	txs_ctl_msg_free(&f.setup);
	txs_ctl_msg_free(&f.done);
	result_free(&res);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_ways),
		cmocka_unit_test(soft_stop),
		cmocka_unit_test(sender_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
