// SPDX-License-Identifier: Apache-2.0
/*
 * setidmod mmap FILE SRC: FILE's content replaced by SRC's (no longer than FILE) through a
 * shared mapping, which, unlike write(2) and truncate(2), leaves FILE's setuid and setgid bits
 * (and file capability) alone.
 * setidmod acl FILE: a minimal POSIX ACL (u::rwx g::r-x o::r-x) set on FILE with setxattr,
 * which rewrites its permission bits and keeps S_ISUID (S_ISGID too when the caller is in
 * FILE's group), so a 4700 file becomes 4755.
 * Both are what a default sandbox, whose seccomp filter refuses every call that sets a bit, may
 * do to a setid file its workspace already holds; tests/security/setid-walk.bats checks that
 * hutch clears the bits after the run. Prints FILE's mode afterwards.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int by_mmap(const char *file, const char *src)
{
	static char buf[1 << 20];
	int in = open(src, O_RDONLY), fd = open(file, O_RDWR);
	struct stat st;
	ssize_t n = in >= 0 ? read(in, buf, sizeof(buf)) : -1;
	if (fd < 0 || n <= 0 || fstat(fd, &st) < 0 || n > st.st_size) {
		perror("setidmod mmap");
		return 1;
	}
	char *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("setidmod mmap");
		return 1;
	}
	memcpy(p, buf, (size_t)n);
	if (msync(p, (size_t)st.st_size, MS_SYNC) < 0) {
		perror("setidmod msync");
		return 1;
	}
	munmap(p, (size_t)st.st_size);
	close(fd);
	return 0;
}

static int by_acl(const char *file)
{
	/* POSIX_ACL_XATTR_VERSION, then (tag, perm, id): ACL_USER_OBJ, ACL_GROUP_OBJ, ACL_OTHER */
	struct {
		uint32_t version;
		struct {
			uint16_t tag, perm;
			uint32_t id;
		} e[3];
	} acl = { 2,
		  { { 0x01, 7, UINT32_MAX }, { 0x04, 5, UINT32_MAX }, { 0x20, 5, UINT32_MAX } } };
	if (setxattr(file, "system.posix_acl_access", &acl, sizeof(acl), 0) < 0) {
		perror("setidmod acl");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct stat st;
	int r;
	if (argc == 4 && !strcmp(argv[1], "mmap"))
		r = by_mmap(argv[2], argv[3]);
	else if (argc == 3 && !strcmp(argv[1], "acl"))
		r = by_acl(argv[2]);
	else {
		fprintf(stderr, "usage: setidmod mmap FILE SRC | setidmod acl FILE\n");
		return 2;
	}
	if (r == 0 && stat(argv[2], &st) == 0)
		printf("%s %o\n", argv[2], (unsigned)(st.st_mode & 07777));
	return r;
}
