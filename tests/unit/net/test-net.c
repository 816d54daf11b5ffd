// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for bridge mode's pure parts: IPv4 and subnet parsing and math, and the lease
 * file (allocation order, release, exhaustion, reclaim of dead holders, concurrent leases from
 * forked processes) against a temporary directory. No root and no network are needed.
 */
#include "tap.h"
#include "net.h"
#include "net-egress.h"

#include "ns.h"

#include <fcntl.h>
#include <netinet/in.h>
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
	ok(net_ipam_lease(dfd, &s, me, NULL, NULL, NULL, &a, &err) == 0 && a == ip("10.89.0.2"),
	   "first lease is .2 (%s)", err.msg);
	ok(net_ipam_lease(dfd, &s, me, NULL, NULL, NULL, &b, &err) == 0 && b == ip("10.89.0.3"),
	   "second lease is .3");
	ok(net_ipam_release(dfd, a, &err) == 0, "release .2");
	ok(net_ipam_lease(dfd, &s, me, NULL, NULL, NULL, &c, &err) == 0 && c == a,
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
	ok(net_ipam_lease(dfd, &s, me, on_stale, NULL, NULL, &a, &err) == 0 && a == ip("10.89.0.2"),
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
	ok(net_ipam_lease(dfd, &tiny, me, NULL, NULL, NULL, &a, &err) == 0 && a == ip("10.0.0.2"),
	   "a /30 has one sandbox address");
	ok(net_ipam_lease(dfd, &tiny, me, NULL, NULL, NULL, &b, &err) == -EADDRNOTAVAIL,
	   "exhaustion: %s", err.msg);
}

static uint32_t busy_addr;
static bool busy_one(uint32_t addr)
{
	return addr == busy_addr;
}
static bool busy_all(uint32_t addr)
{
	(void)addr;
	return true;
}

/* A free address whose last veth lingers is passed over while another is free. */
static void test_lease_busy(int dfd)
{
	struct hutch_err err = { 0 };
	struct net_subnet s = { ip("10.89.1.0"), 24 }, tiny = { ip("10.0.1.0"), 30 };
	uint32_t a = 0, b = 0;
	busy_addr = ip("10.89.1.2");
	ok(net_ipam_lease(dfd, &s, getpid(), NULL, NULL, busy_one, &a, &err) == 0 &&
		   a == ip("10.89.1.3"),
	   "a busy free address is passed over (%s)", err.msg);
	ok(net_ipam_lease(dfd, &tiny, getpid(), NULL, NULL, busy_all, &b, &err) == 0 &&
		   b == ip("10.0.1.2"),
	   "when every free address is busy, the lowest is leased (%s)", err.msg);
	ok(net_ipam_release(dfd, a, &err) == 0 && net_ipam_release(dfd, b, &err) == 0,
	   "release both");
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
			if (net_ipam_lease(dfd, &s, holder, NULL, NULL, NULL, &a, &err) < 0)
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

static void test_cidr(void)
{
	struct hutch_err err = { 0 };
	struct net_cidr c;
	ok(net_cidr_parse("192.0.2.0/24", &c, &err) == 0 && c.addr == 0xc0000200 &&
		   c.prefix == 24 && c.port_lo == 0,
	   "a CIDR without a port");
	ok(net_cidr_parse("198.51.100.1:8080", &c, &err) == 0 && c.prefix == 32 &&
		   c.port_lo == 8080 && c.port_hi == 8080,
	   "an address with a port is a /32");
	ok(net_cidr_parse("10.0.0.0/8:80-81", &c, &err) == 0 && c.port_lo == 80 && c.port_hi == 81,
	   "a port range");
	ok(net_cidr_parse("0.0.0.0/0", &c, &err) == 0 && c.prefix == 0, "everything");
	static const char *const bad[] = { "10.0.0.1/8",    "10.0.0.0/33",
					   "10.0.0.0/8:0",  "10.0.0.0/8:81-80",
					   "10.0.0.0/8:",   "10.0.0.0/",
					   "10.0.0.0/+8",   "1.2.3",
					   "1.2.3.4:65536", "x" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ok(net_cidr_parse(bad[i], &c, &err) == -EINVAL, "refuses %s (%s)", bad[i], err.msg);
	ok(net_cidr_parse("fd00::/64", &c, &err) == -ENOTSUP, "IPv6: not supported");
}

/* What `nft list table inet hutch` printed with two sandboxes in it (trimmed): an older
 * hutch's layout, whose refused destinations were in one shared set. */
static const char listing[] =
	"table inet hutch {\n"
	"\tset sandboxes {\n\t\ttype ifname\n\t\telements = { \"hv0a590002\", \"hv0a590003\" "
	"}\n\t}\n"
	"\tset addrs {\n\t\ttype ipv4_addr\n\t\telements = { 10.89.0.2, 10.89.0.3 }\n\t}\n"
	"\tset allow_net {\n\t\ttype ifname . ipv4_addr\n\t\tflags interval\n"
	"\t\telements = { \"hv0a590002\" . 192.0.2.0/24,\n\t\t\t     \"hv0a590003\" . 192.0.2.0/24 "
	"}\n\t}\n"
	"\tset dns_net {\n\t\ttype ifname . ipv4_addr\n\t\tflags timeout\n"
	"\t\telements = { \"hv0a590002\" . 192.0.2.10 timeout 1m expires 59s984ms }\n\t}\n"
	"\tset refused {\n\t\ttype ifname . ipv4_addr . inet_proto . inet_service\n"
	"\t\telements = { \"hv0a590002\" . 10.250.0.5 . tcp . 80 counter packets 1 bytes 60 "
	"expires 59m51s864ms,\n\t\t\t     \"hv0a590003\" . 10.250.0.9 . tcp . 80 counter packets 9 "
	"bytes 60,\n\t\t\t     \"hv0a590002\" . 192.0.2.20 . udp . 53 counter packets 3 bytes 60 "
	"}\n\t}\n"
	"\tmap ok_ctr {\n\t\ttype ifname : counter\n"
	"\t\telements = { \"hv0a590002\" : \"ok_hv0a590002\", \"hv0a590003\" : \"ok_hv0a590003\" "
	"}\n\t}\n"
	"\tset special {\n\t\ttype ipv4_addr\n\t\telements = { 10.0.0.0/8 }\n\t}\n"
	"\tcounter ok_hv0a590002 {\n\t\tpackets 4 bytes 240\n\t}\n"
	"\tcounter no_hv0a590002 {\n\t\tpackets 4 bytes 180\n\t}\n"
	"\tcounter ok_hv0a590003 {\n\t\tpackets 7 bytes 180\n\t}\n"
	"\tchain egress {\n\t\tmeta l4proto { tcp, udp } iifname . ip daddr . th dport @allow_port "
	"goto allowed\n\t}\n"
	"}\n";

static void test_del_script(void)
{
	struct net_egress_stats st;
	_cleanup_free_ char *s = net_nft_del_script(listing, "hv0a590002", &st);
	ok(strstr(s, "delete element inet hutch sandboxes { \"hv0a590002\" }\n") != NULL,
	   "its veth, not the other's");
	ok(strstr(s, "delete element inet hutch addrs { 10.89.0.2 }\n") != NULL, "its address");
	ok(strstr(s, "allow_net { \"hv0a590002\" . 192.0.2.0/24 }\n") != NULL, "an interval");
	ok(strstr(s, "dns_net { \"hv0a590002\" . 192.0.2.10 }\n") != NULL, "timeout dropped");
	ok(strstr(s, "refused { \"hv0a590002\" . 10.250.0.5 . tcp . 80, \"hv0a590002\" . "
		     "192.0.2.20 . udp . 53 }\n") != NULL,
	   "counters dropped from keys");
	ok(strstr(s, "ok_ctr { \"hv0a590002\" }\n") != NULL, "a map's key alone");
	ok(!strstr(s, "hv0a590003") && !strstr(s, "10.0.0.0/8") && !strstr(s, "10.89.0.3"),
	   "nothing of the other sandbox's, nor of the shared sets");
	const char *e = strstr(s, "ok_ctr {"),
		   *c = strstr(s, "delete counter inet hutch ok_hv0a590002");
	ok(e && c && e < c && strstr(s, "delete counter inet hutch no_hv0a590002"),
	   "its counters, after the map elements that name them");
	ok(st.allowed == 4 && st.refused == 4, "counters read (%llu, %llu)",
	   (unsigned long long)st.allowed, (unsigned long long)st.refused);
	ok(st.n_dest == 2 && st.dest[0].addr == 0xc0000214 && st.dest[0].proto == IPPROTO_UDP &&
		   st.dest[0].port == 53 && st.dest[0].packets == 3 &&
		   st.dest[1].addr == 0x0afa0005,
	   "refused destinations, most attempted first");
	_cleanup_free_ char *none = net_nft_del_script(listing, "hv0a590009", NULL);
	ok(!*none, "a sandbox with nothing: an empty script");
	_cleanup_free_ char *empty = net_nft_del_script("", "hv0a590002", &st);
	ok(!*empty && st.n_dest == 0, "an empty listing");
}

/* This layout's own per-sandbox chains and set (trimmed). */
static const char listing2[] =
	"table inet hutch {\n"
	"\tcounter ok_hv0a590002 {\n\t\tpackets 2 bytes 120\n\t}\n"
	"\tcounter no_hv0a590002 {\n\t\tpackets 9 bytes 540\n\t}\n"
	"\tset sandboxes {\n\t\ttype ifname\n\t\telements = { \"hv0a590002\", \"hv0a590003\" "
	"}\n\t}\n"
	"\tmap limits {\n\t\ttype ifname : verdict\n\t\telements = { \"hv0a590002\" : jump "
	"lim_hv0a590002, \"hv0a590003\" : jump lim_hv0a590003 }\n\t}\n"
	"\tmap record {\n\t\ttype ifname : verdict\n\t\telements = { \"hv0a590002\" : jump "
	"rf_hv0a590002 }\n\t}\n"
	"\tset rf_hv0a590002 {\n\t\ttype ipv4_addr . inet_proto . inet_service\n\t\tsize 256\n"
	"\t\tflags dynamic\n\t\tcounter\n\t\telements = { 10.250.0.5 . tcp . 80 counter packets 2 "
	"bytes 120,\n\t\t\t     10.89.0.1 . udp . 5353 counter packets 7 bytes 420 }\n\t}\n"
	"\tset rf_hv0a590003 {\n\t\ttype ipv4_addr . inet_proto . inet_service\n\t\tsize 256\n"
	"\t\tflags dynamic\n\t\tcounter\n\t\telements = { 10.250.0.9 . tcp . 80 counter packets 50 "
	"bytes 120 }\n\t}\n"
	"\tchain lim_hv0a590002 {\n\t\tct count over 200 counter packets 17 bytes 1020 goto "
	"capped\n\t}\n"
	"\tchain rf_hv0a590002 {\n\t\tadd @rf_hv0a590002 { ip daddr . meta l4proto . th dport "
	"}\n\t}\n"
	"\tchain lim_hv0a590003 {\n\t\tct count over 1024 counter packets 0 bytes 0 goto "
	"capped\n\t}\n"
	"}\n";

static void test_del_own(void)
{
	struct net_egress_stats st;
	_cleanup_free_ char *s = net_nft_del_script(listing2, "hv0a590002", &st);
	ok(strstr(s, "delete element inet hutch limits { \"hv0a590002\" }\n") &&
		   strstr(s, "delete element inet hutch record { \"hv0a590002\" }\n"),
	   "its verdict map elements");
	const char *map = strstr(s, "record {"), *lim = strstr(s, "delete chain inet hutch lim_"),
		   *rf = strstr(s, "delete chain inet hutch rf_hv0a590002\n"),
		   *set = strstr(s, "delete set inet hutch rf_hv0a590002\n"),
		   *ctr = strstr(s, "delete counter inet hutch ok_hv0a590002\n");
	ok(map && lim && rf && set && ctr && map < lim && map < rf && rf < set && set < ctr,
	   "maps, then its chains, then its set, then its counters");
	ok(!strstr(s, "hv0a590003"), "nothing of the other sandbox's");
	ok(st.capped == 17 && st.allowed == 2 && st.refused == 9, "counters: capped %llu",
	   (unsigned long long)st.capped);
	ok(st.n_dest == 2 && st.dest[0].addr == 0x0a590001 && st.dest[0].proto == IPPROTO_UDP &&
		   st.dest[0].port == 5353 && st.dest[0].packets == 7 &&
		   st.dest[1].addr == 0x0afa0005 && st.dest[1].packets == 2,
	   "refused destinations from its own set, most attempted first");
}

/* Both tables, as net_nft_sandbox_del lists them: set "sources" is in each. */
static const char listing3[] =
	"table inet hutch {\n"
	"\tset sources {\n\t\ttype ifname . ipv4_addr\n\t\telements = { \"hv0a590002\" . "
	"10.89.0.2, \"hv0a590003\" . 10.89.0.3 }\n\t}\n"
	"}\n"
	"table arp hutch {\n"
	"\tset sandboxes {\n\t\ttype ifname\n\t\telements = { \"hv0a590002\", \"hv0a590003\" "
	"}\n\t}\n"
	"\tset sources {\n\t\ttype ifname . ipv4_addr\n\t\telements = { \"hv0a590002\" . "
	"10.89.0.2, \"hv0a590003\" . 10.89.0.3 }\n\t}\n"
	"\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n"
	"\t\tiifname @sandboxes iifname . arp saddr ip != @sources drop\n\t}\n"
	"}\n";

static void test_del_arp(void)
{
	_cleanup_free_ char *s = net_nft_del_script(listing3, "hv0a590002", NULL);
	ok(strstr(s, "delete element inet hutch sources { \"hv0a590002\" . 10.89.0.2 }\n") &&
		   strstr(s, "delete element arp hutch sources { \"hv0a590002\" . 10.89.0.2 }\n") &&
		   strstr(s, "delete element arp hutch sandboxes { \"hv0a590002\" }\n") &&
		   !strstr(s, "hv0a590003"),
	   "its element of each table's sources, in that table");
}

static void test_answer_judge(void)
{
	struct net_cidr allow[] = {
		{ .addr = 0xa9fea9fe, .prefix = 32, .port_lo = 80, .port_hi = 80 },
		{ .addr = 0x0afa0000, .prefix = 16 }
	};
	struct net_cidr deny[] = { { .addr = 0xcb007100, .prefix = 24 },
				   { .addr = 0x0afa0500, .prefix = 24 } };
	struct net_egress eg = { .allow = allow, .n_allow = 2, .deny = deny, .n_deny = 2 };
	struct net_subnet sn = { 0xc6120000, 24 }; /* 198.18.0.0/24: special only as a subnet */
	uint32_t host[] = { 0xc6336401 };
	struct net_answer_policy p = { &eg, &sn, host, 1 };
	static const struct {
		uint32_t a;
		enum net_answer want;
		const char *what;
	} cases[] = {
		{ 0xc000020a, NET_ANSWER_OPEN, "a public address" },
		{ 0xc6336401, NET_ANSWER_DROP, "the host's own" },
		{ 0xc6120001, NET_ANSWER_DROP, "the sandboxes' subnet (its gateway)" },
		{ 0x7f000001, NET_ANSWER_DROP, "loopback" },
		{ 0xa9fe0001, NET_ANSWER_DROP, "link-local" },
		{ 0xa9fea9fe, NET_ANSWER_KEEP, "the metadata address, allowed" },
		{ 0xc0a80101, NET_ANSWER_DROP, "192.168/16" },
		{ 0xac1f0001, NET_ANSWER_DROP, "172.16/12" },
		{ 0x64400001, NET_ANSWER_DROP, "100.64/10" },
		{ 0xe0000001, NET_ANSWER_DROP, "multicast" },
		{ 0xffffffff, NET_ANSWER_DROP, "broadcast" },
		{ 0x00000000, NET_ANSWER_DROP, "0.0.0.0" },
		{ 0x0afa0001, NET_ANSWER_KEEP, "a private range, allowed" },
		{ 0x0afa0505, NET_ANSWER_DROP, "in an allowed range, but denied" },
		{ 0xcb007107, NET_ANSWER_DROP, "public, denied" },
		{ 0x0b000001, NET_ANSWER_OPEN, "11.0.0.1: public" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		ok(net_answer_judge(&p, cases[i].a) == cases[i].want, "answer: %s", cases[i].what);
	uint32_t mine[16];
	int n = net_host_addrs(mine, 16);
	bool lo = false;
	for (int i = 0; i < n; i++)
		lo |= mine[i] == 0x7f000001;
	ok(n >= 0, "the host's addresses: %d%s", n, lo ? ", 127.0.0.1 among them" : "");
}

int main(void)
{
	test_addresses();
	test_cidr();
	test_del_script();
	test_del_own();
	test_del_arp();
	test_answer_judge();
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
		test_lease_busy(dfd);
		test_concurrent(dfd);
		close(dfd);
	}
	nftw(tmp, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
