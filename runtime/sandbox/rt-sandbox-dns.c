// SPDX-License-Identifier: Apache-2.0
/*
 * Bridge mode's helper processes on the host: the DNS forwarder and the --publish relay.
 *
 * The DNS forwarder: a process of hutch's own, on the host, serving the gateway
 * address on this sandbox's veth alone (SO_BINDTODEVICE: every sandbox has one on the same
 * address). It answers only what the policy allows (--egress restricted: the --allow-host
 * names) and, before an answer for an --allow-host name reaches the sandbox, opens its
 * addresses in the firewall for the answer's TTL, so that a name whose addresses change
 * during the run keeps working. It runs outside the sandbox, which can neither kill it nor
 * see it; it dies with its hutch (PR_SET_PDEATHSIG) until hutch hangs up, writes its figures
 * to a pipe, and then finishes the sandbox's network teardown on its own.
 */
#include "rt-sandbox.h"
#include "rt-process.h"
#include "rt-sandbox-net.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

struct answer_ctx {
	const struct rt_sb_opts *o;
	uint32_t addr;
	struct net_egress eg;
	uint32_t host[64]; /* the host's own addresses, read again after a second */
	size_t n_host;
	double host_at;
};

static enum net_answer judge(struct answer_ctx *c, uint32_t a)
{
	double now = hutch_now_ms();
	if (now - c->host_at > 1000) {
		int n = net_host_addrs(c->host, ARRAY_SIZE(c->host));
		c->n_host = n < 0 ? 0 : (size_t)n;
		c->host_at = now;
	}
	struct net_answer_policy p = { &c->eg, &c->o->subnet, c->host, c->n_host };
	return net_answer_judge(&p, a);
}

/* Before anything is opened, for every name: the host's own addresses, the special ranges,
 * the sandboxes' subnet and --deny-cidr leave the answer (DNS rebinding), unless an
 * --allow-cidr names them (the deny aside). */
static bool drop_addr(uint32_t a, void *arg)
{
	return judge(arg, a) == NET_ANSWER_DROP;
}

/* An allowed name's addresses stay open a little beyond its TTL (a resolver caches that
 * long), at least a minute, at most a day; established connections outlive it anyway. */
static unsigned open_for(uint32_t ttl)
{
	return (ttl < 60 ? 60 : ttl > 86400 ? 86400 : ttl) + 30;
}

static int on_answer(const char *name, bool matched, const uint32_t *addrs, size_t n, uint32_t ttl,
		     void *arg)
{
	struct answer_ctx *c = arg;
	if (!matched || !n)
		return 0; /* open egress: what is not listed is reachable or refused as it is */
	/* What is left is public, or an --allow-cidr's: that allow, with its ports, is what
	 * reaches the latter; the name opens only the former. */
	uint32_t open[256];
	size_t k = 0;
	for (size_t i = 0; i < n && k < ARRAY_SIZE(open); i++)
		if (judge(c, addrs[i]) == NET_ANSWER_OPEN)
			open[k++] = addrs[i];
	for (size_t i = 0; i < c->o->n_allow_host && k; i++) {
		const struct rt_sb_allow_host *h = &c->o->allow_host[i];
		if (!net_dns_name_match(h->pattern, name))
			continue;
		struct net_cidr port = { .prefix = 32, .port_lo = h->port, .port_hi = h->port };
		struct hutch_err e = { 0 };
		if (net_nft_allow_addrs(c->addr, open, k, &port, open_for(ttl), &e) < 0) {
			hutch_warn("dns forwarder: %s", e.msg);
			return -1;
		}
	}
	return 0;
}

static int bound_socket(int type, uint32_t gw, const char *dev, struct hutch_err *err)
{
	_cleanup_close_ int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "dns forwarder: socket");
	int one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(53),
				  .sin_addr.s_addr = htonl(gw) };
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		return hutch_fail_errno(err, errno, "dns forwarder: bind to %s", dev);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return hutch_fail_errno(err, errno,
					"dns forwarder: bind the gateway's port 53 on %s", dev);
	if (type == SOCK_STREAM && listen(fd, 16) < 0)
		return hutch_fail_errno(err, errno, "dns forwarder: listen");
	return steal_fd(fd);
}

/* A helper process of hutch's (the forwarder, the publish relay): it dies with hutch, keeps
 * only fds[0..n) open, and runs body. */
static pid_t spawn(const int *fds, size_t n, void (*body)(void *), void *arg, struct hutch_err *err)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return hutch_fail_errno(err, errno, "sandbox: fork a network helper");
	if (pid > 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	hutch_close_fds_from(3, fds, n);
	net_nft_after_fork(); /* its socket was among them */
	rt_reset_signals();
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN); /* a ^C reaches hutch, which stops its helpers in order */
	/* And a terminal's hang-up: hutch, a session's leader (script, ssh -t), sends one to
	 * its foreground group as it exits, while the helper still tears down; until then
	 * PR_SET_PDEATHSIG and the control pipe tie the helper's life to hutch's. */
	signal(SIGHUP, SIG_IGN);
	body(arg);
	_exit(1); /* bodies exit themselves */
}

/*
 * The network helper's protocol. It is forked as soon as the address is leased, so that its
 * firewall work overlaps hutch's creation of the container (and, at the end, its deletion):
 *   helper: adds the sandbox's elements          -> status 1 (0 or the error)
 *   hutch:  makes the veth, then writes 'g'
 *   helper: binds the gateway's port 53 on it     -> status 2
 *           serves DNS until hutch hangs up the control pipe
 *           with a report: takes over the lease (it outlives hutch from here on),
 *             reads the counters                  -> the figures
 *           without: lets go of the caller's stdio -> the figures (over, no counters),
 *             then takes over the lease (it outlives hutch from here on)
 *   hutch:  writes its report, lets go of its lock and name, and exits
 *   helper: removes the elements and the tracked connections, then lets go of the lease
 * What the helper had no time to remove stays leased to it (or, its takeover failed, to
 * hutch), dead: the next bridge sandbox's sweep removes it (rt_sb_net_reclaim). Without the
 * takeover the helper touches nothing: hutch, alive, removes it all and lets go of the lease
 * (dead, it leaves that to a sweep).
 */
struct helper_status {
	struct hutch_err err; /* code 0: done */
};
struct helper_figures {
	bool over; /* the helper took the lease over: it finishes the teardown */
	bool fw_ok;
	struct net_egress_stats fw;
	struct net_dns_stats dns;
};

struct dns_arg {
	const struct rt_sb_opts *o;
	const struct rt_sb_net *n;
	int ctl, out; /* from hutch (its hang-up stops the forwarder), to hutch */
	pid_t hutch;  /* the lease's holder until the takeover */
};

/* hutch hung up: the helper no longer dies with it, and holds the lease itself. Its stdio,
 * the caller's, is let go of once the figures are sent (teardown). */
static bool take_over(const struct dns_arg *a)
{
	struct hutch_err e = { 0 };
	prctl(PR_SET_PDEATHSIG, 0);
	if (net_ipam_transfer(a->n->ipam_fd, a->n->addr, a->hutch, getpid(), &e) < 0) {
		hutch_warn("network helper: %s; the lease is not its own: it removes nothing",
			   e.msg);
		return false;
	}
	return true;
}

/* The caller's stdio, which a caller reading to the end waits for, let go of. */
static void drop_stdio(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	if (null > 2)
		close(null);
}

/* The rest of the teardown, once hutch has its figures: the caller waits for nothing here. */
static _Noreturn void teardown(const struct dns_arg *a, bool fw_done)
{
	struct hutch_err e = { 0 };
	drop_stdio();
	hutch_fault_point("sandbox:net-teardown"); /* killed here, it leaves it all to a sweep */
	struct net_egress eg = rt_sb_egress_of(a->o);
	int r = fw_done ? 0 : net_nft_sandbox_del_known(a->n->addr, &a->o->subnet, &eg, &e);
	if (r < 0)
		_exit(1); /* the lease stays ours, dead: the next sweep removes the elements */
	/* The walk of the host's whole connection-tracking table (~3.5 ms of CPU a direction,
	 * net-ct.c) holds no lock another start needs, and nobody waits for it: it runs when a
	 * CPU is idle, not against the next sandbox's start on a host that starts them back to
	 * back. The lease is given up at the usual priority: the next lease takes its lock. */
	struct sched_param idle = { 0 }, normal = { 0 };
	bool low = sched_setscheduler(0, SCHED_IDLE, &idle) == 0;
	if (net_ct_flush_addr(a->n->addr, a->o->n_publish > 0, &e) < 0)
		_exit(1);
	if (low)
		sched_setscheduler(0, SCHED_OTHER, &normal);
	r = net_ipam_release(a->n->ipam_fd, a->n->addr, &e) < 0;
	net_nfnl_quiesce(); /* then the exit's release of its socket waits for nothing */
	_exit(r);
}

static void send_status(int fd, const struct hutch_err *e)
{
	struct helper_status st = { .err = *e };
	(void)!write(fd, &st, sizeof(st));
}

/* Serves: statuses and the figures go to a->out; a->ctl says go, then stop. */
static _Noreturn void serve_dns(void *arg)
{
	const struct dns_arg *a = arg;
	const struct rt_sb_opts *o = a->o;
	struct net_egress eg = rt_sb_egress_of(o);
	struct hutch_err e = { 0 };
	net_nft_sandbox_add(a->n->addr, &o->subnet, &eg, &e);
	send_status(a->out, &e);
	char go;
	if (e.code || read(a->ctl, &go, 1) != 1)
		_exit(1); /* hutch removes what was made (the stale path) */
	char dev[NET_IFNAME_LEN];
	net_veth_name(a->n->addr, dev);
	uint32_t gw = net_subnet_gateway(&o->subnet);
	int udp = bound_socket(SOCK_DGRAM, gw, dev, &e);
	int tcp = udp < 0 ? -1 : bound_socket(SOCK_STREAM, gw, dev, &e);
	send_status(a->out, &e);
	if (e.code)
		_exit(1);
	const char **pats = hutch_xcalloc(o->n_allow_host + 1, sizeof(*pats));
	for (size_t i = 0; i < o->n_allow_host; i++)
		pats[i] = o->allow_host[i].pattern;
	struct answer_ctx ctx = { .o = o, .addr = a->n->addr, .eg = eg };
	struct net_dns_fwd f = { .udp_fd = udp,
				 .tcp_fd = tcp,
				 .stop_fd = a->ctl,
				 .upstream = a->n->upstream,
				 .n_upstream = a->n->n_upstream,
				 .restricted = o->egress_restricted,
				 .patterns = pats,
				 .n_patterns = o->n_allow_host,
				 .drop_addr = drop_addr,
				 .on_answer = on_answer,
				 .arg = &ctx,
				 .timeout_ms = 2000 };
	struct helper_figures fig = { 0 };
	int r = net_dns_fwd_run(&f, &fig.dns, &e);
	if (r < 0)
		hutch_warn("%s", e.msg);
	close(udp);
	close(tcp);
	if (!o->report && o->report_fd < 0) { /* no report: hutch needs no figures */
		/* Said before the lease is the helper's (that rewrite of the leases file was most
		 * of hutch's wait), with the caller's stdio let go of first: hutch returns as soon
		 * as it has read this. Were the takeover to fail, the lease would be hutch's, dead
		 * once it has returned: the next sweep's, as a SIGKILLed hutch's; and until the
		 * takeover a sweep may take the lease from under it (the takeover then fails and the
		 * helper touches nothing: the sweep did it all). */
		prctl(PR_SET_PDEATHSIG, 0);
		drop_stdio();
		fig.over = true;
		ssize_t w = write(a->out, &fig, sizeof(fig));
		if (w != (ssize_t)sizeof(fig) || !take_over(a))
			_exit(1);
		teardown(a, false);
	}
	prctl(PR_SET_PDEATHSIG, 0); /* from here it outlives hutch */
	hutch_fault_point("sandbox:net-takeover");
	fig.over = take_over(a);
	if (!fig.over) {
		/* The lease is not the helper's: its live hutch's, which removes it all (counters
		 * read) once told so; or, hutch dead, a sweep's, which may have given the address,
		 * and the veth's name that every element is keyed by, to another sandbox already.
		 * Nothing here may touch that address then: removing its elements would take the
		 * new sandbox's firewall with them. */
		(void)!write(a->out, &fig, sizeof(fig));
		_exit(1);
	}
	/* The sandbox is gone: its counters are final. Read (and the elements removed) now
	 * for the report. */
	fig.fw_ok = net_nft_sandbox_del(a->n->addr, &fig.fw, &e) >= 0;
	if (!fig.fw_ok)
		hutch_warn("%s, ignoring", e.msg);
	(void)!write(a->out, &fig, sizeof(fig));
	teardown(a, fig.fw_ok);
}

int rt_sb_dns_start(const struct rt_sb_opts *o, struct rt_sb_net *n, struct hutch_err *err)
{
	int ctl[2], st[2];
	if (pipe2(ctl, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "network helper: pipe");
	if (pipe2(st, O_CLOEXEC) < 0) {
		close(ctl[0]);
		close(ctl[1]);
		return hutch_fail_errno(err, errno, "network helper: pipe");
	}
	int fds[3] = { ctl[0], st[1], n->ipam_fd };
	struct dns_arg arg = { o, n, ctl[0], st[1], getpid() };
	pid_t pid = spawn(fds, 3, serve_dns, &arg, err);
	close(ctl[0]);
	close(st[1]);
	if (pid < 0) {
		close(ctl[1]);
		close(st[0]);
		return pid;
	}
	n->dns_pid = pid;
	n->dns_stop = ctl[1];
	n->dns_stats = st[0];
	return 0;
}

/* The helper's next status: 0, or its error (or its death) in err. */
static int helper_status(struct rt_sb_net *n, const char *step, struct hutch_err *err)
{
	struct helper_status st;
	ssize_t r;
	while ((r = read(n->dns_stats, &st, sizeof(st))) < 0 && errno == EINTR)
		;
	if (r != (ssize_t)sizeof(st))
		return hutch_fail(err, EIO, "network helper: it died (%s)", step);
	if (st.err.code) {
		*err = st.err;
		return -st.err.code;
	}
	return 0;
}

int rt_sb_dns_go(struct rt_sb_net *n, struct hutch_err *err)
{
	TRY(helper_status(n, "firewall elements", err)); /* added while the container was made */
	if (write(n->dns_stop, "g", 1) != 1)
		return hutch_fail_errno(err, errno, "network helper: control pipe");
	return helper_status(n, "the DNS forwarder's sockets", err);
}

void rt_sb_dns_hangup(struct rt_sb_net *n)
{
	if (n->dns_stop >= 0)
		close(n->dns_stop); /* it stops serving, reads the counters and removes the elements */
	n->dns_stop = -1;
}

#define FIGURES_MS 10000 /* its counters' listing takes milliseconds */

bool rt_sb_dns_stop(struct rt_sb_net *n, struct rt_sb_egress_result *res)
{
	if (n->dns_pid <= 0 || n->dns_stats < 0)
		return false;
	rt_sb_dns_hangup(n);
	struct helper_figures fig;
	ssize_t r = 0, got = 0;
	/* After both statuses (rt_sb_dns_go read them): anything else is a helper that
	 * ended early, and hutch removes the elements itself. */
	char *buf = (char *)&fig;
	double until = hutch_now_ms() + FIGURES_MS;
	for (;;) {
		/* A helper that never answers (stopped, stuck) is killed, and hutch does its part:
		 * the caller is not kept waiting for it. */
		struct pollfd p = { .fd = n->dns_stats, .events = POLLIN };
		int left = (int)(until - hutch_now_ms());
		int ready = left <= 0 ? 0 : poll(&p, 1, left);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			break;
		r = read(n->dns_stats, buf + got, sizeof(fig) - (size_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
		if (got == (ssize_t)sizeof(fig))
			break;
	}
	bool whole = got == (ssize_t)sizeof(fig);
	bool done = whole && fig.fw_ok;
	n->dns_over = whole && fig.over;
	if (done && res) {
		res->present = true;
		res->fw = fig.fw;
		res->dns = true;
		res->dns_stats = fig.dns;
	}
	close(n->dns_stats);
	n->dns_stats = -1;
	if (!whole)
		kill(n->dns_pid, SIGKILL);
	return done; /* reaped by rt_sb_dns_reap */
}

/* Its exit takes the kernel several ms (its netlink sockets): reaped last, after the report,
 * so that the wait overlaps the rest of hutch's work. */
void rt_sb_dns_reap(struct rt_sb_net *n)
{
	if (n->dns_pid <= 0)
		return;
	rt_sb_dns_hangup(n);
	if (n->dns_over) { /* it finishes the teardown: nobody waits for it */
		n->dns_pid = 0;
		return;
	}
	while (waitpid(n->dns_pid, NULL, 0) < 0 && errno == EINTR)
		;
	n->dns_pid = 0;
}

/* The publish relay: fds[0] its stop, then the listening sockets in --publish's order. */
struct proxy_arg {
	const struct rt_sb_opts *o;
	uint32_t target;
	const int *fds;
};

static _Noreturn void serve_proxy(void *arg)
{
	const struct proxy_arg *a = arg;
	uint16_t ports[NET_PROXY_MAX];
	for (size_t i = 0; i < a->o->n_publish; i++)
		ports[i] = a->o->publish[i].port;
	struct net_proxy p = { .listen_fd = a->fds + 1,
			       .port = ports,
			       .n = a->o->n_publish,
			       .target = a->target,
			       .stop_fd = a->fds[0] };
	struct hutch_err e = { 0 };
	int r = net_proxy_run(&p, &e);
	if (r < 0)
		hutch_warn("%s", e.msg);
	_exit(r < 0);
}

int rt_sb_publish_start(const struct rt_sb_opts *o, struct rt_sb_net *n, struct hutch_err *err)
{
	if (!o->n_publish)
		return 0;
	int fds[1 + NET_PROXY_MAX], stop[2], r = 0;
	size_t nf = 1;
	if (pipe2(stop, O_CLOEXEC) < 0)
		return hutch_fail_errno(err, errno, "publish: pipe");
	fds[0] = stop[0];
	for (size_t i = 0; i < o->n_publish && r >= 0; i++) {
		r = net_publish_listen(&o->publish[i], err);
		if (r >= 0)
			fds[nf++] = r;
	}
	struct proxy_arg arg = { o, n->addr, fds };
	pid_t pid = r < 0 ? r : spawn(fds, nf, serve_proxy, &arg, err);
	for (size_t i = 0; i < nf; i++)
		close(fds[i]);
	if (pid < 0) {
		close(stop[1]);
		return pid;
	}
	n->proxy_pid = pid;
	n->proxy_stop = stop[1];
	return 0;
}

void rt_sb_publish_stop(struct rt_sb_net *n)
{
	if (n->proxy_pid <= 0)
		return;
	close(n->proxy_stop);
	n->proxy_stop = -1;
	while (waitpid(n->proxy_pid, NULL, 0) < 0 && errno == EINTR)
		;
	n->proxy_pid = 0;
}
