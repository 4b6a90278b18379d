/* SPDX-License-Identifier: MIT */
/* A VLAN sub-interface for kernels without 8021q, for
 * tests/integration/shapes_vlan.sh: a tc (clsact ingress, direct-action)
 * BPF program on DEV that takes the frames a VLAN device DEV.VID (or, for
 * QinQ, DEV.OUTER.INNER with an 802.1ad outer device) would take, strips
 * their tags and lets them go on to the IP stack on DEV; everything else is
 * dropped, as it would not reach the sub-interface.
 *
 *   txs_vlan_sub DEV --vlan VID | --qinq OUTER,INNER [-t SECONDS] [--probe]
 *
 * The tags are the kernel's own parse: on receive __netif_receive_skb_core
 * (skb_vlan_untag) has moved the outer 802.1Q / 802.1ad tag out of the frame
 * into skb->vlan_proto / vlan_tci before tc runs, and the program reads it
 * from __sk_buff (vlan_present, vlan_tci, vlan_proto). bpf_skb_vlan_pop
 * (skb_vlan_pop) clears that tag and, when the frame holds another one,
 * moves it out of the frame into the same place: so for QinQ the inner tag
 * is read the same way after the first pop, and popped in turn.
 *
 * Verdicts (array map "verdict", one u64 each): delivered (the configured
 * tags, popped: TC_ACT_OK), untagged, wrong_vlan (outer TPID or VID not the
 * configured one), wrong_inner (QinQ: no inner tag, or not 802.1Q with the
 * configured VID), extra_tag (a tag left after the configured ones),
 * pop_failed; all but delivered are TC_ACT_SHOT. Array map "tags": every
 * tagged frame by outer tag (index VID, +4096 for 802.1ad) and, when the
 * outer tag matched a QinQ configuration, by inner tag (+8192).
 *
 * The program is a hand-written instruction array (no BPF compiler needed)
 * loaded with libbpf. It runs until SIGTERM / SIGINT or SECONDS (default
 * 300), detaches (and removes the clsact qdisc if it made it), then prints
 * one JSON object on stdout. "attached ..." on stderr says it is in place.
 * --probe: attach, detach and exit 0.
 * Exit 0; 4 with one line when the kernel offers no tc BPF here (no BPF
 * syscall, no clsact or cls_bpf); 1 with one line (and the verifier's log)
 * on any other failure; 2 on a bad argument. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8

enum { V_DELIVERED, V_UNTAGGED, V_WRONG_VLAN, V_WRONG_INNER, V_EXTRA_TAG, V_POP_FAILED, V_N };
static const char *const vname[V_N] = {"delivered", "untagged", "wrong_vlan", "wrong_inner", "extra_tag",
				       "pop_failed"};
#define TAG_AD 4096     /* + for an 802.1ad tag */
#define TAG_INNER 8192  /* + for the inner tag of a matched QinQ outer tag */
#define TAG_SLOTS 16384

/* ---- a small BPF assembler: instructions, labels, forward jumps ---- */
#define MAXI 160
#define MAXL 8
#define MAXF 32
struct prog {
	struct bpf_insn in[MAXI];
	int n, bad;
	int at[MAXL], used[MAXL];
	struct {
		int insn, label;
	} fix[MAXF];
	int nfix;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (p->n >= MAXI) {
		p->bad = 1;
		return;
	}
	struct bpf_insn *i = &p->in[p->n++];
	memset(i, 0, sizeof(*i));
	i->code = code;
	i->dst_reg = dst & 0xf;
	i->src_reg = src & 0xf;
	i->off = off;
	i->imm = imm;
}

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R6 BPF_REG_6
#define R7 BPF_REG_7
#define R8 BPF_REG_8
#define R9 BPF_REG_9
#define FP BPF_REG_10

static void mov_reg(struct prog *p, int d, int s) { emit(p, BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0); }
static void mov_imm(struct prog *p, int d, int32_t v) { emit(p, BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, v); }
static void alu_imm(struct prog *p, int op, int d, int32_t v) { emit(p, BPF_ALU64 | op | BPF_K, d, 0, 0, v); }
static void ctx_u32(struct prog *p, int d, int16_t off) { emit(p, BPF_LDX | BPF_MEM | BPF_W, d, R6, off, 0); }
static void call(struct prog *p, int fn) { emit(p, BPF_JMP | BPF_CALL, 0, 0, 0, fn); }
static void ret(struct prog *p, int32_t v)
{
	mov_imm(p, R0, v);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}
static void label(struct prog *p, int l) { p->at[l] = p->n; }
/* if (reg OP imm) goto label; OP BPF_JA: always */
static void jump(struct prog *p, int op, int reg, int32_t imm, int l)
{
	if (p->nfix >= MAXF) {
		p->bad = 1;
		return;
	}
	p->fix[p->nfix].insn = p->n;
	p->fix[p->nfix++].label = l;
	p->used[l] = 1;
	emit(p, BPF_JMP | op | BPF_K, reg, 0, 0, imm);
}
static void resolve(struct prog *p)
{
	for (int k = 0; k < p->nfix; k++) {
		int from = p->fix[k].insn, to = p->at[p->fix[k].label];
		if (to <= from) /* forward only: no loops */
			p->bad = 1;
		else
			p->in[from].off = (int16_t)(to - from - 1);
	}
}

/* map[key]++ for key in register kreg (kreg < 0: the constant kimm); clobbers r0-r5 */
static void count(struct prog *p, int map_fd, int kreg, int32_t kimm)
{
	if (kreg >= 0)
		emit(p, BPF_STX | BPF_MEM | BPF_W, FP, kreg, -4, 0);
	else
		emit(p, BPF_ST | BPF_MEM | BPF_W, FP, 0, -4, kimm);
	emit(p, BPF_LD | BPF_DW | BPF_IMM, R1, BPF_PSEUDO_MAP_FD, 0, map_fd);
	emit(p, 0, 0, 0, 0, 0);
	mov_reg(p, R2, FP);
	alu_imm(p, BPF_ADD, R2, -4);
	call(p, BPF_FUNC_map_lookup_elem);
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 2, 0); /* not found: skip the add */
	mov_imm(p, R1, 1);
	emit(p, BPF_STX | BPF_ATOMIC | BPF_DW, R0, R1, 0, BPF_ADD);
}

/* r7 = VID of the tag now in skb->vlan_*, r8 = its TPID (network order, as
 * __sk_buff.vlan_proto holds it), then tags[r7 (+4096 for 802.1ad) + base]++ */
static void read_tag(struct prog *p, int tags_fd, int32_t base)
{
	ctx_u32(p, R7, offsetof(struct __sk_buff, vlan_tci));
	alu_imm(p, BPF_AND, R7, 0xfff);
	ctx_u32(p, R8, offsetof(struct __sk_buff, vlan_proto));
	mov_reg(p, R9, R7);
	emit(p, BPF_JMP | BPF_JNE | BPF_K, R8, 0, 1, (int32_t)htons(ETH_P_8021AD));
	alu_imm(p, BPF_OR, R9, TAG_AD);
	if (base)
		alu_imm(p, BPF_ADD, R9, base);
	count(p, tags_fd, R9, 0);
}

enum { L_UNTAGGED, L_WRONG, L_WRONG_INNER, L_EXTRA, L_POPFAIL, L_SHOT };

/* outer_proto: ETH_P_8021Q (--vlan) or ETH_P_8021AD (--qinq); inner < 0: none */
static void build(struct prog *p, int verdict_fd, int tags_fd, uint16_t outer_proto, int outer, int inner)
{
	mov_reg(p, R6, R1);
	ctx_u32(p, R2, offsetof(struct __sk_buff, vlan_present));
	jump(p, BPF_JEQ, R2, 0, L_UNTAGGED);
	read_tag(p, tags_fd, 0);
	jump(p, BPF_JNE, R8, (int32_t)htons(outer_proto), L_WRONG);
	jump(p, BPF_JNE, R7, outer, L_WRONG);
	mov_reg(p, R1, R6);
	call(p, BPF_FUNC_skb_vlan_pop);
	jump(p, BPF_JNE, R0, 0, L_POPFAIL);
	if (inner >= 0) {
		ctx_u32(p, R2, offsetof(struct __sk_buff, vlan_present));
		jump(p, BPF_JEQ, R2, 0, L_WRONG_INNER);
		read_tag(p, tags_fd, TAG_INNER);
		jump(p, BPF_JNE, R8, (int32_t)htons(ETH_P_8021Q), L_WRONG_INNER);
		jump(p, BPF_JNE, R7, inner, L_WRONG_INNER);
		mov_reg(p, R1, R6);
		call(p, BPF_FUNC_skb_vlan_pop);
		jump(p, BPF_JNE, R0, 0, L_POPFAIL);
	}
	ctx_u32(p, R2, offsetof(struct __sk_buff, vlan_present));
	jump(p, BPF_JNE, R2, 0, L_EXTRA);
	count(p, verdict_fd, -1, V_DELIVERED);
	ret(p, TC_ACT_OK);
	static const struct {
		int l, v;
	} drops[] = {{L_UNTAGGED, V_UNTAGGED},   {L_WRONG, V_WRONG_VLAN}, {L_WRONG_INNER, V_WRONG_INNER},
		     {L_EXTRA, V_EXTRA_TAG},     {L_POPFAIL, V_POP_FAILED}};
	/* the verifier refuses unreachable code: only the drops this
	 * configuration can reach, each counted, then to the one exit */
	for (size_t k = 0; k < sizeof(drops) / sizeof(drops[0]); k++) {
		if (!p->used[drops[k].l])
			continue;
		label(p, drops[k].l);
		count(p, verdict_fd, -1, drops[k].v);
		jump(p, BPF_JA, 0, 0, L_SHOT);
	}
	label(p, L_SHOT);
	ret(p, TC_ACT_SHOT);
	resolve(p);
}

/* ---- userspace ---- */
static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int parse_vid(const char *s, int *v)
{
	char *end;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (errno || end == s || x < 0 || x > 4094)
		return -1;
	*v = (int)x;
	return (*end == ',' || *end == 0) ? (int)(end - s) : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: txs_vlan_sub DEV --vlan VID | --qinq OUTER,INNER [-t SECONDS] [--probe]\n");
	exit(2);
}

static char logbuf[1 << 16];

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int outer = -1, inner = -1, probe = 0;
	uint16_t oproto = 0;
	double seconds = 300;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--vlan") && i + 1 < argc) {
			int k = parse_vid(argv[++i], &outer);
			if (k < 0 || argv[i][k])
				usage();
			oproto = ETH_P_8021Q;
		} else if (!strcmp(argv[i], "--qinq") && i + 1 < argc) {
			int k = parse_vid(argv[++i], &outer);
			if (k < 0 || argv[i][k] != ',')
				usage();
			int k2 = parse_vid(argv[i] + k + 1, &inner);
			if (k2 < 0 || argv[i][k + 1 + k2])
				usage();
			oproto = ETH_P_8021AD;
		} else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			char *end;
			seconds = strtod(argv[++i], &end);
			if (*end || !(seconds > 0 && seconds <= 86400))
				usage();
		} else if (!strcmp(argv[i], "--probe")) {
			probe = 1;
		} else if (argv[i][0] != '-' && !dev) {
			dev = argv[i];
		} else {
			usage();
		}
	}
	if (!dev || outer < 0)
		usage();
	int ifindex = (int)if_nametoindex(dev);
	if (!ifindex) {
		fprintf(stderr, "txs_vlan_sub: no interface '%s'\n", dev);
		return 1;
	}
	libbpf_set_print(NULL);

	/* can this kernel load a tc program at all? (r0 = TC_ACT_OK; exit) */
	struct prog t = {0};
	ret(&t, TC_ACT_OK);
	int fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "txs_probe", "Dual MIT/GPL", t.in, (size_t)t.n, NULL);
	if (fd < 0) {
		fprintf(stderr, "txs_vlan_sub: the kernel loads no tc BPF program here: %s\n", strerror(-fd));
		return 4;
	}
	close(fd);

	int verdict_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "txs_vsub_verd", 4, 8, V_N, NULL);
	int tags_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "txs_vsub_tags", 4, 8, TAG_SLOTS, NULL);
	if (verdict_fd < 0 || tags_fd < 0) {
		fprintf(stderr, "txs_vlan_sub: bpf_map_create: %s\n", strerror(-(verdict_fd < 0 ? verdict_fd : tags_fd)));
		return 1;
	}
	static struct prog p;
	build(&p, verdict_fd, tags_fd, oproto, outer, inner);
	if (p.bad) {
		fprintf(stderr, "txs_vlan_sub: program does not fit the assembler's tables\n");
		return 1;
	}
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .log_buf = logbuf, .log_size = sizeof(logbuf), .log_level = 1);
	int prog_fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "txs_vlan_sub", "Dual MIT/GPL", p.in, (size_t)p.n, &lo);
	if (prog_fd < 0) {
		fprintf(stderr, "txs_vlan_sub: the verifier refused the program (%d instructions): %s\n%s\n", p.n,
			strerror(-prog_fd), logbuf);
		return 1;
	}

	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	int made_hook = 0;
	int e = bpf_tc_hook_create(&hook);
	if (e == 0)
		made_hook = 1;
	else if (e != -EEXIST) {
		fprintf(stderr, "txs_vlan_sub: no clsact qdisc on %s: %s\n", dev, strerror(-e));
		return 4;
	}
	LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = prog_fd, .handle = 0x7e57, .priority = 1);
	e = bpf_tc_attach(&hook, &to);
	if (e) {
		fprintf(stderr, "txs_vlan_sub: tc attach (cls_bpf, direct-action) on %s ingress: %s\n", dev,
			strerror(-e));
		if (made_hook) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
		}
		return 4;
	}

	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (inner >= 0)
		fprintf(stderr, "attached %s ingress: %d instructions, 802.1ad %d / 802.1Q %d\n", dev, p.n, outer, inner);
	else
		fprintf(stderr, "attached %s ingress: %d instructions, 802.1Q %d\n", dev, p.n, outer);
	fflush(stderr);

	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop && !probe) {
		struct timespec d = {0, 50 * 1000 * 1000};
		nanosleep(&d, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}

	LIBBPF_OPTS(bpf_tc_opts, dopt, .handle = 0x7e57, .priority = 1);
	int rc = 0;
	e = bpf_tc_detach(&hook, &dopt);
	if (e) {
		fprintf(stderr, "txs_vlan_sub: detach from %s: %s\n", dev, strerror(-e));
		rc = 1;
	}
	if (made_hook) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		e = bpf_tc_hook_destroy(&hook);
		if (e && e != -ENOENT) {
			fprintf(stderr, "txs_vlan_sub: removing the clsact qdisc of %s: %s\n", dev, strerror(-e));
			rc = 1;
		}
	}
	if (probe)
		return rc;

	printf("{\"dev\":\"%s\",\"outer_proto\":\"%s\",\"outer_vlan\":%d,\"inner_vlan\":", dev,
	       oproto == ETH_P_8021AD ? "802.1ad" : "802.1Q", outer);
	if (inner >= 0)
		printf("%d", inner);
	else
		printf("null");
	for (uint32_t k = 0; k < V_N; k++) {
		uint64_t v = 0;
		if (bpf_map_lookup_elem(verdict_fd, &k, &v)) {
			fprintf(stderr, "txs_vlan_sub: reading the counters: %s\n", strerror(errno));
			return 1;
		}
		printf(",\"%s\":%llu", vname[k], (unsigned long long)v);
	}
	printf(",\"tags\":[");
	int first = 1;
	for (uint32_t k = 0; k < TAG_SLOTS; k++) {
		uint64_t v = 0;
		if (bpf_map_lookup_elem(tags_fd, &k, &v)) {
			fprintf(stderr, "txs_vlan_sub: reading the counters: %s\n", strerror(errno));
			return 1;
		}
		if (!v)
			continue;
		printf("%s{\"tag\":\"%s\",\"proto\":\"%s\",\"vlan\":%u,\"packets\":%llu}", first ? "" : ",",
		       (k & TAG_INNER) ? "inner" : "outer", (k & TAG_AD) ? "802.1ad" : "802.1Q", k & 0xfff,
		       (unsigned long long)v);
		first = 0;
	}
	printf("]}\n");
	return rc;
}
