/* SPDX-License-Identifier: MIT */
/* The xdp: input's XDP program as eBPF instructions (xdp_prog.h). In C
 * terms (all loads bounds-checked against data_end before they happen):
 *
 *   eth = data; if (eth + 14 > end) pass;
 *   type = eth[12] << 8 | eth[13];
 *   if (type == 0x0800 && v4 wanted) {
 *     if (eth + 34 > end || ip[9] != UDP || (ip[6] & 0x1f) || ip[7]) pass;
 *     if (dst4 && ip[16..20] != dst4) pass;
 *     hl = (ip[0] & 15) * 4; if (hl < 20) pass; udp = ip + hl;
 *   } else if (type == 0x86dd && v6 wanted) {
 *     if (eth + 62 > end || ip6[6] != UDP) pass;
 *     if (dst6 && ip6[24..40] != dst6) pass;
 *     udp = ip6 + 40;
 *   } else pass;
 *   if (udp + 8 > end) pass;
 *   dport = udp[2] << 8 | udp[3]; if (dport outside [lo, hi]) pass;
 *   r = bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
 *   if (r != XDP_REDIRECT) count[0]++;   (no socket on this queue)
 *   return r;
 */
#include <string.h>
#include <sys/socket.h>
#include "xdp_prog.h"

enum { L_PASS, L_V4, L_V6, L_PORT, L_DONE, L__N };

struct emit {
	struct bpf_insn *in;
	size_t n;
	int label[L__N];         /* instruction index, -1 = not placed */
	struct { size_t at; int label; } fix[32];
	unsigned n_fix;
};

static void op(struct emit *e, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (e->n >= TXS_XDP_PROG_MAX)
		return;
	struct bpf_insn *i = &e->in[e->n++];
	memset(i, 0, sizeof(*i));
	i->code = code;
	i->dst_reg = dst & 0xf;
	i->src_reg = src & 0xf;
	i->off = off;
	i->imm = imm;
}

/* if (reg CMP imm) goto label; class BPF_JMP (64-bit) or BPF_JMP32 */
static void jmp_k(struct emit *e, uint8_t cls, uint8_t cmp, uint8_t reg, int32_t imm, int label)
{
	if (e->n_fix < TXS_ARRAY_SIZE(e->fix)) {
		e->fix[e->n_fix].at = e->n;
		e->fix[e->n_fix++].label = label;
	}
	op(e, cls | cmp | BPF_K, reg, 0, 0, imm);
}

/* if (a CMP b) goto label, registers */
static void jmp_x(struct emit *e, uint8_t cmp, uint8_t a, uint8_t b, int label)
{
	if (e->n_fix < TXS_ARRAY_SIZE(e->fix)) {
		e->fix[e->n_fix].at = e->n;
		e->fix[e->n_fix++].label = label;
	}
	op(e, BPF_JMP | cmp | BPF_X, a, b, 0, 0);
}

static void place(struct emit *e, int label)
{
	e->label[label] = (int)e->n;
}

static void ld_map(struct emit *e, uint8_t dst, int fd)
{
	op(e, BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, fd);
	op(e, 0, 0, 0, 0, 0);
}

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R4 BPF_REG_4
#define R5 BPF_REG_5
#define R6 BPF_REG_6
#define R7 BPF_REG_7
#define R8 BPF_REG_8
#define FP BPF_REG_10

static void mov_k(struct emit *e, uint8_t d, int32_t v) { op(e, BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, v); }
static void mov_x(struct emit *e, uint8_t d, uint8_t s) { op(e, BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0); }
static void alu_k(struct emit *e, uint8_t o, uint8_t d, int32_t v) { op(e, BPF_ALU64 | o | BPF_K, d, 0, 0, v); }
static void alu_x(struct emit *e, uint8_t o, uint8_t d, uint8_t s) { op(e, BPF_ALU64 | o | BPF_X, d, s, 0, 0); }
static void ldx(struct emit *e, uint8_t size, uint8_t d, uint8_t s, int16_t off)
{
	op(e, BPF_LDX | BPF_MEM | size, d, s, off, 0);
}

/* R5 = the big-endian u16 at [base + off] (R0 scratch) */
static void be16(struct emit *e, uint8_t base, int16_t off)
{
	ldx(e, BPF_B, R5, base, off);
	alu_k(e, BPF_LSH, R5, 8);
	ldx(e, BPF_B, R0, base, (int16_t)(off + 1));
	alu_x(e, BPF_OR, R5, R0);
}

/* goto pass unless data + need <= data_end (R2 data, R3 end; R4 scratch) */
static void need(struct emit *e, uint8_t base, int32_t n)
{
	mov_x(e, R4, base);
	alu_k(e, BPF_ADD, R4, n);
	jmp_x(e, BPF_JGT, R4, R3, L_PASS);
}

/* goto pass unless the n bytes at [R2 + off] equal a (four at a time) */
static void match_bytes(struct emit *e, int16_t off, const uint8_t *a, unsigned n)
{
	for (unsigned k = 0; k < n; k += 4) {
		uint32_t w;
		memcpy(&w, a + k, 4); /* as a native load of the packet reads it */
		ldx(e, BPF_W, R5, R2, (int16_t)(off + k));
		jmp_k(e, BPF_JMP32, BPF_JNE, R5, (int32_t)w, L_PASS);
	}
}

size_t txs_xdp_prog_build(struct bpf_insn *insn, const struct txs_xdp_filter *f, int xsk_map_fd, int count_fd)
{
	struct emit e = { .in = insn };
	for (unsigned i = 0; i < L__N; i++)
		e.label[i] = -1;
	bool v4 = f->family != AF_INET6, v6 = f->family != AF_INET;
	bool dst4 = f->dst.family == AF_INET, dst6 = f->dst.family == AF_INET6;
	if (dst4)
		v6 = false;
	if (dst6)
		v4 = false;

	mov_x(&e, R6, R1);                               /* ctx */
	ldx(&e, BPF_W, R2, R6, offsetof(struct xdp_md, data));
	ldx(&e, BPF_W, R3, R6, offsetof(struct xdp_md, data_end));
	need(&e, R2, 14);
	be16(&e, R2, 12);
	if (v4)
		jmp_k(&e, BPF_JMP, BPF_JEQ, R5, 0x0800, L_V4);
	if (v6)
		jmp_k(&e, BPF_JMP, BPF_JEQ, R5, 0x86dd, L_V6);
	jmp_k(&e, BPF_JMP, BPF_JA, 0, 0, L_PASS);

	if (v4) {
		place(&e, L_V4);
		need(&e, R2, 14 + 20);
		ldx(&e, BPF_B, R5, R2, 14 + 9);
		jmp_k(&e, BPF_JMP, BPF_JNE, R5, 17, L_PASS);
		ldx(&e, BPF_B, R5, R2, 14 + 6);
		alu_k(&e, BPF_AND, R5, 0x1f);
		jmp_k(&e, BPF_JMP, BPF_JNE, R5, 0, L_PASS);  /* a later fragment: no UDP header */
		ldx(&e, BPF_B, R5, R2, 14 + 7);
		jmp_k(&e, BPF_JMP, BPF_JNE, R5, 0, L_PASS);
		if (dst4)
			match_bytes(&e, 14 + 16, f->dst.bytes, 4);
		ldx(&e, BPF_B, R5, R2, 14);
		alu_k(&e, BPF_AND, R5, 15);
		alu_k(&e, BPF_LSH, R5, 2);
		jmp_k(&e, BPF_JMP, BPF_JLT, R5, 20, L_PASS);
		mov_x(&e, R7, R2);
		alu_k(&e, BPF_ADD, R7, 14);
		alu_x(&e, BPF_ADD, R7, R5);                  /* udp */
		jmp_k(&e, BPF_JMP, BPF_JA, 0, 0, L_PORT);
	}
	if (v6) {
		place(&e, L_V6);
		need(&e, R2, 14 + 40 + 8);
		ldx(&e, BPF_B, R5, R2, 14 + 6);
		jmp_k(&e, BPF_JMP, BPF_JNE, R5, 17, L_PASS);
		if (dst6)
			match_bytes(&e, 14 + 24, f->dst.bytes, 16);
		mov_x(&e, R7, R2);
		alu_k(&e, BPF_ADD, R7, 14 + 40);
	}
	place(&e, L_PORT);
	need(&e, R7, 8);
	be16(&e, R7, 2);
	if (f->port) {
		uint16_t hi = f->port_hi > f->port ? f->port_hi : f->port;
		jmp_k(&e, BPF_JMP, BPF_JLT, R5, f->port, L_PASS);
		jmp_k(&e, BPF_JMP, BPF_JGT, R5, hi, L_PASS);
	}
	ldx(&e, BPF_W, R2, R6, offsetof(struct xdp_md, rx_queue_index));
	ld_map(&e, R1, xsk_map_fd);
	mov_k(&e, R3, XDP_PASS);                         /* a queue without a socket: the stack */
	op(&e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map);
	jmp_k(&e, BPF_JMP, BPF_JEQ, R0, XDP_REDIRECT, L_DONE);
	mov_x(&e, R8, R0);
	op(&e, BPF_ST | BPF_MEM | BPF_W, FP, 0, -4, 0);  /* key 0 */
	ld_map(&e, R1, count_fd);
	mov_x(&e, R2, FP);
	alu_k(&e, BPF_ADD, R2, -4);
	op(&e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	mov_k(&e, R1, 1);
	/* if (R0 != NULL) atomic *(u64 *)R0 += 1 */
	op(&e, BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 1, 0);
	op(&e, BPF_STX | BPF_ATOMIC | BPF_DW, R0, R1, 0, BPF_ADD);
	mov_x(&e, R0, R8);
	place(&e, L_DONE);
	op(&e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	place(&e, L_PASS);
	mov_k(&e, R0, XDP_PASS);
	op(&e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	for (unsigned i = 0; i < e.n_fix; i++) {
		int to = e.label[e.fix[i].label];
		insn[e.fix[i].at].off = (int16_t)(to - (int)e.fix[i].at - 1);
	}
	return e.n;
}
