// SPDX-License-Identifier: Apache-2.0
/*
 * i386's multiplexers, socketcall and ipc, pass a call's arguments behind a pointer that
 * seccomp can't follow. libseccomp writes a rule on a socket or ipc call on both its direct
 * syscall and the multiplexer ("a0 == call"), and on the multiplexer it drops the conditions
 * on the call's own arguments: "socket, but not AF_VSOCK" became "socketcall(SYS_SOCKET),
 * any family", and int $0x80 made a vsock socket in a --network none sandbox. This guard,
 * in front of libseccomp's program, answers such a call through its multiplexer with the
 * most restrictive of the profile's default and those rules' actions: what the rules say
 * once their arguments can't be read. 32-bit programs reach the call directly (Linux 4.3+).
 */
#include "sc-internal.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>

#define CALLS_MAX 32 /* socketcall's calls are 1-20, ipc's 1-24 */

struct mux {
	int nr;			    /* the multiplexer's i386 number */
	uint32_t action[CALLS_MAX]; /* per call: the guard's answer, 0 = not guarded */
	bool exact[CALLS_MAX];	    /* an argument-free rule decides it: no guard */
};

/* The kernel's precedence: the lower value, as a signed number, wins (KILL_PROCESS is
 * 0x80000000). */
static uint32_t stricter(uint32_t a, uint32_t b)
{
	return (int32_t)(a & SECCOMP_RET_ACTION_FULL) <= (int32_t)(b & SECCOMP_RET_ACTION_FULL) ? a
												: b;
}

static bool has_i386(const struct sc_config *cfg)
{
	for (size_t i = 0; i < cfg->n_archs; i++) {
		uint32_t token;
		if (sc_arch_token(cfg->archs[i], &token) == 0 && token == SCMP_ARCH_X86)
			return true;
	}
	return seccomp_arch_native() == SCMP_ARCH_X86;
}

/* libseccomp's pseudo numbers: -100 - call for socketcall, -200 - call for ipc. */
static void note(struct mux m[2], const struct sc_config *cfg, const struct sc_rule *r)
{
	for (size_t k = 0; k < r->n_names; k++) {
		int pseudo = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, r->names[k]);
		int which = pseudo <= -100 && pseudo > -200   ? 0
			    : pseudo <= -200 && pseudo > -300 ? 1
							      : -1;
		if (which < 0)
			continue;
		int call = -pseudo - (which ? 200 : 100);
		if (call <= 0 || call >= CALLS_MAX)
			continue;
		if (!r->n_args)
			m[which].exact[call] = true;
		else
			m[which].action[call] = stricter(
				m[which].action[call] ? m[which].action[call] : cfg->default_action,
				r->action);
	}
}

static size_t guarded(const struct mux *m)
{
	size_t n = 0;
	for (int c = 1; c < CALLS_MAX; c++)
		n += m->action[c] && !m->exact[c];
	return n;
}

/* One multiplexer's block: ld nr; jeq MUX else next block; ld a0; per call: jeq CALL, ret. */
static size_t emit_mux(const struct mux *m, struct sock_filter *p)
{
	size_t k = guarded(m), at = 0;
	if (!k)
		return 0;
	if (!p)
		return 3 + 2 * k;
	p[at++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					       offsetof(struct seccomp_data, nr));
	p[at++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)m->nr, 0,
					       (uint8_t)(1 + 2 * k));
	/* a0's low word: the call number, an int (x86 is little-endian) */
	p[at++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					       offsetof(struct seccomp_data, args[0]));
	for (int c = 1; c < CALLS_MAX; c++) {
		if (!m->action[c] || m->exact[c])
			continue;
		p[at++] =
			(struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)c, 0, 1);
		p[at++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, m->action[c]);
	}
	return at;
}

size_t sc_mux_guard(const struct sc_config *cfg, struct sock_filter *p)
{
	struct mux m[2] = { { .nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86,
								      "socketcall") },
			    { .nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, "ipc") } };
	if (!has_i386(cfg))
		return 0;
	for (size_t i = 0; i < cfg->n_rules; i++)
		if (cfg->rules[i].action != cfg->default_action)
			note(m, cfg, &cfg->rules[i]);
	size_t body = emit_mux(&m[0], NULL) + emit_mux(&m[1], NULL);
	if (!body)
		return 0;
	if (!p)
		return 2 + body;
	p[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, arch));
	p[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0,
					    (uint8_t)body);
	size_t at = 2 + emit_mux(&m[0], p + 2);
	return at + emit_mux(&m[1], p + at);
}
