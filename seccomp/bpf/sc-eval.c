// SPDX-License-Identifier: Apache-2.0
/*
 * Classic BPF as seccomp runs it, in user space. The unit tests hold the ranges to
 * libseccomp's decisions with it; the init asks it whether a filter lets its own last steps
 * through before it loads the filter ahead of them (rt-child.c).
 */
#include "sc-internal.h"
#include "sc-bpf.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>

/* The ALU operations, on a; false for one seccomp refuses. */
static bool alu(uint16_t op, uint32_t src, uint32_t *a)
{
	switch (op) {
	case BPF_ADD:
		*a += src;
		return true;
	case BPF_SUB:
		*a -= src;
		return true;
	case BPF_MUL:
		*a *= src;
		return true;
	case BPF_AND:
		*a &= src;
		return true;
	case BPF_OR:
		*a |= src;
		return true;
	case BPF_XOR:
		*a ^= src;
		return true;
	case BPF_LSH:
		*a = src < 32 ? *a << src : 0;
		return true;
	case BPF_RSH:
		*a = src < 32 ? *a >> src : 0;
		return true;
	case BPF_NEG:
		*a = -*a;
		return true;
	}
	return false;
}

static bool jump(uint16_t op, uint32_t a, uint32_t src, bool *taken)
{
	switch (op) {
	case BPF_JEQ:
		*taken = a == src;
		return true;
	case BPF_JGT:
		*taken = a > src;
		return true;
	case BPF_JGE:
		*taken = a >= src;
		return true;
	case BPF_JSET:
		*taken = (a & src) != 0;
		return true;
	}
	return false;
}

bool sc_bpf_run(const struct sock_filter *p, size_t len, const struct seccomp_data *d,
		uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &p[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
		bool taken;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k % 4 || f->k + 4 > sizeof(*d))
				return false;
			memcpy(&a, (const char *)d + f->k, 4);
			continue;
		case BPF_LD | BPF_IMM:
			a = f->k;
			continue;
		case BPF_LDX | BPF_IMM:
			x = f->k;
			continue;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				return false;
			if (f->code == (BPF_LD | BPF_MEM))
				a = mem[f->k];
			else if (f->code == (BPF_LDX | BPF_MEM))
				x = mem[f->k];
			else
				mem[f->k] = f->code == BPF_ST ? a : x;
			continue;
		case BPF_MISC | BPF_TAX:
			x = a;
			continue;
		case BPF_MISC | BPF_TXA:
			a = x;
			continue;
		case BPF_RET | BPF_K:
			*ret = f->k;
			return true;
		case BPF_RET | BPF_A:
			*ret = a;
			return true;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			continue;
		}
		if (BPF_CLASS(f->code) == BPF_ALU && alu(BPF_OP(f->code), src, &a))
			continue;
		if (BPF_CLASS(f->code) != BPF_JMP || !jump(BPF_OP(f->code), a, src, &taken))
			return false;
		pc += taken ? f->jt : f->jf;
	}
	return false; /* fell off the end */
}

bool sc_filter_allows(const struct sc_filter *f, long nr, const uint64_t args[6])
{
	struct seccomp_data d = { .nr = (int)nr, .arch = seccomp_arch_native() };
	uint32_t ret;
	memcpy(d.args, args, sizeof(d.args));
	if (!sc_bpf_run(f->insns, f->len, &d, &ret))
		return false;
	ret &= SECCOMP_RET_ACTION_FULL;
	return ret == SECCOMP_RET_ALLOW || ret == SECCOMP_RET_LOG; /* LOG runs it, logged */
}
