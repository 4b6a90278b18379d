/* A program outside the tree, built against an installed libtxscale with
 * only pkg-config's flags: the public headers stand alone (the umbrella
 * header declares the sessions and the version macros), the library it runs
 * is the version it was built against, one frame goes through the library's
 * own dummy device with an ID from its allocator, and a send session from a
 * zeroed config (every string NULL) sends exactly what it was asked. */
#include <stdio.h>
#include <string.h>
#include <txscale/txscale.h>

int main(void)
{
	const char *v = txs_version();
	if (!v || !*v) {
		fprintf(stderr, "no version\n");
		return 1;
	}
#if !TXS_VERSION_CHECK(0, 1, 0)
#error "TXS_VERSION_CHECK: headers older than 0.1.0"
#endif
	if (strcmp(v, TXS_VERSION_STRING) != 0 || txs_version_major() != TXS_VERSION_MAJOR ||
	    txs_version_minor() != TXS_VERSION_MINOR || txs_version_patch() != TXS_VERSION_PATCH) {
		fprintf(stderr, "built against %s, running %s (%d.%d.%d)\n", TXS_VERSION_STRING, v, txs_version_major(),
			txs_version_minor(), txs_version_patch());
		return 1;
	}
	struct txs_send_conf sc;
	memset(&sc, 0, sizeof(sc));
	sc.dest = "198.18.0.2";
	sc.port = 9;
	sc.count = 20;
	char err[256] = "";
	struct txs_send *s = NULL;
	const struct txs_send_result *r = NULL;
	int src = txs_send_open(&s, &sc, err, sizeof(err));
	if (src == 0)
		src = txs_send_run(s, NULL, &r);
	if (src != 0 || !r || r->failed || r->sum.packets != 20) {
		fprintf(stderr, "send session: %d %s (%s)\n", src, txs_strerror(src), err);
		txs_send_close(s);
		return 1;
	}
	txs_send_close(s);
	unsigned n = 0;
	const struct txs_netdev_ops *const *ops = txs_netdev_backends(&n);
	if (!ops || n == 0 || !txs_netdev_find("dummy")) {
		fprintf(stderr, "no dummy device registered (%u backends)\n", n);
		return 1;
	}
	struct txs_ident *id = NULL;
	struct txs_ident_core *c = NULL;
	struct txs_ident_conf conf = { .strategy = "lease", .max_cores = 1, .seed = 1 };
	int rc = txs_ident_create(&id, &conf);
	if (rc == 0)
		rc = txs_ident_core_open(id, 0, &c);
	if (rc) {
		fprintf(stderr, "ident: %s\n", strerror(-rc));
		return 1;
	}
	uint32_t h = txs_ident_hash4(id, 0x020012c6u, 0x010012c6u, 17);
	uint16_t a = txs_ident_reserve(c, h, 1), b = txs_ident_reserve(c, h, 1);
	txs_ident_core_close(c);
	txs_ident_destroy(id);
	if (a == b) {
		fprintf(stderr, "ident: two reserves gave one ID %u\n", a);
		return 1;
	}
	printf("libtxscale %s, %u device backends, IDs %u %u, a session sent 20\n", v, n, a, b);
	return 0;
}
