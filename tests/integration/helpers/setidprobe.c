// SPDX-License-Identifier: Apache-2.0
/*
 * setidprobe: every way a process can give a file a mode, by raw syscall number, so that the
 * headers' age does not matter (Debian 12's stop at 450; fchmodat2 is 452). Built static into
 * the image by tests/security/setid.bats. Each argument is one check, CALL:PATH:MODE=EXPECT
 * (EXPECT an errno name or OK); CALL "i386.NAME" makes the same call through int $0x80, the
 * i386 ABI, which seccomp filters by its own numbers:
 *   setidprobe fchmodat2:/workspace/e:06755=EPERM i386.chmod:/workspace/e:04755=EPERM
 * CALLs: chmod fchmod fchmodat fchmodat2 open openat openat2 creat mknod mknodat mkdir mkdirat,
 * and setcap: setxattr of security.capability (CAP_SETUID, effective; MODE is ignored). open*
 * and creat use O_CREAT|O_EXCL, mknod* S_IFREG. Prints one line per check; exits 1 if any got
 * something else, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct open_how_v0 {
	uint64_t flags, mode, resolve;
};

enum { X86_64, I386 };

/* Numbers per ABI: arch/x86/entry/syscalls/syscall_{64,32}.tbl (seccomp/tables/). */
static const struct {
	const char *name;
	long nr[2];
} calls[] = {
	{ "chmod", { 90, 15 } },       { "fchmod", { 91, 94 } }, { "fchmodat", { 268, 306 } },
	{ "fchmodat2", { 452, 452 } }, { "open", { 2, 5 } },	 { "openat", { 257, 295 } },
	{ "openat2", { 437, 437 } },   { "creat", { 85, 8 } },	 { "mknod", { 133, 14 } },
	{ "mknodat", { 259, 297 } },   { "mkdir", { 83, 39 } },	 { "mkdirat", { 258, 296 } },
	{ "setcap", { 188, 226 } }, /* setxattr */
};

static const struct {
	const char *name;
	int e;
} errnos[] = {
	{ "OK", 0 },	      { "EPERM", EPERM },   { "ENOENT", ENOENT }, { "EBADF", EBADF },
	{ "EACCES", EACCES }, { "EEXIST", EEXIST }, { "EINVAL", EINVAL }, { "ENOSYS", ENOSYS },
	{ "EFAULT", EFAULT }, { "EROFS", EROFS },
};

/* i386 calls take 32-bit pointers: the path and open_how live here, in a static (non-PIE)
 * binary's data, below 4 GiB. */
static char path32[4096];
static struct open_how_v0 how32;
static char cap_name[] = "security.capability";
/* struct vfs_cap_data, revision 2, effective: CAP_SETUID (7) permitted. */
static const uint32_t cap_value[5] = { 0x02000001, 1u << 7, 0, 0, 0 };

static long call32(long nr, long a, long b, long c, long d, long e)
{
	long r;
	__asm__ volatile("int $0x80"
			 : "=a"(r)
			 : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
			 : "memory", "r8", "r9", "r10", "r11");
	return r < 0 && r > -4096 ? (errno = (int)-r, -1) : r;
}

static long call(int abi, long nr, long a, long b, long c, long d, long e)
{
	return abi == I386 ? call32(nr, a, b, c, d, e) : syscall(nr, a, b, c, d, e);
}

/* The syscall, its arguments in the order of its ABI's prototype. */
static long run(int abi, const char *name, long nr, const char *path, long mode)
{
	const long cwd = AT_FDCWD, creat = O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC;
	long p = (long)(uintptr_t)path;

	if (!strcmp(name, "fchmod")) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		long r = call(abi, nr, fd, mode, 0, 0, 0);
		int e = errno;
		close(fd);
		errno = e;
		return r;
	}
	if (!strcmp(name, "openat2")) {
		struct open_how_v0 how = { .flags = (uint64_t)creat, .mode = (uint64_t)mode };
		how32 = how;
		return call(abi, nr, cwd, p, (long)(uintptr_t)(abi == I386 ? &how32 : &how),
			    sizeof(how), 0);
	}
	if (!strcmp(name, "setcap"))
		return call(abi, nr, p, (long)(uintptr_t)cap_name, (long)(uintptr_t)cap_value,
			    sizeof(cap_value), 0);
	if (!strcmp(name, "chmod") || !strcmp(name, "creat") || !strcmp(name, "mkdir"))
		return call(abi, nr, p, mode, 0, 0, 0);
	if (!strcmp(name, "fchmodat") || !strcmp(name, "fchmodat2") || !strcmp(name, "mkdirat"))
		return call(abi, nr, cwd, p, mode, 0, 0);
	if (!strcmp(name, "open"))
		return call(abi, nr, p, creat, mode, 0, 0);
	if (!strcmp(name, "openat"))
		return call(abi, nr, cwd, p, creat, mode, 0);
	if (!strcmp(name, "mknod"))
		return call(abi, nr, p, S_IFREG | mode, 0, 0, 0);
	return call(abi, nr, cwd, p, S_IFREG | mode, 0, 0); /* mknodat */
}

static int errno_from(const char *s)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(errnos[i].name, s))
			return errnos[i].e;
	fprintf(stderr, "setidprobe: unknown errno %s\n", s);
	exit(2);
}

static const char *errno_name(int e)
{
	static char buf[16];
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (errnos[i].e == e)
			return errnos[i].name;
	snprintf(buf, sizeof(buf), "%d", e);
	return buf;
}

/* "i386.fchmodat2:/workspace/e:06755=EPERM" -> one call; 0 when it did as expected. */
static int check(const char *spec)
{
	char name[32], path[4096], want[16];
	long mode;
	int abi = X86_64;

	if (sscanf(spec, "%31[^:]:%4095[^:]:%li=%15s", name, path, &mode, want) != 4) {
		fprintf(stderr, "setidprobe: %s: expected CALL:PATH:MODE=EXPECT\n", spec);
		exit(2);
	}
	const char *base = name;
	if (!strncmp(name, "i386.", 5))
		abi = I386, base = name + 5;
	size_t i = 0;
	while (i < sizeof(calls) / sizeof(calls[0]) && strcmp(calls[i].name, base))
		i++;
	if (i == sizeof(calls) / sizeof(calls[0])) {
		fprintf(stderr, "setidprobe: unknown call %s\n", base);
		exit(2);
	}
	if (abi == I386 && (uintptr_t)path32 > UINT32_MAX) {
		fprintf(stderr, "setidprobe: built as PIE: no 32-bit pointers for i386\n");
		exit(2);
	}
	snprintf(path32, sizeof(path32), "%s", path);
	errno = 0;
	long r = run(abi, base, calls[i].nr[abi], path32, mode);
	int got = r < 0 ? errno : 0;
	if (r >= 0 && strncmp(base, "open", 4) == 0)
		close((int)r);
	if (r >= 0 && !strcmp(base, "creat"))
		close((int)r);
	int exp = errno_from(want);
	printf("%s %s: got %s, want %s\n", got == exp ? "ok" : "FAIL", spec, errno_name(got), want);
	return got != exp;
}

int main(int argc, char **argv)
{
	int bad = 0;
	for (int i = 1; i < argc; i++)
		bad |= check(argv[i]);
	return bad;
}
