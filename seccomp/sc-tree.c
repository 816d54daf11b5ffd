// SPDX-License-Identifier: Apache-2.0
/*
 * The search trees of the prefix (number trees and argument trees) as classic BPF. A tree
 * over sorted boundaries needs one JGE per boundary; where a segment holds a single number
 * between two segments with one answer, a JEQ on that number takes the place of two
 * boundaries. Docker's profile has ~80 such numbers in x86_64's, i386's and x32's trees
 * (64-bit-only calls, lone denials among allowed runs), a quarter of the program.
 *
 * So each range of segments is either split by a JGE or, when all but single numbers
 * share an answer, answered by a chain of JEQs, one per number with another answer (none:
 * a leaf). A dynamic program picks the cheapest shape: each compare costs the load what
 * NODE_STEPS emulation steps do (its conversion and JIT passes), and each step is one
 * compare on the way of a number the kernel runs the program for at load, to fill its
 * action cache (those below EMULATED_NRS of number trees; for argument trees and x32's
 * numbers, run at each call, one for each segment). Only JGE, JEQ and "ja" are emitted:
 * the cache's emulator evaluates them all.
 */
#include "sc-internal.h"

#include <stdlib.h>

/* ~0.2 µs of conversion and JIT per compare against ~4 ns per emulation step here. */
#define NODE_STEPS 48
#define EMULATED_NRS 512
#define N_ANSWERS 8

struct plan {
	const struct sc_tree *t;
	size_t m; /* segments: n + 1 */
	uint32_t *cost;
	uint8_t *nodes;
	int16_t *how; /* >= 0: a JGE on that boundary; < 0: a chain on answer -1 - how */
};

#define AT(pl, i, j) ((i) * (pl)->m + (j))

static uint64_t seg_lo(const struct sc_tree *t, size_t k)
{
	return k ? t->b[k - 1] : 0;
}

static uint64_t seg_width(const struct sc_tree *t, size_t k)
{
	return (k < t->n ? t->b[k] : 1ULL << 32) - seg_lo(t, k);
}

static uint32_t seg_weight(const struct sc_tree *t, size_t k)
{
	uint64_t lo = seg_lo(t, k), hi = lo + seg_width(t, k);
	if (!t->emulated)
		return hi > lo;
	return lo < EMULATED_NRS ? (uint32_t)((hi < EMULATED_NRS ? hi : EMULATED_NRS) - lo) : 0;
}

/* Chains over [i, j] for every j, each answer a candidate: the single numbers answering
 * otherwise are its compares, in order (so the k-th takes k steps, the rest all of them). */
struct chains {
	bool any, present[N_ANSWERS], wide_other[N_ANSWERS];
	uint32_t points[N_ANSWERS], weight[N_ANSWERS], point_steps[N_ANSWERS];
};

static void chain_add(struct chains *c, const struct sc_tree *t, size_t k)
{
	uint64_t width = seg_width(t, k);
	uint32_t w = seg_weight(t, k);
	uint8_t s = t->seg[k];

	if (!width)
		return; /* holds no number: any answer */
	c->any = true;
	c->present[s] = true;
	c->weight[s] += w;
	for (uint8_t a = 0; a < N_ANSWERS; a++) {
		if (a == s)
			continue;
		if (width > 1) {
			c->wide_other[a] = true;
		} else {
			c->points[a]++;
			c->point_steps[a] += c->points[a] * w;
		}
	}
}

static void best_chain(const struct chains *c, struct plan *pl, size_t i, size_t j)
{
	if (!c->any) { /* no number at all (an argument tree's empty first segment) */
		pl->cost[AT(pl, i, j)] = 0;
		pl->how[AT(pl, i, j)] = (int16_t)(-1 - pl->t->seg[i]);
		return;
	}
	for (uint8_t a = 0; a < N_ANSWERS; a++) {
		if (!c->present[a] || c->wide_other[a])
			continue;
		uint32_t cost =
			NODE_STEPS * c->points[a] + c->weight[a] * c->points[a] + c->point_steps[a];
		if (cost < pl->cost[AT(pl, i, j)]) {
			pl->cost[AT(pl, i, j)] = cost;
			pl->nodes[AT(pl, i, j)] = (uint8_t)c->points[a];
			pl->how[AT(pl, i, j)] = (int16_t)(-1 - a);
		}
	}
}

static void plan_make(struct plan *pl, const struct sc_tree *t)
{
	size_t m = t->n + 1;
	_cleanup_free_ uint32_t *sum = hutch_xcalloc(m + 1, sizeof(uint32_t)); /* weight prefix */

	*pl = (struct plan){ .t = t, .m = m };
	pl->cost = hutch_xcalloc(m * m, sizeof(uint32_t));
	pl->nodes = hutch_xcalloc(m * m, 1);
	pl->how = hutch_xcalloc(m * m, sizeof(int16_t));
	for (size_t k = 0; k < m; k++)
		sum[k + 1] = sum[k] + seg_weight(t, k);
	for (size_t i = m; i-- > 0;) {
		struct chains c = { 0 };
		for (size_t j = i; j < m; j++) {
			pl->cost[AT(pl, i, j)] = UINT32_MAX;
			chain_add(&c, t, j);
			best_chain(&c, pl, i, j);
			for (size_t s = i; s < j; s++) {
				uint32_t cost = NODE_STEPS + (sum[j + 1] - sum[i]) +
						pl->cost[AT(pl, i, s)] + pl->cost[AT(pl, s + 1, j)];
				if (cost < pl->cost[AT(pl, i, j)]) {
					pl->cost[AT(pl, i, j)] = cost;
					pl->nodes[AT(pl, i, j)] =
						(uint8_t)(1 + pl->nodes[AT(pl, i, s)] +
							  pl->nodes[AT(pl, s + 1, j)]);
					pl->how[AT(pl, i, j)] = (int16_t)s;
				}
			}
		}
	}
}

static void plan_free(struct plan *pl)
{
	free(pl->cost);
	free(pl->nodes);
	free(pl->how);
}

size_t sc_tree_len(const struct sc_tree *t)
{
	struct plan pl;
	plan_make(&pl, t);
	size_t len = pl.nodes[AT(&pl, 0, pl.m - 1)];
	plan_free(&pl);
	return len ? len : 1; /* a leaf at the root: one "ja" */
}

/* Where [i, j] begins: its first compare, or, a leaf, its answer. */
static size_t entry(const struct plan *pl, const size_t *target, size_t i, size_t j, size_t at)
{
	int16_t how = pl->how[AT(pl, i, j)];
	return pl->nodes[AT(pl, i, j)] ? at : target[-1 - how];
}

static void emit_chain(const struct plan *pl, const size_t *target, struct sock_filter *p,
		       size_t *at, size_t i, size_t j, uint8_t a)
{
	const struct sc_tree *t = pl->t;
	size_t left = pl->nodes[AT(pl, i, j)];

	for (size_t k = i; k <= j; k++) {
		if (seg_width(t, k) != 1 || t->seg[k] == a)
			continue;
		size_t n = (*at)++, other = --left ? n + 1 : target[a];
		p[n] = (struct sock_filter)BPF_JUMP(
			BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)seg_lo(t, k),
			SC_JUMP(n, target[t->seg[k]]), SC_JUMP(n, other));
	}
}

/* Depth first, the lower half right after its compare (on false). */
static void emit(const struct plan *pl, const size_t *target, struct sock_filter *p, size_t *at,
		 size_t i, size_t j)
{
	int16_t how = pl->how[AT(pl, i, j)];
	if (how < 0) {
		emit_chain(pl, target, p, at, i, j, (uint8_t)(-1 - how));
		return;
	}
	size_t s = (size_t)how, n = (*at)++;
	size_t low = entry(pl, target, i, s, n + 1);
	size_t high = entry(pl, target, s + 1, j, n + 1 + pl->nodes[AT(pl, i, s)]);
	p[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, pl->t->b[s],
					    SC_JUMP(n, high), SC_JUMP(n, low));
	emit(pl, target, p, at, i, s);
	emit(pl, target, p, at, s + 1, j);
}

void sc_tree_emit(const struct sc_tree *t, const size_t *target, struct sock_filter *p, size_t *at)
{
	struct plan pl;
	plan_make(&pl, t);
	if (pl.nodes[AT(&pl, 0, pl.m - 1)]) {
		emit(&pl, target, p, at, 0, pl.m - 1);
	} else {
		p[*at] = (struct sock_filter)BPF_STMT(
			BPF_JMP | BPF_JA,
			(uint32_t)(target[-1 - pl.how[AT(&pl, 0, pl.m - 1)]] - *at - 1));
		(*at)++;
	}
	plan_free(&pl);
}
