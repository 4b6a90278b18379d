/* SPDX-License-Identifier: MIT */
/* The xdp: input's XDP program (lib/rx/xdp_prog.c), loaded into the running
 * kernel and run on crafted frames with BPF_PROG_TEST_RUN. The XSKMAP is
 * empty, so a frame the filter takes meets no socket: the program returns
 * XDP_PASS and adds one to its no-socket count; a frame it does not take
 * returns XDP_PASS and counts nothing. Needs root (BPF); skipped otherwise.
 * Plain bpf(2) calls: the program needs no libbpf, nor does its test. */
#include "test_util.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "rx/xdp_prog.h"

static int sys_bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static int map_create(uint32_t type, uint32_t vsize, uint32_t n)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = vsize;
	a.max_entries = n;
	return sys_bpf(BPF_MAP_CREATE, &a);
}

static int map_fd = -1, count_fd = -1;

static uint64_t count(void)
{
	uint32_t k = 0;
	uint64_t v = 0;
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)count_fd;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&v;
	assert_int_equal(sys_bpf(BPF_MAP_LOOKUP_ELEM, &a), 0);
	return v;
}

static int load(const struct txs_xdp_filter *f)
{
	struct bpf_insn insn[TXS_XDP_PROG_MAX];
	size_t n = txs_xdp_prog_build(insn, f, map_fd, count_fd);
	assert_true(n > 10 && n < TXS_XDP_PROG_MAX);
	static char log[65536];
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uint64_t)(uintptr_t)insn;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"Dual MIT/GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	int fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0)
		fprintf(stderr, "verifier: %s\n", log);
	assert_true(fd >= 0);
	return fd;
}

/* Is frame taken by the program (fd)? Also checks it always passes. */
static bool taken(int fd, const uint8_t *frame, size_t len)
{
	uint8_t buf[256];
	memcpy(buf, frame, len);
	uint64_t before = count();
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)buf;
	a.test.data_size_in = (uint32_t)len;
	a.test.repeat = 1;
	assert_int_equal(sys_bpf(BPF_PROG_TEST_RUN, &a), 0);
	assert_int_equal(a.test.retval, XDP_PASS);
	uint64_t d = count() - before;
	assert_true(d <= 1);
	return d == 1;
}

/* Ethernet + IPv4 (ihl words) + UDP to dport; returns the length. */
static size_t v4(uint8_t *f, unsigned ihl, uint8_t proto, uint16_t frag, const char *dst, uint16_t dport)
{
	memset(f, 0, 128);
	f[12] = 0x08, f[13] = 0x00;
	uint8_t *ip = f + 14;
	ip[0] = (uint8_t)(0x40 | ihl);
	ip[2] = 0, ip[3] = (uint8_t)(ihl * 4 + 8 + 16);
	ip[6] = (uint8_t)(frag >> 8), ip[7] = (uint8_t)frag;
	ip[8] = 64, ip[9] = proto;
	inet_pton(AF_INET, "198.18.0.1", ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	uint8_t *u = ip + ihl * 4;
	u[0] = 0x9c, u[1] = 0x40;
	u[2] = (uint8_t)(dport >> 8), u[3] = (uint8_t)dport;
	u[5] = 24;
	return 14 + ihl * 4 + 8 + 16;
}

static size_t v6(uint8_t *f, uint8_t nh, const char *dst, uint16_t dport)
{
	memset(f, 0, 128);
	f[12] = 0x86, f[13] = 0xdd;
	uint8_t *ip = f + 14;
	ip[0] = 0x60, ip[5] = 24, ip[6] = nh, ip[7] = 64;
	inet_pton(AF_INET6, "2001:2::1", ip + 8);
	inet_pton(AF_INET6, dst, ip + 24);
	uint8_t *u = ip + 40;
	u[2] = (uint8_t)(dport >> 8), u[3] = (uint8_t)dport;
	u[5] = 24;
	return 14 + 40 + 8 + 16;
}

static void test_port_range_both_families(void **state)
{
	(void)state;
	struct txs_xdp_filter f = { .port = 5201, .port_hi = 5202 };
	int fd = load(&f);
	uint8_t fr[128];
	size_t n;
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5201);
	assert_true(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5202);
	assert_true(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5200);
	assert_false(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5203);
	assert_false(taken(fd, fr, n));
	n = v4(fr, 5, 6, 0, "198.18.0.2", 5201);   /* TCP */
	assert_false(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0x2000, "198.18.0.2", 5201); /* first fragment (MF) */
	assert_true(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0x0001, "198.18.0.2", 5201); /* a later fragment */
	assert_false(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0x0100, "198.18.0.2", 5201); /* offset bits in the high byte */
	assert_false(taken(fd, fr, n));
	n = v4(fr, 7, 17, 0, "198.18.0.2", 5201);  /* options: UDP after 28 bytes */
	assert_true(taken(fd, fr, n));
	n = v4(fr, 4, 17, 0, "198.18.0.2", 5201);  /* header length below 20 */
	assert_false(taken(fd, fr, n));
	n = v4(fr, 15, 17, 0, "198.18.0.2", 5201); /* 60-byte header, frame ends inside the UDP header */
	assert_false(taken(fd, fr, 14 + 60 + 4));
	n = v6(fr, 17, "2001:2::2", 5201);
	assert_true(taken(fd, fr, n));
	n = v6(fr, 17, "2001:2::2", 9);
	assert_false(taken(fd, fr, n));
	n = v6(fr, 0, "2001:2::2", 5201);          /* hop-by-hop header first */
	assert_false(taken(fd, fr, n));
	/* truncated: Ethernet only, IPv4 header cut, IPv6 header cut */
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5201);
	assert_false(taken(fd, fr, 14));
	assert_false(taken(fd, fr, 30));
	assert_false(taken(fd, fr, 14 + 20 + 6));
	assert_true(taken(fd, fr, 14 + 20 + 8));    /* the UDP header is all it reads */
	n = v6(fr, 17, "2001:2::2", 5201);
	assert_false(taken(fd, fr, 14 + 40 + 7));
	/* a VLAN tag in the frame: not taken (the stack sees it) */
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5201);
	memmove(fr + 16, fr + 12, n - 12);
	fr[12] = 0x81, fr[13] = 0x00, fr[14] = 0, fr[15] = 5;
	assert_false(taken(fd, fr, n + 4));
	/* ARP */
	memset(fr, 0, 64);
	fr[12] = 0x08, fr[13] = 0x06;
	assert_false(taken(fd, fr, 60));
	close(fd);
}

static void test_family_and_address(void **state)
{
	(void)state;
	uint8_t fr[128];
	size_t n;
	struct txs_xdp_filter f4 = { .port = 5201, .family = AF_INET };
	int fd = load(&f4);
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5201);
	assert_true(taken(fd, fr, n));
	n = v6(fr, 17, "2001:2::2", 5201);
	assert_false(taken(fd, fr, n));
	close(fd);

	struct txs_xdp_filter fa = { .port = 5201 };
	assert_int_equal(txs_addr_parse(&fa.dst, "198.18.0.2"), 0);
	fd = load(&fa);
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5201);
	assert_true(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0, "198.18.0.3", 5201);
	assert_false(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0, "2.0.18.198", 5201); /* the same bytes reversed */
	assert_false(taken(fd, fr, n));
	n = v6(fr, 17, "2001:2::2", 5201);       /* an IPv4 address takes no IPv6 */
	assert_false(taken(fd, fr, n));
	close(fd);

	struct txs_xdp_filter f6 = { .port = 5201 };
	assert_int_equal(txs_addr_parse(&f6.dst, "2001:2::2"), 0);
	fd = load(&f6);
	n = v6(fr, 17, "2001:2::2", 5201);
	assert_true(taken(fd, fr, n));
	n = v6(fr, 17, "2001:2::3", 5201);
	assert_false(taken(fd, fr, n));
	n = v6(fr, 17, "2001:3::2", 5201);
	assert_false(taken(fd, fr, n));
	n = v4(fr, 5, 17, 0, "198.18.0.2", 5201);
	assert_false(taken(fd, fr, n));
	close(fd);

	/* port 0: every UDP port */
	struct txs_xdp_filter fany = { 0 };
	fd = load(&fany);
	n = v4(fr, 5, 17, 0, "198.18.0.2", 1);
	assert_true(taken(fd, fr, n));
	n = v6(fr, 17, "2001:2::2", 65535);
	assert_true(taken(fd, fr, n));
	n = v4(fr, 5, 1, 0, "198.18.0.2", 1);      /* ICMP */
	assert_false(taken(fd, fr, n));
	close(fd);
}

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("needs root (BPF maps and programs)");
	map_fd = map_create(BPF_MAP_TYPE_XSKMAP, 4, 4);
	count_fd = map_create(BPF_MAP_TYPE_ARRAY, 8, 1);
	if (map_fd < 0 || count_fd < 0)
		T_SKIP("this kernel refuses XSKMAP/ARRAY maps: %s", strerror(errno));
	T_RUN(cmocka_unit_test(test_port_range_both_families),
	      cmocka_unit_test(test_family_and_address));
}
