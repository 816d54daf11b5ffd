// SPDX-License-Identifier: Apache-2.0
/*
 * The prefix that sc-ranges.c planned, as classic BPF: per audit arch a block with the
 * number tree (x32's first when it goes on into x86_64's), its answers, the argument trees,
 * and a jump to the rest. The trees' shapes come from sc-tree.c. Only loads of nr/arch, JGE,
 * JEQ, AND and returns in the number trees, which the kernel's action cache can evaluate.
 */
#include "sc-internal.h"
#include "sc-bpf.h"

#include <linux/seccomp.h>
#include <stddef.h>

/* Does the emitted tree answer seg anywhere? (Shared: x86_64's part and x32's tree.) */
static bool uses(const struct sc_ranges_group *g, uint8_t seg)
{
	size_t n = g->shared ? g->n_low : g->n;
	for (size_t i = 0; g->n && i <= n; i++)
		if (g->seg[i] == seg)
			return true;
	for (size_t i = 0; g->shared && i <= g->x32_n; i++)
		if (g->x32_seg[i] == seg)
			return true;
	return false;
}

/* The compares before the answers: the tree, or the shared trees with their jge and and. */
static size_t tree_len(const struct sc_ranges_group *g)
{
	return (g->shared ? 2 + g->x32_shape.n : 0) + (g->n ? g->shape.n : 0);
}

static const uint8_t answers[] = { SC_SEG_ACTION, SC_SEG_DEFAULT, SC_SEG_ENOSYS };

/*
 * A group's block: load nr, the number tree and its answers ("ret" each; the kernel runs
 * the program for every number at load to fill its action cache, so the fewer steps to an
 * answer the cheaper the load), then each argument tree ("jeq nr" or skip it; load the
 * argument's low word; the tree; "ret action"; "ja rest"), and "ja rest".
 */
static size_t block_len(const struct sc_ranges_group *g)
{
	if (!g->n && !g->n_args)
		return 0;
	size_t len = 1 + tree_len(g) + 1;
	for (size_t k = 0; k < ARRAY_SIZE(answers); k++)
		len += uses(g, answers[k]);
	for (size_t k = 0; k < g->n_args; k++)
		len += g->args[k].shared ? 0 : 4 + g->args[k].shape.n;
	return len;
}

static struct sock_filter ja(size_t at, size_t to)
{
	return (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(to - at - 1));
}

static struct sock_filter ret(uint32_t value)
{
	return (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, value);
}

static void emit_block(const struct sc_ranges *rg, const struct sc_ranges_group *g,
		       struct sock_filter *p, size_t *at, size_t rest)
{
	const uint32_t value[] = { [SC_SEG_ACTION] = rg->action,
				   [SC_SEG_DEFAULT] = rg->default_action,
				   [SC_SEG_ENOSYS] = SECCOMP_RET_ERRNO | ENOSYS };
	size_t target[5], next = *at + 1 + tree_len(g);

	p[(*at)++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0); /* nr */
	for (size_t k = 0; k < ARRAY_SIZE(answers); k++)
		if (uses(g, answers[k]))
			target[answers[k]] = next++;
	target[SC_SEG_REST] = next; /* the argument trees, then the rest */
	if (g->shared) {	    /* x32's tree first: jumps only go forward, to x86_64's */
		size_t i = (*at)++;
		target[SC_SEG_SHARED] = i + 1 + g->x32_shape.n;
		size_t x32 = g->x32_n ? i + 1 : target[g->x32_seg[0]];
		p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT,
						    SC_JUMP(i, x32),
						    SC_JUMP(i, target[SC_SEG_SHARED] + 1));
		if (g->x32_n)
			sc_tree_emit(&g->x32_shape, target, p, at);
		p[(*at)++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_BIT);
	}
	if (g->n)
		sc_tree_emit(&g->shape, target, p, at);
	for (size_t k = 0; k < ARRAY_SIZE(answers); k++)
		if (uses(g, answers[k]))
			p[(*at)++] = ret(value[answers[k]]);
	for (size_t k = 0; k < g->n_args; k++) {
		const struct sc_arg_ranges *a = &g->args[k];
		if (a->shared)
			continue;
		size_t len = a->shape.n, i = (*at)++, yes = i + 2 + len, no = yes + 1;
		size_t arg_target[2] = { no, yes };
		p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a->nr, 0,
						    (uint8_t)(3 + len));
		p[(*at)++] = (struct sock_filter)BPF_STMT(
			BPF_LD | BPF_W | BPF_ABS,
			(uint32_t)offsetof(struct seccomp_data, args[a->index])); /* low word */
		sc_tree_emit(&a->shape, arg_target, p, at);
		p[(*at)++] = ret(a->action);
		p[*at] = ja(*at, rest);
		(*at)++;
	}
	p[*at] = ja(*at, rest);
	(*at)++;
}

/* "jeq audit" into a group's block, past it when not (a "ja" when it is too long for that). */
static size_t dispatch_len(size_t block)
{
	return block <= 255 ? 1 : 2;
}

/*
 * Layout: load the arch; per group its dispatch and its block. rest is the first instruction
 * after the prefix (the ENOSYS prologue, then libseccomp's program); conditional jumps stay
 * within a block, so only the JAs are long.
 */
size_t sc_ranges_emit(const struct sc_ranges *rg, struct sock_filter *p)
{
	size_t len = 0;
	for (size_t i = 0; i < rg->n_groups; i++) {
		size_t b = block_len(&rg->groups[i]);
		len += b ? dispatch_len(b) + b : 0;
	}
	if (!len)
		return 0;
	len += 1;
	if (!p)
		return len;
	size_t at = 0;
	p[at++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4); /* arch */
	for (size_t i = 0; i < rg->n_groups; i++) {
		const struct sc_ranges_group *g = &rg->groups[i];
		size_t b = block_len(g);
		if (!b)
			continue;
		if (dispatch_len(b) == 1) {
			p[at] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, g->audit, 0,
							     (uint8_t)b);
			at++;
		} else {
			p[at] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, g->audit, 1,
							     0);
			at++;
			p[at] = ja(at, at + 1 + b);
			at++;
		}
		emit_block(rg, g, p, &at, len);
	}
	return len;
}
