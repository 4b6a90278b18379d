/* SPDX-License-Identifier: MIT */
/* Limit reference of --dev packet: an AF_PACKET TX_RING (TPACKET_V2) with
 * PACKET_QDISC_BYPASS and PACKET_VNET_HDR (a virtio_net_hdr whose hdr_len is
 * the frame: the kernel copies the small frame into the skb, as txscale's
 * packet: device asks it to): one prebuilt 60-byte frame in every slot, 64
 * slots handed over per send() kick, slots reused as the kernel frees them.
 *   txs_limit_txring IFNAME SRC DST DST_MAC PORT SECONDS [SPORT]
 * SECONDS "trafgen": print the frame as a trafgen config instead. */
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "limit.h"

#define FRAME_SZ 128u
#define NFRAMES 4096u
#define KICK 64u

int main(int argc, char **argv)
{
	uint8_t frame[60];
	if (limit_frame_args("txs_limit_txring", argc, argv, frame))
		return 2;
	if (strcmp(argv[6], "trafgen") == 0) { /* the same frame as a trafgen config, for bench/peers */
		printf("{ ");
		for (unsigned i = 0; i < sizeof(frame); i++)
			printf("0x%02x%s", frame[i], i + 1 < sizeof(frame) ? ", " : " }\n");
		return 0;
	}
	double secs = atof(argv[6]);
	int fd = socket(AF_PACKET, SOCK_RAW, 0), v = TPACKET_V2, one = 1;
	struct tpacket_req req = { .tp_block_size = 4096, .tp_frame_size = FRAME_SZ,
				   .tp_block_nr = NFRAMES / (4096 / FRAME_SZ), .tp_frame_nr = NFRAMES };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(argv[1]) };
	if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) || bind(fd, (struct sockaddr *)&ll, sizeof(ll))) {
		perror("txs_limit_txring: AF_PACKET");
		return 1;
	}
	uint8_t *ring = mmap(NULL, (size_t)FRAME_SZ * NFRAMES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		return perror("mmap"), 1;
	const size_t off = TPACKET2_HDRLEN - sizeof(struct sockaddr_ll);
	struct virtio_net_hdr vh = { .hdr_len = sizeof(frame) };
	for (unsigned i = 0; i < NFRAMES; i++) {
		memcpy(ring + (size_t)i * FRAME_SZ + off, &vh, sizeof(vh));
		memcpy(ring + (size_t)i * FRAME_SZ + off + sizeof(vh), frame, sizeof(frame));
	}
	uint64_t sent = 0, queued = 0;
	unsigned slot = 0;
	double t0 = limit_now(), t = t0;
	while (t - t0 < secs) {
		for (unsigned k = 0; k < KICK; k++) {
			struct tpacket2_hdr *h = (struct tpacket2_hdr *)(ring + (size_t)slot * FRAME_SZ);
			while (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE) {
				if (send(fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != ENOBUFS)
					return perror("send"), 1;
			}
			h->tp_len = sizeof(vh) + sizeof(frame);
			__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
			slot = (slot + 1) % NFRAMES;
			queued++;
		}
		if (send(fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != ENOBUFS)
			return perror("send"), 1;
		t = limit_now();
	}
	/* what the kernel took: queued less the slots still waiting */
	send(fd, NULL, 0, 0);
	uint64_t waiting = 0;
	for (unsigned i = 0; i < NFRAMES; i++) {
		struct tpacket2_hdr *h = (struct tpacket2_hdr *)(ring + (size_t)i * FRAME_SZ);
		waiting += __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE;
	}
	sent = queued - waiting;
	limit_report("tx_ring", sent, t - t0);
	return 0;
}
