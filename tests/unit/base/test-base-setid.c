// SPDX-License-Identifier: Apache-2.0
/*
 * base: the setid walk (hutch-setid.h) against temp trees: bits and capabilities on files
 * changed since the start go, older ones and what is not the walk's (a symlink's target
 * outside, a setgid directory, a FIFO, a mount point beneath, a nosuid mount) stay. Mounts
 * and file capabilities need root: as another user those checks are skipped.
 */
#include "hutch-base.h"
#include "hutch-setid.h"
#include "tap.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#define DEEP 150 /* beyond the fds the walk holds down a path (64) */

static bool root;

static void make(const char *dir, const char *name, mode_t mode)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void)!write(fd, "x", 1);
		fchmod(fd, mode);
		close(fd);
	}
}

static mode_t mode_of(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0 ? st.st_mode & 07777 : 0;
}

static bool has_caps(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lgetxattr(path, "security.capability", NULL, 0) > 0;
}

/* A v2 file capability (cap_net_raw+ep), as setcap writes it. */
static int set_caps(const char *dir, const char *name)
{
	char path[4096];
	uint32_t v[5] = { 0x02000000 | 1 /* VFS_CAP_REVISION_2 | effective */, 1u << 13, 0, 0, 0 };
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return setxattr(path, "security.capability", v, sizeof(v), 0);
}

/* A start no older file's ctime reaches: the coarse clock moves on a tick. */
static void start_after(const char *dir, const char *name, struct timespec *since)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	stat(path, &st);
	do {
		usleep(2000);
		hutch_setid_now(since);
	} while (since->tv_sec < st.st_ctim.tv_sec ||
		 (since->tv_sec == st.st_ctim.tv_sec && since->tv_nsec <= st.st_ctim.tv_nsec));
}

static int walk(const char *dir, const struct timespec *since, struct hutch_setid_walk *w)
{
	struct hutch_err err = { 0 };
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = hutch_setid_clear_tree(fd, since, w, &err);
	if (r < 0)
		printf("# %s\n", err.msg);
	return r;
}

/* A private mount namespace, so that the test's mounts go when it ends. */
static bool private_mounts(void)
{
	return root && unshare(CLONE_NEWNS) == 0 &&
	       mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
}

static void test_tree(const char *tmp, bool mounts)
{
	char t[512], out[512], path[4096];
	struct timespec since;
	struct hutch_setid_walk w;
	snprintf(t, sizeof(t), "%s/tree", tmp);
	snprintf(out, sizeof(out), "%s/outside", tmp);
	mkdir(t, 0755);
	mkdir(out, 0755);
	make(t, "old-suid", 04755);
	make(t, "old-caps", 0755);
	if (root)
		set_caps(t, "old-caps");
	start_after(t, "old-caps", &since);
	make(t, "suid", 04755);
	make(t, "sgid", 02755);
	make(t, "both", 06711);
	make(t, "plain", 0755);
	make(out, "target", 04755);
	char link[600];
	snprintf(path, sizeof(path), "%s/target", out);
	snprintf(link, sizeof(link), "%s/link", t);
	(void)!symlink(path, link);
	snprintf(path, sizeof(path), "%s/fifo", t);
	mkfifo(path, 0644);
	chmod(path, 04644);
	snprintf(path, sizeof(path), "%s/sgid-dir", t);
	mkdir(path, 0755);
	chmod(path, 02775);
	make(path, "inner-suid", 04700);
	make(t, "caps", 0755);
	if (root)
		set_caps(t, "caps");
	snprintf(path, sizeof(path), "%s/mnt", t);
	mkdir(path, 0755);
	if (mounts) {
		mount("tmpfs", path, "tmpfs", 0, "mode=0755");
		make(path, "suid", 04755);
		make(t, "file-mnt", 0644);
		make(out, "bound", 04755);
		char src[4096];
		snprintf(src, sizeof(src), "%s/bound", out);
		snprintf(path, sizeof(path), "%s/file-mnt", t);
		mount(src, path, NULL, MS_BIND, NULL);
	}
	ok(walk(t, &since, &w) == 0, "walk: a tree");
	ok(w.cleared == (root ? 5u : 4u) && w.failed == 0 && !w.incomplete && !w.nosuid,
	   "walk: cleared %llu files (failed %llu)", (unsigned long long)w.cleared,
	   (unsigned long long)w.failed);
	ok(mode_of(t, "suid") == 0755 && mode_of(t, "sgid") == 0755 && mode_of(t, "both") == 0711,
	   "setuid and setgid bits of new files are cleared, the rest of their mode kept");
	ok(mode_of(t, "sgid-dir/inner-suid") == 0700, "in a subdirectory too");
	ok(mode_of(t, "old-suid") == 04755, "a file older than the start keeps its bit");
	ok(mode_of(out, "target") == 04755, "a symlink is not followed: its target keeps its bit");
	ok(mode_of(t, "sgid-dir") == 02775, "a setgid directory keeps its bit");
	ok(mode_of(t, "fifo") == 04644, "a FIFO is neither opened nor changed");
	if (root) {
		ok(!has_caps(t, "caps"), "a new file capability is removed");
		ok(has_caps(t, "old-caps"), "an older one is kept");
	} else {
		printf("ok %d # skip file capabilities need root\n", ++tap_n);
		printf("ok %d # skip file capabilities need root\n", ++tap_n);
	}
	if (mounts) {
		ok(mode_of(t, "mnt/suid") == 04755 && mode_of(out, "bound") == 04755 &&
			   w.mounts == 2,
		   "mount points beneath are not crossed: a directory's, a file's (%llu)",
		   (unsigned long long)w.mounts);
		snprintf(path, sizeof(path), "%s/file-mnt", t);
		umount2(path, MNT_DETACH);
		snprintf(path, sizeof(path), "%s/mnt", t);
		umount2(path, MNT_DETACH);
	} else {
		printf("ok %d # skip mount points need root\n", ++tap_n);
	}
	ok(walk(t, &since, &w) == 0 && w.cleared == 0, "a second walk finds nothing left");
}

/* Deeper than the fds the walk holds: parents are found again through "..". */
static void test_deep(const char *tmp)
{
	char t[512], path[8192];
	struct timespec since;
	struct hutch_setid_walk w;
	snprintf(t, sizeof(t), "%s/deep", tmp);
	mkdir(t, 0755);
	make(t, "old", 0644);
	start_after(t, "old", &since);
	mkdir(strcat(strcpy(path, t), "/b0"), 0755);
	make(path, "suid", 04755);
	size_t n = strlen(t);
	strcpy(path, t);
	for (int i = 0; i < DEEP; i++) {
		strcat(path, "/a");
		mkdir(path, 0755);
		make(path, "suid", 04755);
		if (i == 100) {
			mkdir(strcat(path, "/../sib"), 0755); /* a sibling read after the rest */
			make(path, "suid", 04755);
			path[strlen(path) - strlen("/../sib")] = '\0';
		}
	}
	for (int i = 1; i <= 5; i++) {
		snprintf(path + n, sizeof(path) - n, "/b%d", i);
		mkdir(path, 0755);
		make(path, "suid", 04755);
	}
	ok(walk(t, &since, &w) == 0 && !w.incomplete, "walk: %d directories deep", DEEP);
	ok(w.cleared == DEEP + 7 && w.dirs == DEEP + 8,
	   "every level's file cleared (%llu, %llu dirs)", (unsigned long long)w.cleared,
	   (unsigned long long)w.dirs);
}

/* Enough files for batches to go to worker threads. */
static void test_many(const char *tmp)
{
	char t[512], name[32];
	struct timespec since;
	struct hutch_setid_walk w;
	snprintf(t, sizeof(t), "%s/many", tmp);
	mkdir(t, 0755);
	make(t, "old", 0644);
	start_after(t, "old", &since);
	for (int i = 0; i < 6000; i++) {
		snprintf(name, sizeof(name), "file-with-a-longer-name-%d", i);
		make(t, name, i % 3 == 0 ? 04755 : 0644);
	}
	ok(walk(t, &since, &w) == 0 && w.files == 6001 && w.cleared == 2000,
	   "6000 files in batches: %llu of %llu cleared", (unsigned long long)w.cleared,
	   (unsigned long long)w.files);
}

static void test_file_and_nosuid(const char *tmp, bool mounts)
{
	char t[512];
	struct timespec since;
	struct hutch_setid_walk w;
	struct hutch_err err = { 0 };
	snprintf(t, sizeof(t), "%s/one", tmp);
	mkdir(t, 0755);
	make(t, "old", 04755);
	start_after(t, "old", &since);
	make(t, "new", 04755);
	int fd = openat(open(t, O_PATH | O_CLOEXEC), "new", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	ok(hutch_setid_clear_file(fd, &since, &w, &err) == 0 && w.cleared == 1 &&
		   mode_of(t, "new") == 0755,
	   "one file (a bind of a file): cleared");
	close(fd);
	fd = openat(open(t, O_PATH | O_CLOEXEC), "old", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	ok(hutch_setid_clear_file(fd, &since, &w, &err) == 0 && w.cleared == 0 &&
		   mode_of(t, "old") == 04755,
	   "one file older than the start: kept");
	close(fd);
	fd = open(t, O_PATH | O_CLOEXEC);
	ok(hutch_setid_clear_file(fd, &since, &w, &err) == -EINVAL, "a directory is no file: %s",
	   err.msg);
	close(fd);
	if (!mounts) {
		printf("ok %d # skip a nosuid mount needs root\n", ++tap_n);
		return;
	}
	snprintf(t, sizeof(t), "%s/nosuid", tmp);
	mkdir(t, 0755);
	mount("tmpfs", t, "tmpfs", MS_NOSUID, "mode=0755");
	hutch_setid_now(&since);
	make(t, "suid", 04755);
	ok(walk(t, &since, &w) == 0 && w.nosuid && w.files == 0 && mode_of(t, "suid") == 04755,
	   "a nosuid mount is not walked: its bits grant nothing");
	umount2(t, MNT_DETACH);
}

/* Device nodes made since the start go (whoever opens one gets the device), on a nosuid
 * mount too; an older one stays, and so does a 0:0 character node (an overlayfs whiteout). */
static bool there(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

static void test_devices(const char *tmp, bool mounts)
{
	char t[512], p[600];
	struct timespec since;
	struct hutch_setid_walk w;
	if (!mounts) {
		printf("ok %d # skip mknod and a nosuid mount need root\n", ++tap_n);
		return;
	}
	snprintf(t, sizeof(t), "%s/devices", tmp);
	mkdir(t, 0755);
	mount("tmpfs", t, "tmpfs", MS_NOSUID, "mode=0755");
	snprintf(p, sizeof(p), "%s/old", t);
	mknod(p, S_IFBLK | 0666, makedev(254, 0));
	start_after(t, "old", &since);
	snprintf(p, sizeof(p), "%s/disk", t);
	mknod(p, S_IFBLK | 0666, makedev(254, 0));
	snprintf(p, sizeof(p), "%s/sub", t);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sub/null", t);
	mknod(p, S_IFCHR | 0666, makedev(1, 3));
	snprintf(p, sizeof(p), "%s/whiteout", t);
	mknod(p, S_IFCHR, makedev(0, 0));
	ok(walk(t, &since, &w) == 0 && w.nosuid && w.devices == 2 && there(t, "old") &&
		   !there(t, "disk") && !there(t, "sub/null") && there(t, "whiteout"),
	   "new device nodes removed (%llu), on a nosuid mount too; an older one and a "
	   "whiteout kept",
	   (unsigned long long)w.devices);
	umount2(t, MNT_DETACH);
}

/* A kernel before 6.13 has no getxattrat: the capability is then found through /proc. Its
 * ENOSYS comes from a seccomp filter in a child. */
static void test_no_getxattrat(const char *tmp)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 464 /* getxattrat */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { ARRAY_SIZE(f), f };
	char t[512];
	int st = -1;
	if (!root) {
		printf("ok %d # skip file capabilities need root\n", ++tap_n);
		return;
	}
	snprintf(t, sizeof(t), "%s/old-kernel", tmp);
	mkdir(t, 0755);
	make(t, "old", 0644);
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec since;
		struct hutch_setid_walk w;
		start_after(t, "old", &since);
		make(t, "caps", 0755);
		set_caps(t, "caps");
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(2);
		_exit(walk(t, &since, &w) == 0 && w.cleared == 1 && !has_caps(t, "caps") ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "without getxattrat (before Linux 6.13), a capability is found and removed (%d)", st);
}

int main(void)
{
	char tmp[] = "/tmp/hutch-test-setid-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	chmod(tmp, 0755);
	root = geteuid() == 0;
	bool mounts = private_mounts();
	test_tree(tmp, mounts);
	test_deep(tmp);
	test_many(tmp);
	test_file_and_nosuid(tmp, mounts);
	test_no_getxattrat(tmp);
	test_devices(tmp, mounts);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	(void)!system(cmd);
	return tap_done();
}
