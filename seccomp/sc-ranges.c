// SPDX-License-Identifier: Apache-2.0
/*
 * The allow ranges: most of a profile is "these syscalls, whatever the arguments: allow".
 * libseccomp turns that into one compare per syscall per ABI, ~1400 instructions for Docker's
 * profile on x86_64, and the kernel converts and JITs every instruction at each container
 * start (0.4 ms here). Sorted into ranges of syscall numbers and searched as a balanced tree
 * of compares, the same decisions take one instruction per range boundary. libseccomp then
 * compiles only what is left: rules with arguments, the other actions, multiplexed calls.
 *
 * The tree uses only loads of nr/arch, JGE and returns, which the kernel's seccomp action
 * cache can evaluate at load: an always-allowed syscall still skips the filter at run time.
 */
#include "sc-internal.h"

#include <linux/audit.h>
#include <seccomp.h>
#include <stdlib.h>

/* A group's tree must stay within the 8-bit jump offsets of classic BPF. */
#define MAX_BOUNDARIES 250

struct nr_vec {
	uint32_t *v;
	size_t n, cap;
};

static void push(struct nr_vec *s, uint32_t nr)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = hutch_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = nr;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* bsearch and qsort must not be given NULL, even for no elements. */
static bool contains(const struct nr_vec *sorted, uint32_t nr)
{
	return sorted->n && bsearch(&nr, sorted->v, sorted->n, sizeof(nr), cmp_u32) != NULL;
}

static void sort(struct nr_vec *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(uint32_t), cmp_u32);
}

static uint32_t audit_of(uint32_t token)
{
	return token == SCMP_ARCH_X32 ? AUDIT_ARCH_X86_64 : token;
}

/* The action most argument-free rules share (not the default: those add nothing). */
static bool pick_action(const struct sc_config *cfg, uint32_t *out)
{
	uint32_t act[16];
	size_t count[16] = { 0 }, n = 0, best = 0;

	for (size_t i = 0; i < cfg->n_rules; i++) {
		const struct sc_rule *r = &cfg->rules[i];
		if (r->n_args || r->action == cfg->default_action || r->action == SCMP_ACT_NOTIFY)
			continue;
		size_t k = 0;
		while (k < n && act[k] != r->action)
			k++;
		if (k == n && n == ARRAY_SIZE(act))
			continue;
		if (k == n)
			act[n++] = r->action;
		count[k] += r->n_names;
		if (count[k] > count[best])
			best = k;
	}
	if (n == 0 || count[best] == 0)
		return false;
	*out = act[best];
	return true;
}

/*
 * Sorts one ABI's numbers into simple (every rule naming it is argument-free, with the
 * chosen action) and complex. Names libseccomp maps onto a multiplexer (i386's socketcall
 * and ipc) resolve to pseudo numbers: then the multiplexers themselves stay with libseccomp,
 * which adds checks of their call number to them (libseccomp 2.5 lets an argument-free rule
 * on the multiplexer shadow those, but that is its decision, not ours).
 */
static void classify(const struct sc_config *cfg, uint32_t token, uint32_t action,
		     struct nr_vec *simple, struct nr_vec *complex)
{
	static const char *const multiplexers[] = { "socketcall", "ipc" };

	for (size_t i = 0; i < cfg->n_rules; i++) {
		const struct sc_rule *r = &cfg->rules[i];
		if (r->action == cfg->default_action)
			continue; /* sc_compile_bpf skips these too */
		for (size_t k = 0; k < r->n_names; k++) {
			if (seccomp_syscall_resolve_name(r->names[k]) == __NR_SCMP_ERROR)
				continue; /* unknown: skipped by the compiler as well */
			int nr = seccomp_syscall_resolve_name_arch(token, r->names[k]);
			if (nr == __NR_SCMP_ERROR)
				continue;
			if (nr < 0) {
				for (size_t m = 0; m < ARRAY_SIZE(multiplexers); m++) {
					int mx = seccomp_syscall_resolve_name_arch(token,
										   multiplexers[m]);
					if (mx >= 0)
						push(complex, (uint32_t)mx);
				}
			} else if (r->n_args == 0 && r->action == action) {
				push(simple, (uint32_t)nr);
			} else {
				push(complex, (uint32_t)nr);
			}
		}
	}
}

static struct sc_ranges_group *group_for(struct sc_ranges *rg, uint32_t audit)
{
	for (size_t i = 0; i < rg->n_groups; i++)
		if (rg->groups[i].audit == audit)
			return &rg->groups[i];
	if (rg->n_groups == ARRAY_SIZE(rg->groups))
		return NULL;
	rg->groups[rg->n_groups] = (struct sc_ranges_group){ .audit = audit };
	return &rg->groups[rg->n_groups++];
}

/* Appends the simple numbers that no complex rule names, as boundaries: [lo, hi] becomes
 * lo, hi + 1, so "how many boundaries are <= nr" is odd exactly inside a range. */
static void add_ranges(struct sc_ranges_group *g, struct nr_vec *simple, struct nr_vec *complex)
{
	sort(simple);
	sort(complex);
	for (size_t i = 0; i < simple->n; i++) {
		uint32_t nr = simple->v[i];
		if (contains(complex, nr) || (i > 0 && simple->v[i - 1] == nr))
			continue;
		if (g->n && g->bounds[g->n - 1] == nr) {
			g->bounds[g->n - 1] = nr + 1; /* extends the last range */
			continue;
		}
		g->bounds = hutch_xrealloc(g->bounds, (g->n + 2) * sizeof(uint32_t));
		g->bounds[g->n++] = nr;
		g->bounds[g->n++] = nr + 1;
	}
}

static int cmp_range(const void *a, const void *b)
{
	return cmp_u32(a, b);
}

/* x86_64 and x32 share an audit arch: their ranges (x32's carry bit 30) join in one group,
 * sorted by range; they never touch. */
static void sort_group(struct sc_ranges_group *g)
{
	if (g->n)
		qsort(g->bounds, g->n / 2, 2 * sizeof(uint32_t), cmp_range);
}

void sc_ranges_plan(const struct sc_config *cfg, const uint32_t *tokens, size_t n_tokens,
		    struct sc_ranges *out)
{
	*out = (struct sc_ranges){ 0 };
	if (!pick_action(cfg, &out->action))
		return;
	for (size_t t = 0; t < n_tokens; t++) {
		struct nr_vec simple = { 0 }, complex = { 0 };
		struct sc_ranges_group *g = group_for(out, audit_of(tokens[t]));
		if (g) {
			classify(cfg, tokens[t], out->action, &simple, &complex);
			add_ranges(g, &simple, &complex);
		}
		free(simple.v);
		free(complex.v);
	}
	for (size_t i = 0; i < out->n_groups; i++) {
		struct sc_ranges_group *g = &out->groups[i];
		sort_group(g);
		if (g->n > MAX_BOUNDARIES) { /* too big for short jumps: libseccomp keeps it */
			free(g->bounds);
			g->bounds = NULL;
			g->n = 0;
		}
	}
}

bool sc_ranges_has(const struct sc_ranges *rg, uint32_t token, int nr)
{
	if (nr < 0)
		return false;
	for (size_t i = 0; i < rg->n_groups; i++) {
		const struct sc_ranges_group *g = &rg->groups[i];
		if (g->audit != audit_of(token))
			continue;
		size_t le = 0; /* boundaries <= nr */
		while (le < g->n && g->bounds[le] <= (uint32_t)nr)
			le++;
		return le % 2 == 1;
	}
	return false;
}

void sc_ranges_free(struct sc_ranges *rg)
{
	for (size_t i = 0; i < rg->n_groups; i++)
		free(rg->groups[i].bounds);
	rg->n_groups = 0;
}

/* ---- emitting ---- */

#define JUMP(i, to) ((uint8_t)((to) - (i)-1))

/*
 * The subtree over boundaries [lo, hi) at p[*at..]: one JGE per boundary. Reaching a leaf
 * means exactly lo boundaries are <= nr, so odd is inside a range (yes), even outside (no).
 */
static void emit_tree(struct sock_filter *p, size_t *at, const uint32_t *b, size_t lo, size_t hi,
		      size_t yes, size_t no)
{
	size_t mid = (lo + hi) / 2, i = (*at)++;
	size_t left = lo == mid ? (lo % 2 ? yes : no) : i + 1;
	size_t right = mid + 1 == hi ? (hi % 2 ? yes : no) : i + 1 + (mid - lo);

	p[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, b[mid], JUMP(i, right),
					    JUMP(i, left));
	if (lo < mid)
		emit_tree(p, at, b, lo, mid, yes, no);
	if (mid + 1 < hi)
		emit_tree(p, at, b, mid + 1, hi, yes, no);
}

static size_t used_groups(const struct sc_ranges *rg)
{
	size_t n = 0;
	for (size_t i = 0; i < rg->n_groups; i++)
		n += rg->groups[i].n > 0;
	return n;
}

/*
 * Layout: load the arch; per group "jeq audit, next, skip; ja block"; "ja rest"; then per
 * group a block: load nr, the tree, "ret action", "ja rest". rest is the first instruction
 * after the prefix (libseccomp's program), and the only long jumps are the JAs.
 */
size_t sc_ranges_emit(const struct sc_ranges *rg, struct sock_filter *p)
{
	size_t groups = used_groups(rg), len = groups ? 2 + 2 * groups : 0;
	for (size_t i = 0; i < rg->n_groups; i++)
		if (rg->groups[i].n)
			len += rg->groups[i].n + 3;
	if (!p || !groups)
		return len;
	size_t at = 0, block = 2 + 2 * groups, rest = len;
	p[at++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4); /* arch */
	for (size_t i = 0; i < rg->n_groups; i++) {
		const struct sc_ranges_group *g = &rg->groups[i];
		if (!g->n)
			continue;
		p[at] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, g->audit, 0, 1);
		at++;
		p[at] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(block - at - 1));
		at++;
		block += g->n + 3;
	}
	p[at] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(rest - at - 1));
	at++;
	for (size_t i = 0; i < rg->n_groups; i++) {
		const struct sc_ranges_group *g = &rg->groups[i];
		if (!g->n)
			continue;
		size_t yes = at + 1 + g->n, no = yes + 1;
		p[at++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0); /* nr */
		emit_tree(p, &at, g->bounds, 0, g->n, yes, no);
		p[at++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, rg->action);
		p[at] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(rest - at - 1));
		at++;
	}
	return len;
}
