// SPDX-License-Identifier: Apache-2.0
/*
 * The exec trampoline: a few hundred bytes of freestanding code that hutch runs from a sealed
 * memfd as the last step of starting any container process, and that execs the real program.
 * Its point is /proc/self/exe: while the kernel resolves the program (and a "#!" interpreter
 * such as /proc/self/exe, CVE-2019-5736), the exe of the process doing the execve is this
 * sealed copy, never the host's hutch binary, so nothing in the container can run hutch or
 * reopen it for writing. No libc: nothing to link, nothing to initialise (a static glibc
 * start costs ~0.3 ms here), and no code beyond these lines runs with the container's fds.
 *
 *   argv: [\1FD] PATH ARGV0 ARGV1 ...   (execs PATH with ARGV0...)
 *
 * With a first argument of byte 1 and a number, that fd (a pipe's write end) is made
 * close-on-exec at once, so the program never has it, and a failed execve writes its errno
 * there as an int: hutch's sandbox init then tells the caller why (126 alone cannot).
 *
 * Run any other way than by execveat() of its fd (AT_EXECFN then reads "/dev/fd/N"), it is
 * being re-run from inside, through /proc/self/exe or a link to it: it refuses (status 126).
 */
#include <asm/unistd.h>
#include <linux/auxvec.h>
#include <linux/errno.h>
#include <linux/fcntl.h>

#if defined(__x86_64__)
static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}
__asm__(".text\n.globl _start\n_start:\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall "
	"tramp_main\n\thlt\n");
#elif defined(__aarch64__)
static long sys3(long n, long a, long b, long c)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}
__asm__(".text\n.globl _start\n_start:\n\tmov x0, sp\n\tbl tramp_main\n\tbrk #0\n");
#else
#error "the exec trampoline has no start code for this architecture"
#endif

static unsigned long len(const char *s)
{
	unsigned long n = 0;
	while (s[n])
		n++;
	return n;
}

static void say(const char *s)
{
	sys3(__NR_write, 2, (long)s, (long)len(s));
}

/* The common execve errors by name, as hutch's own messages give them; others by number. */
static const char *reason(long e, char buf[16])
{
	static const struct {
		long e;
		const char *s;
	} names[] = {
		{ ENOENT, "No such file or directory" },
		{ EACCES, "Permission denied" },
		{ ENOEXEC, "Exec format error" },
		{ E2BIG, "Argument list too long" },
		{ ETXTBSY, "Text file busy" },
		{ ENOMEM, "Cannot allocate memory" },
		{ EPERM, "Operation not permitted" },
		{ ELOOP, "Too many levels of symbolic links" },
		{ ENOTDIR, "Not a directory" },
		{ EISDIR, "Is a directory" },
		{ ENAMETOOLONG, "File name too long" },
		{ EINVAL, "Invalid argument" },
	};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].s;
	char *p = buf + 15;
	*p = '\0';
	do
		*--p = (char)('0' + e % 10);
	while ((e /= 10) && p > buf + 6);
	for (int i = 5; i >= 0; i--)
		*--p = "errno "[i];
	return p;
}

static int started_by_hutch(unsigned long *auxv)
{
	static const char want[] = "/dev/fd/";
	for (; auxv[0] != AT_NULL; auxv += 2) {
		if (auxv[0] != AT_EXECFN)
			continue;
		const char *fn = (const char *)auxv[1];
		for (unsigned i = 0; i < sizeof(want) - 1; i++)
			if (fn[i] != want[i])
				return 0;
		return 1;
	}
	return 0;
}

__attribute__((noreturn, used)) void tramp_main(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1), **envp = argv + argc + 1, **e = envp;
	while (*e)
		e++;
	if (argc < 2 || !started_by_hutch((unsigned long *)(e + 1))) {
		say("hutch: error: the runtime's exec trampoline cannot be run again from inside "
		    "the container (through /proc/self/exe?)\n");
		sys3(__NR_exit_group, 126, 0, 0);
	}
	/* Exactly byte 1 and digits: never a program path, which has a '/' (rt_find_executable). */
	long errfd = argv[0][0] == 1 && argv[0][1] && argc >= 3 ? 0 : -1;
	for (const char *d = argv[0] + 1; errfd >= 0 && *d; d++)
		errfd = *d >= '0' && *d <= '9' && errfd < 1 << 20 ? errfd * 10 + (*d - '0') : -1;
	if (errfd >= 0) {
		sys3(__NR_fcntl, errfd, F_SETFD, FD_CLOEXEC);
		argv++;
	}
	long r = sys3(__NR_execve, (long)argv[0], (long)(argv + 1), (long)envp);
	int code = (int)-r;
	if (errfd >= 0)
		sys3(__NR_write, errfd, (long)&code, sizeof(code));
	char buf[16];
	say("hutch: error: exec ");
	say(argv[0]);
	say(": ");
	say(reason(-r, buf));
	say("\n");
	sys3(__NR_exit_group, r == -ENOENT ? 127 : 126, 0, 0);
	for (;;)
		;
}
