// SPDX-License-Identifier: Apache-2.0
/*
 * scprobe: a syscall matrix probe, built static into a test bundle's rootfs and run as the
 * container's process. Each argument is one check, NAME[/ARG...]=EXPECT: the syscall is made
 * with those (deliberately bad) arguments, so an allowed call fails in the kernel (EBADF,
 * EFAULT, ...) and a filtered one with the profile's errno. EXPECT is an errno name or OK.
 *   scprobe ioctl/-1/0x5412=EPERM read/-1/0/0=EBADF 1000=ENOSYS
 * --trap first: SIGSYS is caught and reported as "trapped NR" (exit 0), for SCMP_ACT_TRAP.
 * Prints one line per check; exits 1 if any check got something else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	const char *name;
	long nr;
} calls[] = {
	{ "read", SYS_read },
	{ "write", SYS_write },
	{ "close", SYS_close },
	{ "dup", SYS_dup },
	{ "dup3", SYS_dup3 },
	{ "getppid", SYS_getppid },
	{ "getpid", SYS_getpid },
	{ "mkdir", SYS_mkdir },
	{ "mkdirat", SYS_mkdirat },
	{ "ioctl", SYS_ioctl },
	{ "socket", SYS_socket },
	{ "mount", SYS_mount },
	{ "umount2", SYS_umount2 },
	{ "unshare", SYS_unshare },
	{ "setns", SYS_setns },
	{ "keyctl", SYS_keyctl },
	{ "add_key", SYS_add_key },
	{ "request_key", SYS_request_key },
	{ "bpf", SYS_bpf },
	{ "userfaultfd", SYS_userfaultfd },
	{ "io_uring_setup", 425 },
	{ "kexec_load", SYS_kexec_load },
	{ "ptrace", SYS_ptrace },
	{ "personality", SYS_personality },
	{ "clone", SYS_clone },
	{ "clone3", 435 },
	{ "acct", SYS_acct },
	{ "chroot", SYS_chroot },
	{ "getcwd", SYS_getcwd },
	{ "uname", SYS_uname },
	{ "reboot", SYS_reboot },
	{ "init_module", SYS_init_module },
	{ "open_by_handle_at", SYS_open_by_handle_at },
	{ "perf_event_open", SYS_perf_event_open },
	{ "fchmodat", SYS_fchmodat },
	{ "getpriority", SYS_getpriority },
};

static const struct {
	const char *name;
	int e;
} errnos[] = {
	{ "OK", 0 },
	{ "EPERM", EPERM },
	{ "ENOENT", ENOENT },
	{ "ESRCH", ESRCH },
	{ "EBADF", EBADF },
	{ "EFAULT", EFAULT },
	{ "EINVAL", EINVAL },
	{ "ENOSYS", ENOSYS },
	{ "EDOM", EDOM },
	{ "ERANGE", ERANGE },
	{ "EXDEV", EXDEV },
	{ "EACCES", EACCES },
	{ "ENOTTY", ENOTTY },
	{ "E2BIG", E2BIG },
	{ "EAFNOSUPPORT", EAFNOSUPPORT },
	{ "EOPNOTSUPP", EOPNOTSUPP },
	{ "EROFS", EROFS },
	{ "ENOTDIR", ENOTDIR },
	{ "EEXIST", EEXIST },
	{ "ENOTSUP", ENOTSUP },
};

static const char *errno_name(int e)
{
	static char buf[16];
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (errnos[i].e == e)
			return errnos[i].name;
	snprintf(buf, sizeof(buf), "%d", e);
	return buf;
}

static int errno_from(const char *s)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (strcmp(errnos[i].name, s) == 0)
			return errnos[i].e;
	return atoi(s);
}

static long nr_from(const char *s)
{
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strcmp(calls[i].name, s) == 0)
			return calls[i].nr;
	char *end;
	long nr = strtol(s, &end, 0);
	if (*end) {
		fprintf(stderr, "scprobe: unknown syscall %s\n", s);
		exit(2);
	}
	return nr;
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	printf("trapped %d code %d\n", si->si_syscall, si->si_code);
	fflush(stdout);
	_exit(0);
}

/* "ioctl/-1/0x5412=EPERM" -> one syscall; returns 0 when it did as expected. */
static int check(char *spec)
{
	char *eq = strrchr(spec, '=');
	unsigned long a[6] = { 0 };
	int n = 0;
	if (!eq) {
		fprintf(stderr, "scprobe: %s: expected NAME[/ARG...]=EXPECT\n", spec);
		exit(2);
	}
	*eq = '\0';
	char what[128];
	snprintf(what, sizeof(what), "%s", spec);
	int want = errno_from(eq + 1);
	char *save = NULL, *name = strtok_r(spec, "/", &save);
	for (char *t = strtok_r(NULL, "/", &save); t && n < 6; t = strtok_r(NULL, "/", &save))
		a[n++] = strtoul(t, NULL, 0); /* "-1" wraps to all ones, as a long would */
	fflush(stdout);
	errno = 0;
	long r = syscall(nr_from(name), a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r == 0 && nr_from(name) == SYS_clone)
		_exit(0); /* a clone that was let through: the child leaves */
	int got = r < 0 ? errno : 0;
	printf("%s %s: got %s, want %s\n", got == want ? "ok" : "FAIL", what, errno_name(got),
	       eq + 1);
	return got == want ? 0 : 1;
}

int main(int argc, char **argv)
{
	int bad = 0, i = 1;
	if (argc > 1 && strcmp(argv[1], "--trap") == 0) {
		struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
		sigaction(SIGSYS, &sa, NULL);
		i++;
	}
	for (; i < argc; i++)
		bad |= check(argv[i]);
	return bad;
}
