// SPDX-License-Identifier: Apache-2.0
/*
 * IPv4 address math and the lease file of bridge mode. Leases live in one small text file per
 * bridge and per host network namespace ("ADDR PID START" lines), rewritten atomically while
 * an flock on a separate lock file is held, so concurrent sandboxes never get the same address
 * and leases of dead holders (a SIGKILLed hutch) are reclaimed by the next caller.
 */
#include "net-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#define LEASES "leases"
#define MAX_LEASES 65536

int net_ipv4_parse(const char *s, uint32_t *out)
{
	unsigned a[4];
	char tail;
	if (!s || sscanf(s, "%3u.%3u.%3u.%3u%c", &a[0], &a[1], &a[2], &a[3], &tail) != 4)
		return -EINVAL;
	for (size_t i = 0; i < 4; i++)
		if (a[i] > 255)
			return -EINVAL;
	for (const char *p = s; *p; p++) /* sscanf takes "+1" and " 1": refuse them */
		if ((*p < '0' || *p > '9') && *p != '.')
			return -EINVAL;
	*out = a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
	return 0;
}

void net_ipv4_format(uint32_t addr, char buf[NET_IPV4_LEN])
{
	snprintf(buf, NET_IPV4_LEN, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 255,
		 (addr >> 8) & 255, addr & 255);
}

static uint32_t mask_of(unsigned prefix)
{
	return prefix ? ~0U << (32 - prefix) : 0;
}

int net_subnet_parse(const char *s, struct net_subnet *out, struct hutch_err *err)
{
	if (strchr(s, ':'))
		return hutch_fail(err, ENOTSUP, "subnet %s: IPv6 is not supported", s);
	char addr[NET_IPV4_LEN + 1];
	const char *slash = strchr(s, '/');
	uint64_t prefix;
	if (!slash || (size_t)(slash - s) >= sizeof(addr) ||
	    hutch_parse_u64(slash + 1, &prefix) < 0)
		return hutch_fail(err, EINVAL, "subnet %s: expected A.B.C.D/PREFIX", s);
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	uint32_t net;
	if (net_ipv4_parse(addr, &net) < 0)
		return hutch_fail(err, EINVAL, "subnet %s: expected A.B.C.D/PREFIX", s);
	if (prefix < 8 || prefix > 30)
		return hutch_fail(err, EINVAL, "subnet %s: the prefix must be 8 to 30", s);
	if (net & ~mask_of((unsigned)prefix))
		return hutch_fail(err, EINVAL, "subnet %s: host bits are set", s);
	*out = (struct net_subnet){ net, (unsigned)prefix };
	return 0;
}

static int parse_port(const char *s, uint16_t *out)
{
	uint64_t v;
	if (hutch_parse_u64(s, &v) < 0 || v == 0 || v > 65535)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

/* ":PORT" or ":LO-HI" (1-65535, LO <= HI); "" for every port. */
static int parse_ports(const char *s, struct net_cidr *c)
{
	if (!*s)
		return 0;
	_cleanup_free_ char *p = hutch_xstrdup(s + 1);
	char *dash = strchr(p, '-');
	if (dash)
		*dash = '\0';
	if (*s != ':' || parse_port(p, &c->port_lo) < 0)
		return -EINVAL;
	c->port_hi = c->port_lo;
	if (dash && (parse_port(dash + 1, &c->port_hi) < 0 || c->port_hi < c->port_lo))
		return -EINVAL;
	return 0;
}

int net_cidr_parse(const char *s, struct net_cidr *out, struct hutch_err *err)
{
	if (strchr(s, '[') || strchr(s, ':') != strrchr(s, ':'))
		return hutch_fail(err, ENOTSUP, "%s: IPv6 is not supported", s);
	struct net_cidr c = { .prefix = 32 };
	size_t alen = strcspn(s, "/:");
	char addr[NET_IPV4_LEN + 1];
	if (alen >= sizeof(addr))
		return hutch_fail(err, EINVAL, "%s: expected A.B.C.D[/N][:PORT[-PORT]]", s);
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	const char *rest = s + alen;
	if (*rest == '/') {
		char *end;
		errno = 0;
		unsigned long n = strtoul(rest + 1, &end, 10);
		if (end == rest + 1 || n > 32 || errno || !strchr(":", *end) || rest[1] == '+')
			return hutch_fail(err, EINVAL, "%s: expected A.B.C.D[/N][:PORT[-PORT]]", s);
		c.prefix = (unsigned)n;
		rest = end;
	}
	if (net_ipv4_parse(addr, &c.addr) < 0 || parse_ports(rest, &c) < 0)
		return hutch_fail(err, EINVAL, "%s: expected A.B.C.D[/N][:PORT[-PORT]]", s);
	if (c.prefix < 32 && (c.addr & ~mask_of(c.prefix)))
		return hutch_fail(err, EINVAL, "%s: host bits are set", s);
	*out = c;
	return 0;
}

uint32_t net_subnet_gateway(const struct net_subnet *s)
{
	return s->net + 1;
}

bool net_subnet_contains(const struct net_subnet *s, uint32_t addr)
{
	return (addr & mask_of(s->prefix)) == s->net;
}

int net_ipam_open(const char *root, const char *bridge, struct hutch_err *err)
{
	struct stat st;
	if (stat("/proc/self/ns/net", &st) < 0)
		return hutch_fail_errno(err, errno, "ipam: /proc/self/ns/net");
	if (!*bridge || strchr(bridge, '/') || bridge[0] == '.')
		return hutch_fail(err, EINVAL, "ipam: bad bridge name %s", bridge);
	if (mkdir(root, 0700) < 0 && errno != EEXIST)
		return hutch_fail_errno(err, errno, "ipam: mkdir %s", root);
	_cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return hutch_fail_errno(err, errno, "ipam: %s", root);
	_cleanup_free_ char *sub =
		hutch_xasprintf("%llu/%s", (unsigned long long)st.st_ino, bridge);
	int fd = hutch_mkdir_in_root(rootfd, sub, 0700, err);
	if (fd < 0)
		return hutch_err_prefix(err, "ipam: %s/%s: ", root, sub);
	/* hutch_mkdir_in_root gives O_PATH; flock and openat need a real directory fd. */
	char buf[HUTCH_FD_PATH_MAX];
	int dfd = open(hutch_fd_path(fd, buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int saved = errno;
	close(fd);
	if (dfd < 0)
		return hutch_fail_errno(err, saved, "ipam: open %s/%s", root, sub);
	return dfd;
}

struct leases {
	struct net_lease *v;
	size_t n;
};

static void leases_free(struct leases *l)
{
	free(l->v);
}

/* Malformed lines are dropped: the file is ours, and a torn one cannot happen (rename). */
static int load(int dirfd, struct leases *out, struct hutch_err *err)
{
	_cleanup_free_ char *text = NULL;
	int r = hutch_read_file_at(dirfd, LEASES, 4 << 20, &text, NULL, err);
	if (r == -ENOENT) {
		hutch_err_clear(err);
		return 0;
	}
	if (r < 0)
		return hutch_err_prefix(err, "ipam: ");
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char addr[32];
		int pid;
		unsigned long long start;
		struct net_lease e;
		if (sscanf(l, "%31s %d %llu", addr, &pid, &start) != 3 ||
		    net_ipv4_parse(addr, &e.addr) < 0 || pid <= 0 || out->n >= MAX_LEASES)
			continue;
		e.pid = pid;
		e.start = start;
		out->v = hutch_xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		out->v[out->n++] = e;
	}
	return 0;
}

static int save(int dirfd, const struct leases *l, struct hutch_err *err)
{
	_cleanup_free_ char *buf = hutch_xmalloc(l->n * 48 + 1);
	size_t len = 0;
	for (size_t i = 0; i < l->n; i++) {
		char a[NET_IPV4_LEN];
		net_ipv4_format(l->v[i].addr, a);
		len += (size_t)sprintf(buf + len, "%s %d %llu\n", a, (int)l->v[i].pid,
				       (unsigned long long)l->v[i].start);
	}
	int r = hutch_write_atomic_at(dirfd, LEASES, buf, len, 0600, err);
	return r < 0 ? hutch_err_prefix(err, "ipam: ") : 0;
}

static bool holder_alive(const struct net_lease *l)
{
	uint64_t start;
	char state = 0;
	if (hutch_proc_stat(l->pid, &start, &state) < 0)
		return false;
	return start == l->start && state != 'Z' && state != 'X';
}

/* Drops dead holders' leases, calling stale() for each first; returns how many went. */
static int drop_stale(struct leases *l, net_lease_stale_fn stale, void *arg)
{
	size_t kept = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (holder_alive(&l->v[i])) {
			l->v[kept++] = l->v[i];
			continue;
		}
		struct hutch_err e = { 0 };
		if (stale)
			stale(&l->v[i], arg, &e);
	}
	int dropped = (int)(l->n - kept);
	l->n = kept;
	return dropped;
}

static int lock_dir(int dirfd, struct hutch_err *err)
{
	int fd = openat(dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "ipam: lock file");
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int r = hutch_fail_errno(err, errno, "ipam: flock");
			close(fd);
			return r;
		}
	}
	return fd;
}

static bool taken(const struct leases *l, uint32_t addr)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].addr == addr)
			return true;
	return false;
}

/* The lowest free address that is not busy, else the lowest free one; broadcast when none is
 * free. A sandbox run right after another would otherwise get its address while the kernel
 * still removes the last one's veth (its network namespace goes asynchronously): creating
 * the pair then fails, and deleting the old one first waits ~20 ms for the kernel. */
static uint32_t first_free(const struct leases *l, const struct net_subnet *s,
			   net_addr_busy_fn busy)
{
	uint32_t broadcast = s->net | ~mask_of(s->prefix), first = broadcast;
	for (uint32_t a = net_subnet_gateway(s) + 1; a < broadcast; a++) {
		if (taken(l, a))
			continue;
		if (!busy || !busy(a))
			return a;
		if (first == broadcast)
			first = a;
	}
	return first;
}

int net_ipam_lease(int dirfd, const struct net_subnet *s, pid_t holder, net_lease_stale_fn stale,
		   void *arg, net_addr_busy_fn busy, uint32_t *addr, struct hutch_err *err)
{
	struct net_lease me = { .pid = holder };
	int r = hutch_proc_stat(holder, &me.start, NULL);
	if (r < 0)
		return hutch_fail_errno(err, r, "ipam: /proc/%d/stat", (int)holder);
	_cleanup_close_ int lock = lock_dir(dirfd, err);
	if (lock < 0)
		return lock;
	_cleanup_(leases_free) struct leases l = { 0 };
	TRY(load(dirfd, &l, err));
	int dropped = drop_stale(&l, stale, arg);
	uint32_t broadcast = s->net | ~mask_of(s->prefix);
	me.addr = first_free(&l, s, busy);
	if (me.addr >= broadcast) {
		if (dropped)
			save(dirfd, &l, err);
		char a[NET_IPV4_LEN];
		net_ipv4_format(s->net, a);
		return hutch_fail(err, EADDRNOTAVAIL, "ipam: no free address left in %s/%u", a,
				  s->prefix);
	}
	l.v = hutch_xrealloc(l.v, (l.n + 1) * sizeof(*l.v));
	l.v[l.n++] = me;
	TRY(save(dirfd, &l, err));
	*addr = me.addr;
	return 0;
}

int net_ipam_release(int dirfd, uint32_t addr, struct hutch_err *err)
{
	_cleanup_close_ int lock = lock_dir(dirfd, err);
	if (lock < 0)
		return lock;
	_cleanup_(leases_free) struct leases l = { 0 };
	TRY(load(dirfd, &l, err));
	size_t kept = 0;
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].addr != addr)
			l.v[kept++] = l.v[i];
	if (kept == l.n)
		return 0;
	l.n = kept;
	return save(dirfd, &l, err);
}

int net_ipam_transfer(int dirfd, uint32_t addr, pid_t from, pid_t to, struct hutch_err *err)
{
	struct net_lease me = { .addr = addr, .pid = to };
	int r = hutch_proc_stat(to, &me.start, NULL);
	if (r < 0)
		return hutch_fail_errno(err, r, "ipam: /proc/%d/stat", (int)to);
	_cleanup_close_ int lock = lock_dir(dirfd, err);
	if (lock < 0)
		return lock;
	_cleanup_(leases_free) struct leases l = { 0 };
	TRY(load(dirfd, &l, err));
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].addr == addr && l.v[i].pid == from) {
			l.v[i] = me;
			return save(dirfd, &l, err);
		}
	char a[NET_IPV4_LEN];
	net_ipv4_format(addr, a);
	return hutch_fail(err, ENOENT, "ipam: no lease of %s held by %d", a, (int)from);
}

int net_ipam_reclaim(int dirfd, net_lease_stale_fn stale, void *arg, struct hutch_err *err)
{
	_cleanup_close_ int lock = lock_dir(dirfd, err);
	if (lock < 0)
		return lock;
	_cleanup_(leases_free) struct leases l = { 0 };
	TRY(load(dirfd, &l, err));
	int dropped = drop_stale(&l, stale, arg);
	if (dropped)
		TRY(save(dirfd, &l, err));
	return dropped;
}
