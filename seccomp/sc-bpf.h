/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp/bpf/, the range-tree optimiser: the allow ranges and search trees put in front of
 * libseccomp's program (sc-tree.c, sc-ranges.c, sc-ranges-emit.c), the classic BPF evaluator
 * the tests run programs with (sc-eval.c), and what the ranges share with sc-compile.c's
 * ENOSYS prologue. */
#ifndef HUTCH_SC_BPF_H
#define HUTCH_SC_BPF_H

#include "sc-internal.h"

/* A search tree over sorted boundaries (sc-tree.c): segment k is [b[k-1], b[k]) (from 0, to
 * 2^32) and its answer is target[seg[k]]. The kernel runs a number tree at load for each
 * number below ~470 (emulated), an argument tree only at calls. */
struct sc_tree {
	const uint32_t *b;
	const uint8_t *seg;
	size_t n;
	bool emulated;
};

/* A tree's compares in emission order: JGE, or JEQ (eq), on k; yes and no are a later node,
 * or SC_TREE_ANSWER + an answer. A tree that is one leaf is one "ja" to it. */
#define SC_TREE_ANSWER 0x8000
struct sc_tree_node {
	uint32_t k;
	bool eq, ja;
	uint16_t yes, no;
};
struct sc_tree_shape {
	struct sc_tree_node *v;
	size_t n; /* at least 1 */
};

/* The cheapest shape for t: see sc-tree.c. */
void sc_tree_shape(const struct sc_tree *t, struct sc_tree_shape *out);
void sc_tree_shape_free(struct sc_tree_shape *s);
/* The shape at p[*at..]; jumps out of it only to target[answer]. */
void sc_tree_emit(const struct sc_tree_shape *s, const size_t *target, struct sock_filter *p,
		  size_t *at);

/* The jt/jf (or, cast, ja's k) from instruction i to instruction to. */
#define SC_JUMP(i, to) ((uint8_t)((to) - (i)-1))

/* One syscall decided by ranges of an argument's low word (its rules all MASKED_EQ with
 * high-ones masks on that argument, one action): boundaries as for the numbers. */
struct sc_arg_ranges {
	uint32_t nr, action;
	unsigned int index;
	uint32_t *bounds;
	size_t n;
	bool shared; /* x32's, reached through x86_64's identical tree instead */
	struct sc_tree_shape shape;
};

#define SC_MAX_ARG_TREES 8

/* What the prefix answers for a run of syscall numbers. */
enum sc_seg {
	SC_SEG_REST,	/* libseccomp's program (or an argument tree) decides */
	SC_SEG_ACTION,	/* the ranges' action */
	SC_SEG_DEFAULT, /* no rule names it: the default action */
	SC_SEG_ENOSYS,	/* above the profile's highest number: the ENOSYS prologue's answer */
	SC_SEG_SHARED,	/* x32's number, answered as x86_64's: nr & ~bit 30 (emitting only) */
};

/* Classic BPF as seccomp runs it (sc-eval.c): false on anything it would refuse. */
bool sc_bpf_run(const struct sock_filter *p, size_t len, const struct seccomp_data *d,
		uint32_t *ret);

/* A group's tree must stay within the 8-bit jump offsets of classic BPF. */
#define MAX_BOUNDARIES 250
#define X32_BIT 0x40000000u /* x32's numbers, in x86_64's audit arch */

/* One audit arch's numbers as sorted boundaries: segment i is [bounds[i-1], bounds[i])
 * (from 0, to 2^32) and seg[i] (n + 1 of them) says what it gets. */
struct sc_ranges_group {
	uint32_t audit;
	uint32_t *bounds;
	uint8_t *seg;
	size_t n;
	struct sc_arg_ranges args[SC_MAX_ARG_TREES];
	size_t n_args;
	/* Emitted instead, when shorter: x32's half [bit 30, 2^32) as its own tree whose SHARED
	 * segments go on to x86_64's tree (the n_low bounds below bit 30) with bit 30 masked. */
	uint32_t *x32_bounds;
	uint8_t *x32_seg;
	size_t x32_n, n_low;
	bool shared;
	/* The number tree's shape (x86_64's below bit 30 when shared) and x32's. */
	struct sc_tree_shape shape, x32_shape;
};

struct sc_ranges {
	uint32_t action, default_action;
	struct sc_ranges_group groups[8];
	size_t n_groups;
};

/* Plans the ranges of cfg for the filter's ABIs (libseccomp arch tokens, x32 included). */
void sc_ranges_plan(const struct sc_config *cfg, const uint32_t *tokens, size_t n_tokens,
		    struct sc_ranges *out);
/* Is nr (of ABI token) decided by the prefix (ranges or an argument tree), so that libseccomp
 * must not see any rule for it? */
bool sc_ranges_has(const struct sc_ranges *rg, uint32_t token, int nr);
/* The prefix program into p (NULL: only its length); it jumps to the instruction after
 * itself for every syscall it does not decide. 0 when there are no ranges. */
size_t sc_ranges_emit(const struct sc_ranges *rg, struct sock_filter *p);
void sc_ranges_free(struct sc_ranges *rg);
/* The highest number of ABI token that cfg names (-1: none), and whether syscalls above it
 * get ENOSYS (sc-compile.c's prologue): the ranges answer both exactly as it does. */
int64_t sc_abi_max(const struct sc_config *cfg, uint32_t token);
bool sc_wants_enosys(uint32_t default_action);
/* The direct syscall libseccomp also writes for a multiplexed name of ABI token (i386's socket
 * and ipc calls), or -1. */
int sc_mux_direct(uint32_t token, const char *name);

#endif
