// SPDX-License-Identifier: Apache-2.0
/*
 * What the kernel alone charges for a seccomp program: forked children that set
 * no_new_privs and exit, alternately with and without seccomp(2) of the program (a
 * compiled-filter cache entry: its 88-byte header, then the instructions), so that the
 * difference is the load (copy, checks, conversion to eBPF, JIT, and the emulation that
 * fills the action cache) and the program's release at exit. Also counts the steps of that
 * emulation: for each number below 512 of x86_64 and i386, the instructions run until an
 * answer (or a load of an argument, where the kernel gives up). The seccomp(2) call itself
 * is also clocked inside each child: its median is the steadier figure.
 * Usage: scload ENTRY.bpf [N]   (default N=1000)
 */
#include "spawn.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define HEADER 88

/* The kernel's seccomp_is_const_allow, step by step: -1 where it stops without an answer. */
static int steps_to_answer(const struct sock_filter *p, size_t len, uint32_t nr, uint32_t arch)
{
	uint32_t a = 0;
	int steps = 0;
	for (size_t pc = 0; pc < len; pc++, steps++) {
		const struct sock_filter *f = &p[pc];
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k != 0 && f->k != 4)
				return -1;
			a = f->k == 0 ? nr : arch;
			break;
		case BPF_RET | BPF_K:
			return steps + 1;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & f->k) ? f->jt : f->jf;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= f->k;
			break;
		default:
			return -1;
		}
	}
	return -1;
}

/* One forked child, loading prog or not; *syscall_ms gets the seccomp(2) call alone, timed
 * in the child (steadier than fork+exit, whose spread hides a few µs). */
static double one_run(const struct sock_fprog *prog, int pipe_w, int pipe_r, double *syscall_ms)
{
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		double s0 = now_ms();
		if (prog && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
			_exit(1);
		double d = now_ms() - s0;
		_exit(write(pipe_w, &d, sizeof(d)) == sizeof(d) ? 0 : 1);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    read(pipe_r, syscall_ms, sizeof(*syscall_ms)) != sizeof(*syscall_ms)) {
		fprintf(stderr, "scload: the child failed (is the program valid?)\n");
		exit(1);
	}
	return now_ms() - t0;
}

int main(int argc, char **argv)
{
	static char buf[HEADER + 4096 * sizeof(struct sock_filter)];
	if (argc < 2) {
		fprintf(stderr, "usage: scload ENTRY.bpf [N]\n");
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	FILE *f = fopen(argv[1], "rb");
	size_t got = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (!f || got <= HEADER || (got - HEADER) % sizeof(struct sock_filter) || n < 1) {
		fprintf(stderr, "scload: %s: not a cache entry\n", argv[1]);
		return 2;
	}
	fclose(f);
	struct sock_fprog prog = { .len = (unsigned short)((got - HEADER) /
							   sizeof(struct sock_filter)),
				   .filter = (struct sock_filter *)(buf + HEADER) };

	long steps = 0, stopped = 0;
	const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 };
	for (size_t a = 0; a < 2; a++)
		for (uint32_t nr = 0; nr < 512; nr++) {
			int s = steps_to_answer(prog.filter, prog.len, nr, arches[a]);
			stopped += s < 0;
			steps += s < 0 ? 0 : s;
		}

	double *with = calloc((size_t)n, sizeof(double)),
	       *without = calloc((size_t)n, sizeof(double)),
	       *call = calloc((size_t)n, sizeof(double));
	int p[2];
	double ignored;
	if (!with || !without || !call || pipe(p) < 0) {
		perror("scload");
		return 1;
	}
	for (int i = 0; i < 20; i++) /* warm-up */
		one_run(i % 2 ? &prog : NULL, p[1], p[0], &ignored);
	for (int i = 0; i < 2 * n; i++) {
		bool load = (i % 4 == 1 || i % 4 == 2); /* ABBA: neither goes first more often */
		(load ? with : without)[i / 2] =
			one_run(load ? &prog : NULL, p[1], p[0], load ? &call[i / 2] : &ignored);
	}
	double wmin = quantile(with, n, 0), womin = quantile(without, n, 0);
	double wmed = quantile(with, n, 0.5), womed = quantile(without, n, 0.5);
	printf("%u instructions, %ld emulation steps for 1024 numbers (%ld stop early)\n", prog.len,
	       steps, stopped);
	printf("fork+exit, N=%d each: without %.3f ms median (%.3f min), with %.3f (%.3f)\n", n,
	       womed, womin, wmed, wmin);
	printf("the load adds %.3f ms median, %.3f ms min\n", wmed - womed, wmin - womin);
	printf("seccomp(2) itself, timed in the child: %.1f us median, %.1f p25, %.1f min\n",
	       quantile(call, n, 0.5) * 1e3, quantile(call, n, 0.25) * 1e3,
	       quantile(call, n, 0) * 1e3);
	free(call);
	free(with);
	free(without);
	return 0;
}
