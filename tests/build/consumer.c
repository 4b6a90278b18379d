/* A program outside the tree, built against an installed libtxscale with
 * only pkg-config's flags: the public headers stand alone, and one frame goes
 * through the library's own dummy device with an ID from its allocator. */
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
	printf("libtxscale %s, %u device backends, IDs %u %u\n", v, n, a, b);
	return 0;
}
