/* SPDX-License-Identifier: MIT */
/* lib/ctl/summary.c through txs_ctl_decode: the summaries a txscale peer
 * hands over are taken only when every count is a whole number >= 0 (the
 * refusal names the field); a receiver summary whose parts do not add up is
 * kept but marked not exact, with the reason; no C1 control character of
 * the peer's survives unescaped (the summary is re-written ASCII-only). */
#include <errno.h>
#include <string.h>
#include <txscale/ctl.h>
#include "test_util.h"

#define RES(x) "{\"v\":1,\"type\":\"result\",\"test\":1,\"receiver\":{\"type\":\"summary\",\"kind\":\"recv\"," x "}}"

static int dec(const char *json, struct txs_ctl_msg *m, char *err, size_t errlen)
{
	return txs_ctl_decode(m, json, strlen(json), err, errlen);
}

static void refused(const char *json, const char *field, const char *why)
{
	struct txs_ctl_msg m;
	char err[256] = "";
	int rc = dec(json, &m, err, sizeof(err));
	if (rc != -EPROTO || !strstr(err, field) || !strstr(err, why))
		fprintf(stderr, "%s -> %d %s\n", json, rc, err);
	assert_int_equal(rc, -EPROTO);
	assert_non_null(strstr(err, field));
	assert_non_null(strstr(err, why));
	txs_ctl_msg_free(&m);
}

static void test_counts(void **st)
{
	(void)st;
	refused(RES("\"received\":-1"), "receiver.received", "negative");
	refused(RES("\"lost\":1.5"), "receiver.lost", "whole number");
	refused(RES("\"lost\":\"3\""), "receiver.lost", "whole number");
	refused(RES("\"duplicates\":true"), "receiver.duplicates", "whole number");
	refused("{\"v\":1,\"type\":\"result\",\"test\":1,\"sender\":{\"type\":\"summary\",\"kind\":\"send\",\"packets\":-7}}",
		"sender.packets", "negative");
	/* expected may be null (not known) */
	struct txs_ctl_msg m;
	char err[256];
	assert_int_equal(dec(RES("\"received\":5,\"unique\":5,\"duplicates\":0,\"late\":0,\"lost\":0,\"expected\":null,"
				 "\"lost_exact\":false"),
			     &m, err, sizeof(err)),
			 0);
	txs_ctl_msg_free(&m);
}

static void not_exact(const char *json, const char *why)
{
	struct txs_ctl_msg m;
	char err[256] = "";
	assert_int_equal(dec(json, &m, err, sizeof(err)), 0);
	assert_non_null(m.receiver);
	if (!strstr(m.receiver, "\"lost_exact\":false") || !strstr(m.receiver, why))
		fprintf(stderr, "%s\n", m.receiver);
	assert_non_null(strstr(m.receiver, "\"lost_exact\":false"));
	assert_non_null(strstr(m.receiver, "\"not_exact\""));
	assert_non_null(strstr(m.receiver, why));
	txs_ctl_msg_free(&m);
}

static void test_adds_up(void **st)
{
	(void)st;
	/* received is not the sum of its parts */
	not_exact(RES("\"received\":10,\"unique\":5,\"duplicates\":1,\"late\":0,\"lost\":5,\"expected\":10,\"lost_exact\":true"),
		  "is not unique + duplicates");
	/* exact, but unique + lost is not what was sent */
	not_exact(RES("\"received\":9,\"unique\":9,\"duplicates\":0,\"late\":0,\"lost\":5,\"expected\":10,\"excess\":0,"
		      "\"lost_exact\":true"),
		  "is not expected + excess");
	not_exact(RES("\"received\":9,\"unique\":9,\"duplicates\":0,\"late\":0,\"lost\":1,\"lost_exact\":true"),
		  "without expected");
	/* one that adds up stays exact */
	struct txs_ctl_msg m;
	char err[256];
	assert_int_equal(dec(RES("\"received\":10,\"unique\":9,\"duplicates\":1,\"late\":0,\"lost\":1,\"expected\":10,"
				 "\"excess\":0,\"lost_exact\":true"),
			     &m, err, sizeof(err)),
			 0);
	assert_non_null(strstr(m.receiver, "\"lost_exact\":true"));
	assert_null(strstr(m.receiver, "not_exact"));
	txs_ctl_msg_free(&m);
}

static void test_c1_escaped(void **st)
{
	(void)st;
	struct txs_ctl_msg m;
	char err[256];
	/* U+009B (CSI) and ESC in a string of the peer's summary */
	assert_int_equal(dec(RES("\"device\":\"udp\\u009b2J\\u001b[31m\""), &m, err, sizeof(err)), 0);
	for (const unsigned char *p = (const unsigned char *)m.receiver; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
	assert_non_null(strcasestr(m.receiver, "\\u009b"));
	assert_non_null(strcasestr(m.receiver, "\\u001b"));
	txs_ctl_msg_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_adds_up),
		cmocka_unit_test(test_c1_escaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
