// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel's floor for a container start: the least a launcher must do to run a command
 * in its own root. One clone into new mount, pid, uts, ipc and (unless -n) network
 * namespaces; in the child a private mount tree, the rootfs bind-mounted, a fresh /proc,
 * pivot_root and exec. No cgroups, no /dev, no seccomp, no capabilities work.
 * Usage: floor [-n] ROOTFS CMD [ARGS...]   (build static: cc -O2 -static)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	_exit(125);
}

static void child(const char *rootfs, char **argv)
{
	/* Private first: pivot_root refuses shared mounts, and nothing may leak to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("make / private");
	if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		die("bind rootfs");
	if (chdir(rootfs) < 0)
		die("chdir rootfs");
	if (mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("mount proc");
	/* pivot_root(".", ".") stacks the old root on the new one; detaching it leaves the new. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		die("pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		die("umount old root");
	if (chdir("/") < 0)
		die("chdir /");
	execv(argv[0], argv);
	die("execv");
}

int main(int argc, char **argv)
{
	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET;
	int a = 1;
	if (argc > 1 && !strcmp(argv[1], "-n")) {
		flags &= ~CLONE_NEWNET;
		a++;
	}
	if (argc - a < 2) {
		fprintf(stderr, "usage: floor [-n] ROOTFS CMD [ARGS...]\n");
		return 2;
	}
	/* A fork-like clone: the child is pid 1 of the new pid namespace. */
	pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0)
		die("clone");
	if (pid == 0)
		child(argv[a], argv + a + 1);
	int st;
	if (waitpid(pid, &st, 0) < 0)
		die("waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
