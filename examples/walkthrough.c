/* SPDX-License-Identifier: MIT */
/* docs/library.md's C walk-through: a receive session and a send session
 * on 127.0.0.1 through the JSON boundary, exact counts at the end.
 *   cc walkthrough.c $(pkg-config --cflags --libs txscale jansson) -o walkthrough
 *   (a build tree: cc -Iinclude examples/walkthrough.c -Lbuild -ltxscale -ljansson -Wl,-rpath,$PWD/build)
 *   ./walkthrough [PORT]            exit 0 when every datagram arrived */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <txscale/txscale.h>

int main(int argc, char **argv)
{
	const char *port = argc > 1 ? argv[1] : "47411";
	char cfg[256], err[512];
	struct txs_session *rx, *tx;

	/* 1. The receiver: keys are `txscale recv`'s long options. Bound here. */
	snprintf(cfg, sizeof(cfg), "{\"bind\": \"127.0.0.1\", \"port\": %s, \"time\": 20, \"expect\": 1000}", port);
	if (txs_session_new(&rx, "recv", cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "recv: %s\n", err);
		return 2;
	}
	/* 2. The sender: DEST is "dest"; rates with their unit (datagrams/s). */
	snprintf(cfg, sizeof(cfg),
		 "{\"dest\": \"127.0.0.1\", \"port\": %s, \"dev\": \"udp\", \"packets\": 1000, \"bitrate\": \"10kpps\"}",
		 port);
	if (txs_session_new(&tx, "send", cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "send: %s\n", err); /* e.g. bad value for --ttl: '300': ... */
		txs_session_free(rx);
		return 2;
	}
	/* 3. Both run on the library's threads; this one may read stats. */
	txs_session_start(rx);
	txs_session_start(tx);
	char *stats;
	if (txs_session_stats_json(tx, &stats) == 0) {
		printf("%s\n", stats);
		txs_session_str_free(stats);
	}
	/* 4. The summaries: the lines `txscale send -J` / `recv -J` end with. */
	const char *tx_sum, *rx_sum;
	int rc = txs_session_wait(tx, -1, &tx_sum);
	if (rc == 0)
		rc = txs_session_wait(rx, 20000, &rx_sum);
	long long sent = -1, received = -1, lost = -1;
	if (rc == 0) {
		json_t *a = json_loads(tx_sum, 0, NULL), *b = json_loads(rx_sum, 0, NULL);
		sent = json_integer_value(json_object_get(a, "packets"));
		received = json_integer_value(json_object_get(b, "received"));
		lost = json_integer_value(json_object_get(b, "lost"));
		json_decref(a);
		json_decref(b);
	} else {
		fprintf(stderr, "run: %s %s\n", txs_strerror(rc), txs_session_error(tx));
	}
	printf("sent %lld, received %lld, lost %lld\n", sent, received, lost);
	/* 5. Free: stops a session still running, and waits for it. */
	txs_session_free(tx);
	txs_session_free(rx);
	return sent == 1000 && received == 1000 && lost == 0 ? 0 : 1;
}
