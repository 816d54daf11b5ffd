// SPDX-License-Identifier: Apache-2.0
/*
 * A runtime's own peak memory. Two figures: "tree", wait4's ru_maxrss (what /usr/bin/time
 * shows: the largest process of the waited tree, the container's init included, and an
 * init cloned from the runtime counts the runtime's pages it touched); and "self", the
 * largest VmHWM of the top process alone, read under ptrace at every execve (crun re-execs
 * itself) and at its exit. Only the top process is traced: children run untraced.
 * Usage: peakrss CMD [ARGS...]   prints "tree=KiB self=KiB status=N"
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static long vm_hwm(pid_t pid)
{
	char path[64], line[256];
	long kib = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kib = atol(line + 6);
	fclose(f);
	return kib;
}

static int is_exec_entry(pid_t pid)
{
#ifdef __x86_64__
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
		return 0;
	return regs.orig_rax == SYS_execve || regs.orig_rax == SYS_execveat;
#else
	(void)pid;
	return 0; /* the pre-exec image is not sampled here */
#endif
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: peakrss CMD [ARGS...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	int st;
	struct rusage ru;
	long self = 0;
	int in_syscall = 0;
	waitpid(pid, &st, 0);
	ptrace(PTRACE_SETOPTIONS, pid, NULL,
	       PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL);
	ptrace(PTRACE_SYSCALL, pid, NULL, NULL);
	for (;;) {
		if (wait4(pid, &st, __WALL, &ru) < 0) {
			perror("wait4");
			return 125;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		int sig = 0, event = st >> 16;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			in_syscall = !in_syscall;
			if (in_syscall && is_exec_entry(pid))
				self = self > vm_hwm(pid) ? self : vm_hwm(pid);
		} else if (event == PTRACE_EVENT_EXEC) {
			in_syscall = 1; /* the exit half of execve comes next */
		} else if (event == PTRACE_EVENT_EXIT) {
			long h = vm_hwm(pid);
			self = self > h ? self : h;
		} else if (event == 0) {
			sig = WSTOPSIG(st);
		}
		ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig);
	}
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	printf("tree=%ld self=%ld status=%d\n", ru.ru_maxrss, self, code);
	return 0;
}
