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
#include "sc-bpf.h"

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

/* Knuth's bound for optimal search trees: the best split of [i, j] lies between those of
 * [i, j-1] and [i+1, j], which makes the program O(m^2) instead of O(m^3) (a profile's
 * compile would take 10 ms more). Chains break the bound's premise, so where a neighbour is
 * one the whole range is tried; any split answers alike, so a miss costs only a compare. */
static void split_window(const struct plan *pl, size_t i, size_t j, size_t *from, size_t *to)
{
	int16_t a = j > i + 1 ? pl->how[AT(pl, i, j - 1)] : -1;
	int16_t b = j > i + 1 ? pl->how[AT(pl, i + 1, j)] : -1;
	*from = a >= 0 ? (size_t)a : i;
	*to = b >= 0 ? (size_t)b : j - 1;
	if (*from > *to) {
		*from = i;
		*to = j - 1;
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
			size_t from = 1, to = 0; /* a single segment: no split */
			if (j > i)
				split_window(pl, i, j, &from, &to);
			for (size_t s = from; s <= to; s++) {
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

/* Where [i, j] begins, as a shape's branch: its first node, or, a leaf, its answer. */
static uint16_t branch(const struct plan *pl, size_t i, size_t j, size_t node)
{
	int16_t how = pl->how[AT(pl, i, j)];
	return pl->nodes[AT(pl, i, j)] ? (uint16_t)node : (uint16_t)(SC_TREE_ANSWER - 1 - how);
}

/* The plan counted the nodes; emitting more would be a bug in this file, never an input's. */
static void push_node(struct sc_tree_shape *out, size_t cap, struct sc_tree_node n)
{
	if (out->n >= cap)
		abort();
	out->v[out->n++] = n;
}

static void shape_chain(const struct plan *pl, struct sc_tree_shape *out, size_t i, size_t j,
			uint8_t a)
{
	const struct sc_tree *t = pl->t;
	size_t left = pl->nodes[AT(pl, i, j)];

	for (size_t k = i; k <= j; k++) {
		if (seg_width(t, k) != 1 || t->seg[k] == a)
			continue;
		uint16_t other = --left ? (uint16_t)(out->n + 1) : (uint16_t)(SC_TREE_ANSWER + a);
		push_node(out, pl->nodes[AT(pl, 0, pl->m - 1)],
			  (struct sc_tree_node){ .k = (uint32_t)seg_lo(t, k),
						 .eq = true,
						 .yes = (uint16_t)(SC_TREE_ANSWER + t->seg[k]),
						 .no = other });
	}
}

/* Depth first, the lower half right after its compare (on false). */
static void shape_of(const struct plan *pl, struct sc_tree_shape *out, size_t i, size_t j)
{
	int16_t how = pl->how[AT(pl, i, j)];
	if (how < 0) {
		shape_chain(pl, out, i, j, (uint8_t)(-1 - how));
		return;
	}
	size_t s = (size_t)how, n = out->n;
	push_node(
		out, pl->nodes[AT(pl, 0, pl->m - 1)],
		(struct sc_tree_node){ .k = pl->t->b[s],
				       .yes = branch(pl, s + 1, j, n + 1 + pl->nodes[AT(pl, i, s)]),
				       .no = branch(pl, i, s, n + 1) });
	shape_of(pl, out, i, s);
	shape_of(pl, out, s + 1, j);
}

void sc_tree_shape(const struct sc_tree *t, struct sc_tree_shape *out)
{
	struct plan pl;

	plan_make(&pl, t);
	size_t n = pl.nodes[AT(&pl, 0, pl.m - 1)];
	*out = (struct sc_tree_shape){ .v = hutch_xcalloc(n ? n : 1, sizeof(*out->v)) };
	if (n)
		shape_of(&pl, out, 0, pl.m - 1);
	else /* a leaf at the root: "ja" to its answer */
		push_node(out, 1,
			  (struct sc_tree_node){ .ja = true, .yes = branch(&pl, 0, pl.m - 1, 0) });
	if (out->n != (n ? n : 1))
		abort(); /* fewer than planned: as above */
	free(pl.cost);
	free(pl.nodes);
	free(pl.how);
}

void sc_tree_shape_free(struct sc_tree_shape *s)
{
	free(s->v);
	*s = (struct sc_tree_shape){ 0 };
}

void sc_tree_emit(const struct sc_tree_shape *s, const size_t *target, struct sock_filter *p,
		  size_t *at)
{
	size_t base = *at;

	for (size_t k = 0; k < s->n; k++, (*at)++) {
		const struct sc_tree_node *n = &s->v[k];
		size_t yes =
			n->yes >= SC_TREE_ANSWER ? target[n->yes - SC_TREE_ANSWER] : base + n->yes;
		size_t no = n->no >= SC_TREE_ANSWER ? target[n->no - SC_TREE_ANSWER] : base + n->no;
		if (n->ja)
			p[*at] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA,
							      (uint32_t)(yes - *at - 1));
		else
			p[*at] = (struct sock_filter)BPF_JUMP(
				BPF_JMP | (n->eq ? BPF_JEQ : BPF_JGE) | BPF_K, n->k,
				SC_JUMP(*at, yes), SC_JUMP(*at, no));
	}
}
