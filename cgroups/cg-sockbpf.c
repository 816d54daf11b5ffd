// SPDX-License-Identifier: Apache-2.0
/*
 * --deny-host-loopback: BPF_PROG_TYPE_CGROUP_SOCK_ADDR programs on the cgroup's cgroup2
 * directory that refuse (EPERM) every TCP connect and UDP send from its processes to the
 * host's loopback: 127.0.0.0/8, 0.0.0.0/8 and :: (which Linux delivers locally), ::1, and the
 * v4-mapped forms of the first two. The kernel runs them on the socket's own cgroup, so a
 * process cannot step around them, and without CAP_NET_ADMIN and CAP_BPF in the initial user
 * namespace it cannot detach them. Other programs attached with BPF_F_ALLOW_MULTI beneath
 * ours only add refusals: every program in the chain must allow.
 *
 * Landlock's network rules would be the natural tool, but they match TCP ports, never
 * addresses (ABI 4+), so they cannot take 127.0.0.1:80 away and leave 192.0.2.1:80.
 */
#include "cg-internal.h"

#include <stddef.h>
#include <string.h>

/* struct bpf_sock_addr's fields: the destination as the caller gave it, in network order. */
enum {
	OFF_IP4 = offsetof(struct bpf_sock_addr, user_ip4),
	OFF_IP6 = offsetof(struct bpf_sock_addr, user_ip6),
};

struct prog {
	struct bpf_insn *v;
	size_t n, max;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (p->n < p->max)
		p->v[p->n] = (struct bpf_insn){
			.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm
		};
	p->n++;
}

/* dst = the 32-bit word at ctx+off, in host order (BPF_TO_BE of a big-endian word is its
 * host-order value on either endianness). */
static void load_word(struct prog *p, uint8_t dst, int16_t off)
{
	emit(p, BPF_LDX | BPF_MEM | BPF_W, dst, 1, off, 0);
	emit(p, BPF_ALU | BPF_END | BPF_TO_BE, dst, 0, 0, 32);
}

/* Denies when the top octet of reg is 127 or 0 (reg is clobbered). The tail() follows it:
 * the first test jumps over the second and allow's two instructions, the second over those. */
static void deny_v4_octet(struct prog *p, uint8_t reg)
{
	emit(p, BPF_ALU | BPF_RSH | BPF_K, reg, 0, 0, 24);
	emit(p, BPF_JMP32 | BPF_JEQ | BPF_K, reg, 0, 3, 127);
	emit(p, BPF_JMP32 | BPF_JEQ | BPF_K, reg, 0, 2, 0);
}

/* Both programs end in: allow (r0 = 1), deny (r0 = 0). */
static void tail(struct prog *p)
{
	emit(p, BPF_ALU | BPF_MOV | BPF_K, 0, 0, 0, 1);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	emit(p, BPF_ALU | BPF_MOV | BPF_K, 0, 0, 0, 0);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/* A jump's offset counts from the next instruction. */
#define TO(target, at) ((int16_t)((target) - (at)-1))

int cg_sockbpf_build(bool v6, struct bpf_insn *out, size_t max)
{
	struct prog p = { out, 0, max };
	if (!v6) {
		load_word(&p, 2, OFF_IP4);
		deny_v4_octet(&p, 2);
		tail(&p);
		return (int)p.n;
	}
	/* The v6 program by instruction number: r2 = words 0 | 1, r3 = word 2, r4 = word 3
	 * (the last two in host order); 13 starts the v4-mapped test, 16 allows, 18 denies. */
	enum { MAPPED = 13, ALLOW = 16, DENY = 18 };
	emit(&p, BPF_LDX | BPF_MEM | BPF_W, 2, 1, OFF_IP6, 0);		    /* 0 */
	emit(&p, BPF_LDX | BPF_MEM | BPF_W, 3, 1, OFF_IP6 + 4, 0);	    /* 1 */
	emit(&p, BPF_ALU64 | BPF_OR | BPF_X, 2, 3, 0, 0);		    /* 2 */
	emit(&p, BPF_LDX | BPF_MEM | BPF_W, 4, 1, OFF_IP6 + 12, 0);	    /* 3 */
	emit(&p, BPF_JMP | BPF_JNE | BPF_K, 2, 0, TO(ALLOW, 4), 0);	    /* 4: not ::/64 */
	load_word(&p, 3, OFF_IP6 + 8);					    /* 5, 6 */
	emit(&p, BPF_ALU | BPF_END | BPF_TO_BE, 4, 0, 0, 32);		    /* 7 */
	emit(&p, BPF_JMP32 | BPF_JEQ | BPF_K, 3, 0, TO(MAPPED, 8), 0xffff); /* 8 */
	emit(&p, BPF_JMP32 | BPF_JNE | BPF_K, 3, 0, TO(ALLOW, 9), 0);	    /* 9 */
	emit(&p, BPF_JMP32 | BPF_JEQ | BPF_K, 4, 0, TO(DENY, 10), 0);	    /* 10: :: */
	emit(&p, BPF_JMP32 | BPF_JEQ | BPF_K, 4, 0, TO(DENY, 11), 1);	    /* 11: ::1 */
	emit(&p, BPF_JMP | BPF_JA, 0, 0, TO(ALLOW, 12), 0);		    /* 12 */
	deny_v4_octet(&p, 4);						    /* 13-15 */
	tail(&p);							    /* 16-19 */
	return (int)p.n;
}

int cg_deny_loopback(struct cg *cg, struct hutch_err *err)
{
	static const struct {
		bool v6;
		uint32_t type;
	} hooks[] = { { false, BPF_CGROUP_INET4_CONNECT },
		      { true, BPF_CGROUP_INET6_CONNECT },
		      { false, BPF_CGROUP_UDP4_SENDMSG },
		      { true, BPF_CGROUP_UDP6_SENDMSG } };
	int cgfd = -1;
	for (size_t i = 0; cg && i < cg->n; i++)
		if ((cg->v2 || !cg->h[i].name[0]) && cg->h[i].fd >= 0)
			cgfd = cg->h[i].fd;
	if (cgfd < 0)
		return hutch_fail(err, ENOTSUP,
				  "--deny-host-loopback: the sandbox has no cgroup2 cgroup to "
				  "attach its connect filter to");
	for (size_t i = 0; i < ARRAY_SIZE(hooks); i++) {
		struct bpf_insn insns[32];
		int n = cg_sockbpf_build(hooks[i].v6, insns, ARRAY_SIZE(insns));
		_cleanup_close_ int prog =
			cg_bpf_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, hooks[i].type, insns, (size_t)n,
				    "connect filter", err);
		if (prog < 0)
			return hutch_err_prefix(err, "--deny-host-loopback: ");
		int r = cg_bpf_attach(cgfd, prog, hooks[i].type, "connect filter", err);
		if (r < 0)
			return hutch_err_prefix(err, "--deny-host-loopback: ");
	}
	return 0;
}
