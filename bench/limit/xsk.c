/* SPDX-License-Identifier: MIT */
/* Limit reference of --dev xdp: one AF_XDP socket in copy mode (XDP_COPY,
 * no XDP program: XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, TX only), UMEM
 * frames holding one prebuilt 60-byte frame each, 64 descriptors per
 * sendto() kick, completions reaped as they come.
 *   txs_limit_xsk IFNAME SRC DST DST_MAC PORT SECONDS [SPORT] [QUEUE] */
#include <errno.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/xsk.h>
#include "limit.h"

#define NFRAMES 2048u
#define FSIZE 2048u
#define BATCH 64u

int main(int argc, char **argv)
{
	uint8_t frame[60];
	if (limit_frame_args("txs_limit_xsk", argc, argv, frame))
		return 2;
	double secs = atof(argv[6]);
	unsigned qid = argc > 8 ? (unsigned)atoi(argv[8]) : 0;
	size_t len = (size_t)NFRAMES * FSIZE;
	uint8_t *area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (area == MAP_FAILED)
		return perror("mmap"), 1;
	for (unsigned i = 0; i < NFRAMES; i++)
		memcpy(area + (size_t)i * FSIZE, frame, sizeof(frame));
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_umem_config uc = { .fill_size = 64, .comp_size = NFRAMES, .frame_size = FSIZE };
	struct xsk_socket_config sc = { .rx_size = 0, .tx_size = NFRAMES,
					.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
					.bind_flags = XDP_USE_NEED_WAKEUP | XDP_COPY };
	int rc = xsk_umem__create(&umem, area, len, &fq, &cq, &uc);
	if (!rc)
		rc = xsk_socket__create(&xsk, argv[1], qid, umem, NULL, &tx, &sc);
	if (rc) {
		fprintf(stderr, "txs_limit_xsk: AF_XDP on %s queue %u: %s\n", argv[1], qid, strerror(-rc));
		return 1;
	}
	int fd = xsk_socket__fd(xsk);
	uint64_t sent = 0;
	unsigned next = 0, outstanding = 0;
	double t0 = limit_now(), t = t0;
	unsigned iter = 0;
	while (t - t0 < secs) {
		uint32_t idx;
		unsigned n = NFRAMES - outstanding < BATCH ? NFRAMES - outstanding : BATCH;
		if (n && xsk_ring_prod__reserve(&tx, n, &idx) == n) {
			for (unsigned i = 0; i < n; i++) {
				struct xdp_desc *d = xsk_ring_prod__tx_desc(&tx, idx + i);
				d->addr = (uint64_t)next * FSIZE;
				d->len = sizeof(frame);
				next = (next + 1) % NFRAMES;
			}
			xsk_ring_prod__submit(&tx, n);
			outstanding += n;
		}
		if (xsk_ring_prod__needs_wakeup(&tx) && sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != ENOBUFS && errno != EBUSY)
			return perror("sendto"), 1;
		uint32_t ci;
		unsigned done = xsk_ring_cons__peek(&cq, NFRAMES, &ci);
		if (done) {
			xsk_ring_cons__release(&cq, done);
			outstanding -= done;
			sent += done;
		}
		if (++iter % 64 == 0)
			t = limit_now();
	}
	limit_report("af_xdp_copy", sent, t - t0);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return 0;
}
