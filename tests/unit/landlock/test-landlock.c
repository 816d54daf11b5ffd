// SPDX-License-Identifier: Apache-2.0
/*
 * landlock/ll-ruleset.c unit tests: the ABI probe and its test knob, the rights of each ABI,
 * the fallback to an older ABI, and real restrictions in forked children (Landlock needs no
 * root: no_new_privs is enough). Children report the first failed check as their exit status.
 */
#include "ll.h"
#include "tap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char tmpdir[] = "/tmp/test-landlock.XXXXXX";
static char ro[256], rw[256], missing[256];

static void test_rights(void)
{
	ok(ll_fs_rights(0) == 0, "ABI 0 handles nothing");
	ok(ll_fs_rights(1) == (1ULL << 13) - 1, "ABI 1: execute to make_sym");
	ok(ll_fs_rights(2) == (1ULL << 14) - 1, "ABI 2 adds refer");
	ok(ll_fs_rights(4) == (1ULL << 15) - 1, "ABI 3 adds truncate, 4 no file right");
	ok(ll_fs_rights(8) == LL_FS_ALL - LL_FS_RESOLVE_UNIX, "ABI 5 adds ioctl_dev, up to 8");
	ok(ll_fs_rights(9) == LL_FS_ALL, "ABI 9 adds resolve_unix");
	const char *names[8];
	size_t n = ll_names(LL_FS_READ, 'f', names, ARRAY_SIZE(names));
	ok(n == 3 && !strcmp(names[0], "execute") && !strcmp(names[2], "read_dir") && !names[3],
	   "names of the read rights");
	n = ll_names(LL_NET_CONNECT_TCP, 'n', names, ARRAY_SIZE(names));
	ok(n == 1 && !strcmp(names[0], "connect_tcp"), "names of the TCP rights");
	n = ll_names(LL_FS_RESOLVE_UNIX, 'f', names, ARRAY_SIZE(names));
	ok(n == 1 && !strcmp(names[0], "resolve_unix"), "the name of ABI 9's right");
	n = ll_names(LL_FS_ALL, 'f', names, 3);
	ok(n == 2 && !names[2], "names stop at max");
}

static void test_probe(int kernel)
{
	int k = -1;
	setenv("HUTCH_LANDLOCK_ABI_MAX", "2", 1);
	ok(ll_abi(&k) == (kernel < 2 ? kernel : 2) && k == kernel,
	   "HUTCH_LANDLOCK_ABI_MAX caps the ABI, not the kernel's");
	setenv("HUTCH_LANDLOCK_ABI_MAX", "99", 1);
	ok(ll_abi(NULL) == kernel, "a cap above the kernel's changes nothing");
	unsetenv("HUTCH_LANDLOCK_ABI_MAX");
}

static void test_create(int kernel)
{
	struct hutch_err err = { 0 };
	struct ll_ruleset ll;
	struct ll_rule rules[] = { { ro, LL_FS_READ }, { missing, LL_FS_ALL } };
	int fd = ll_create(LL_ABI_MAX, rules, 2, true, true, &ll, &err);
	ok(fd >= 0 && ll.abi == kernel && ll.n_rules == 1 && ll.n_skipped == 1,
	   "ruleset for the kernel's ABI; a missing path is skipped (%s)", err.msg);
	ok(ll.handled_fs == ll_fs_rights(kernel) && (kernel < 4) == (ll.handled_net == 0) &&
		   (kernel < 6) == (ll.scoped == 0),
	   "handles every right of the ABI");
	close(fd);
	setenv("HUTCH_LANDLOCK_ABI_MAX", "2", 1);
	fd = ll_create(LL_ABI_MAX, rules, 1, true, true, &ll, &err);
	ok(fd >= 0 && ll.abi == 2 && !(ll.handled_fs & LL_FS_TRUNCATE) && !ll.handled_net &&
		   !ll.scoped,
	   "simulated ABI 2: no truncate, TCP or scopes");
	close(fd);
	setenv("HUTCH_LANDLOCK_ABI_MAX", "0", 1);
	ok(ll_create(1, rules, 1, false, false, &ll, &err) == -EOPNOTSUPP,
	   "ABI capped to 0: not supported (%s)", err.msg);
	unsetenv("HUTCH_LANDLOCK_ABI_MAX");
}

static int try_open(const char *dir, const char *name, int flags)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, flags | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int tcp_listen_loopback(void)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0)
		return -1;
	return l;
}

static int tcp_connect(int listener)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	if (getsockname(listener, (struct sockaddr *)&a, &len) < 0)
		return -999;
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ? -errno : 0;
	close(c);
	return r;
}

/* In a child: restrict to ro (read) and rw (all), then check each kind of access. */
static int restricted_child(const char *abi_max)
{
	struct hutch_err err = { 0 };
	struct ll_ruleset ll;
	if (abi_max)
		setenv("HUTCH_LANDLOCK_ABI_MAX", abi_max, 1);
	/* The listener is made before: binding it afterwards is itself denied. */
	struct ll_rule rules[] = { { ro, LL_FS_READ }, { rw, LL_FS_ALL } };
	int listener = tcp_listen_loopback();
	int fd = ll_create(LL_ABI_MAX, rules, 2, true, true, &ll, &err);
	if (listener < 0 || fd < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 1;
	if (ll_restrict(fd, &err) < 0)
		return 2;
	if (try_open(ro, "f", O_RDONLY) != 0)
		return 3;
	if (try_open(ro, "new", O_WRONLY | O_CREAT) != -EACCES)
		return 4;
	if (try_open(ro, "f", O_WRONLY) != -EACCES)
		return 5;
	if (try_open(rw, "new", O_WRONLY | O_CREAT) != 0)
		return 6;
	if (try_open("/etc", "hostname", O_RDONLY) != -EACCES)
		return 7;
	char path[512];
	snprintf(path, sizeof(path), "%s/d", ro);
	if (mkdir(path, 0700) == 0 || errno != EACCES)
		return 8;
	/* Truncation is its own right from ABI 3: granted in rw, never in ro. */
	if (try_open(rw, "new", O_WRONLY | O_TRUNC) != 0)
		return 9;
	int tcp = tcp_connect(listener);
	if (ll.handled_net ? tcp != -EACCES : tcp != 0)
		return 10 + (tcp == -999);
	return 0;
}

static void test_restrict(const char *abi_max, const char *what)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(restricted_child(abi_max));
	int st = -1;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s (child status %d)", what,
	   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(void)
{
	int kernel = 0;
	ll_abi(&kernel);
	test_rights();
	if (kernel < 1) {
		printf("ok 9 - # SKIP Landlock is not available on this kernel\n");
		printf("1..9\n");
		return 0;
	}
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(ro, sizeof(ro), "%s/ro", tmpdir);
	snprintf(rw, sizeof(rw), "%s/rw", tmpdir);
	snprintf(missing, sizeof(missing), "%s/missing", tmpdir);
	mkdir(ro, 0700);
	mkdir(rw, 0700);
	char f[300];
	snprintf(f, sizeof(f), "%s/f", ro);
	close(open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	test_probe(kernel);
	test_create(kernel);
	test_restrict(NULL, "restricted: reads where allowed, writes only in rw, TCP denied");
	test_restrict("2", "restricted at a simulated ABI 2: the same file rules, TCP open");
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	ok(system(cmd) == 0, "temp dir removed");
	return tap_done();
}
