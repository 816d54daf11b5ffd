// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for bridge mode's pure parts: IPv4 and subnet parsing and math, and the lease
 * file (allocation order, release, exhaustion, reclaim of dead holders, concurrent leases from
 * forked processes) against a temporary directory. No root and no network are needed.
 */
#include "tap.h"
#include "net.h"

#include "ns.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

static uint32_t ip(const char *s)
{
	uint32_t a = 0;
	net_ipv4_parse(s, &a);
	return a;
}

static void test_addresses(void)
{
	char buf[NET_IPV4_LEN];
	uint32_t a;
	ok(net_ipv4_parse("10.89.0.7", &a) == 0 && a == 0x0a590007, "parse 10.89.0.7");
	net_ipv4_format(0xc0a80101, buf);
	ok(!strcmp(buf, "192.168.1.1"), "format 192.168.1.1");
	static const char *const bad[] = { "10.89.0",  "10.89.0.256", "1.2.3.4x",
					   " 1.2.3.4", "+1.2.3.4",    "",
					   "1..2.3" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ok(net_ipv4_parse(bad[i], &a) == -EINVAL, "refuses \"%s\"", bad[i]);

	struct hutch_err err = { 0 };
	struct net_subnet s;
	ok(net_subnet_parse("10.89.0.0/24", &s, &err) == 0 && s.net == 0x0a590000 && s.prefix == 24,
	   "subnet 10.89.0.0/24");
	ok(net_subnet_gateway(&s) == ip("10.89.0.1"), "gateway is the first host");
	ok(net_subnet_contains(&s, ip("10.89.0.254")) && !net_subnet_contains(&s, ip("10.89.1.1")),
	   "contains");
	ok(net_subnet_parse("fd00::/64", &s, &err) == -ENOTSUP && strstr(err.msg, "not supported"),
	   "IPv6 is not supported: %s", err.msg);
	ok(net_subnet_parse("10.89.0.1/24", &s, &err) == -EINVAL && strstr(err.msg, "host bits"),
	   "host bits refused: %s", err.msg);
	ok(net_subnet_parse("10.0.0.0/31", &s, &err) == -EINVAL, "prefix 31 refused");
	ok(net_subnet_parse("10.0.0.0/4", &s, &err) == -EINVAL, "prefix 4 refused");
	ok(net_subnet_parse("10.0.0.0", &s, &err) == -EINVAL, "missing prefix refused");
	ok(net_subnet_parse("10.0.0.0/24x", &s, &err) == -EINVAL, "junk prefix refused");
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

static int stale_calls;
static uint32_t stale_addr;

static int on_stale(const struct net_lease *l, void *arg, struct hutch_err *err)
{
	(void)err;
	stale_calls++;
	stale_addr = l->addr;
	return arg ? -EIO : 0; /* an error from the callback must not keep the lease */
}

static pid_t dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return p;
}

static void test_leases(int dfd)
{
	struct hutch_err err = { 0 };
	struct net_subnet s = { ip("10.89.0.0"), 24 };
	uint32_t a = 0, b = 0, c = 0;
	pid_t me = getpid();
	ok(net_ipam_lease(dfd, &s, me, NULL, NULL, &a, &err) == 0 && a == ip("10.89.0.2"),
	   "first lease is .2 (%s)", err.msg);
	ok(net_ipam_lease(dfd, &s, me, NULL, NULL, &b, &err) == 0 && b == ip("10.89.0.3"),
	   "second lease is .3");
	ok(net_ipam_release(dfd, a, &err) == 0, "release .2");
	ok(net_ipam_lease(dfd, &s, me, NULL, NULL, &c, &err) == 0 && c == a,
	   "a released address is leased again");
	ok(net_ipam_release(dfd, b, &err) == 0 && net_ipam_release(dfd, c, &err) == 0 &&
		   net_ipam_release(dfd, c, &err) == 0,
	   "release twice is fine");

	/* A dead holder, and a live pid whose start time does not match (pid reuse). */
	char text[128];
	snprintf(text, sizeof(text), "10.89.0.2 %d 1\n10.89.0.3 %d 1\ngarbage\n", (int)dead_pid(),
		 (int)me);
	ok(hutch_write_file_at(dfd, "leases", text, strlen(text), &err) == 0, "write stale leases");
	stale_calls = 0;
	ok(net_ipam_lease(dfd, &s, me, on_stale, NULL, &a, &err) == 0 && a == ip("10.89.0.2"),
	   "stale leases are reclaimed before allocating");
	ok(stale_calls == 2, "the stale callback ran for both (%d)", stale_calls);
	ok(net_ipam_reclaim(dfd, on_stale, NULL, &err) == 0, "a live lease is not reclaimed");
	snprintf(text, sizeof(text), "10.89.0.9 %d 5\n", (int)dead_pid());
	ok(hutch_write_file_at(dfd, "leases", text, strlen(text), &err) == 0, "write one stale");
	stale_calls = 0;
	ok(net_ipam_reclaim(dfd, on_stale, (void *)1, &err) == 1 && stale_calls == 1 &&
		   stale_addr == ip("10.89.0.9"),
	   "reclaim drops it even when the callback fails");

	struct net_subnet tiny = { ip("10.0.0.0"), 30 }; /* .1 gateway, .2 the only host */
	ok(net_ipam_lease(dfd, &tiny, me, NULL, NULL, &a, &err) == 0 && a == ip("10.0.0.2"),
	   "a /30 has one sandbox address");
	ok(net_ipam_lease(dfd, &tiny, me, NULL, NULL, &b, &err) == -EADDRNOTAVAIL, "exhaustion: %s",
	   err.msg);
}

/* Forked processes lease at once for one live holder: every address must differ. */
static void test_concurrent(int dfd)
{
	enum { N = 12 };
	struct net_subnet s = { ip("10.90.0.0"), 24 };
	int fds[2];
	if (pipe(fds) < 0)
		return;
	pid_t holder = getpid();
	for (int i = 0; i < N; i++)
		if (fork() == 0) {
			struct hutch_err err = { 0 };
			uint32_t a = 0;
			if (net_ipam_lease(dfd, &s, holder, NULL, NULL, &a, &err) < 0)
				a = 0;
			_exit(write(fds[1], &a, sizeof(a)) == sizeof(a) ? 0 : 1);
		}
	close(fds[1]);
	uint32_t got[N];
	int n = 0;
	while (n < N && read(fds[0], &got[n], sizeof(got[n])) == sizeof(got[n]))
		n++;
	close(fds[0]);
	while (wait(NULL) > 0)
		;
	bool distinct = n == N;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			distinct &= got[i] && got[i] != got[j];
	ok(distinct, "%d concurrent leases are all distinct", n);
}

int main(void)
{
	test_addresses();
	char tmp[] = "/tmp/hutch-test-net.XXXXXX";
	if (!mkdtemp(tmp)) {
		ok(false, "mkdtemp");
		return tap_done();
	}
	struct hutch_err err = { 0 };
	_cleanup_free_ char *root = hutch_xasprintf("%s/net", tmp);
	int dfd = net_ipam_open(root, "hutch0", &err);
	ok(dfd >= 0, "ipam dir opened (%s)", err.msg);
	struct stat st, ns;
	_cleanup_free_ char *sub = NULL;
	if (stat("/proc/self/ns/net", &ns) == 0)
		sub = hutch_xasprintf("%s/%llu/hutch0", root, (unsigned long long)ns.st_ino);
	ok(sub && stat(sub, &st) == 0 && S_ISDIR(st.st_mode),
	   "keyed by the network namespace's inode");
	ok(net_ipam_open(root, "../x", &err) < 0, "a bridge name cannot climb out");
	if (dfd >= 0) {
		test_leases(dfd);
		test_concurrent(dfd);
		close(dfd);
	}
	nftw(tmp, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
