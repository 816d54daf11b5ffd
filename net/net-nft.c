// SPDX-License-Identifier: Apache-2.0
/*
 * The sandboxes' firewall, in nftables' own library. One table, "inet hutch", made once per
 * network namespace and shared: its chains hook forward and input (what sandboxes send on and
 * to the host, and what is forwarded to them) and postrouting (masquerade), and decide by
 * looking the packet's veth up in sets and maps, so that a sandbox costs one transaction:
 * elements, and two chains and a set of its own (its cap, its refused destinations).
 * The sandbox cannot lift any of it: it lives in the host's network namespace, and is keyed
 * by the host end of the veth, which the sandbox cannot rename or leave (no sandbox has
 * CAP_NET_ADMIN; a forged source address, which CAP_NET_RAW allows, is dropped before
 * connection tracking sees it).
 *
 * The order of the egress checks, for a packet from a sandbox's veth:
 *   a source address not the sandbox's, or IP options
 *   (prerouting, before conntrack)                   drop (counted as refused)
 *   IPv6; a reply or related packet (an ICMP error)
 *   of a connection that is not the sandbox's own    refuse
 *   replies of its connections already let through   accept
 *   a new connection over its cap (ct count)         refuse (counted apart)
 *   DNS to the gateway (input hook)                  accept
 *   --deny-cidr                                      refuse (wins over every allow)
 *   --allow-cidr                                     allow: the only way to what follows
 *   the host itself (input hook), link-local,
 *   private, shared, loopback, multicast ranges      refuse
 *   addresses the DNS forwarder returned for         allow (opened before the answer went
 *   --allow-host names                                      to the sandbox; never one of the
 *                                                           above: it removes those)
 *   --egress restricted                              refuse
 *   anything else (the internet)                     allow
 * Towards a sandbox: replies of its own connections, and DNAT'ed connections (an
 * operator's), pass; nothing else.
 * Beside it, table "arp hutch" drops the ARP a sandbox sends from any sender address but its
 * own: the host would learn each as a neighbour, in a table the whole host shares (arp_table).
 * "refuse" rejects (a TCP reset, or ICMP admin-prohibited) so that a client fails at once,
 * counts the attempt, and records tcp/udp destinations in the sandbox's set for the report.
 * "allow" counts each connection once: a ct label marks it counted (a retransmitted SYN).
 */
#include "net-internal.h"
#include "hutch-dl.h"

#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T "inet hutch"

/*
 * Debian ships libnftables only as a shared object, and hutch is static. Static glibc's
 * dlopen loads it together with a second copy of libc: that works for libnftables because
 * every result comes back through return values and its own error buffer (never errno, which
 * lives in the other libc's TLS). Loading it only here keeps every other start free of the
 * dynamic loader. The prototypes come from the real header, so the ABI is checked.
 */
static struct {
	void *dl;
	__typeof__(&nft_ctx_new) ctx_new;
	__typeof__(&nft_ctx_free) ctx_free;
	__typeof__(&nft_ctx_buffer_output) buffer_output;
	__typeof__(&nft_ctx_buffer_error) buffer_error;
	__typeof__(&nft_ctx_get_output_buffer) get_output;
	__typeof__(&nft_ctx_get_error_buffer) get_error;
	__typeof__(&nft_ctx_output_set_flags) set_flags;
	__typeof__(&nft_run_cmd_from_buffer) run;
	struct nft_ctx *ctx; /* one per process: making one reads iproute2's tables (~ms) */
} lib;

static int load_lib(struct hutch_err *err)
{
	if (lib.dl)
		return 0;
	const struct hutch_dl_sym syms[] = {
		{ (void **)&lib.ctx_new, "nft_ctx_new" },
		{ (void **)&lib.ctx_free, "nft_ctx_free" },
		{ (void **)&lib.buffer_output, "nft_ctx_buffer_output" },
		{ (void **)&lib.buffer_error, "nft_ctx_buffer_error" },
		{ (void **)&lib.get_output, "nft_ctx_get_output_buffer" },
		{ (void **)&lib.get_error, "nft_ctx_get_error_buffer" },
		{ (void **)&lib.set_flags, "nft_ctx_output_set_flags" },
		{ (void **)&lib.run, "nft_run_cmd_from_buffer" },
	};
	return hutch_dl_load("libnftables.so.1", syms, ARRAY_SIZE(syms), "bridge networking",
			     "libnftables1", &lib.dl, err);
}

void net_nft_after_fork(void)
{
	/* The context's netlink socket may be closed, or its number reused: a new context on
	 * the next use. The old one is not freed, which would close that number. */
	lib.ctx = NULL;
	net_nfnl_forget();
}

/* Runs one nft script; on success *out (if given) is a copy of what it printed. */
static int run(const char *script, unsigned flags, char **out, struct hutch_err *err)
{
	TRY(load_lib(err));
	if (!lib.ctx) {
		struct nft_ctx *c = lib.ctx_new(NFT_CTX_DEFAULT);
		if (!c)
			return hutch_fail(err, ENOMEM, "nft: cannot create a context");
		if (lib.buffer_output(c) < 0 || lib.buffer_error(c) < 0) {
			lib.ctx_free(c);
			return hutch_fail(err, ENOMEM, "nft: cannot buffer output");
		}
		lib.ctx = c;
	}
	struct nft_ctx *c = lib.ctx;
	lib.set_flags(c, flags);
	if (lib.run(c, script) != 0) {
		const char *e = lib.get_error(c);
		size_t len = e ? strcspn(e, "\n") : 0;
		/* The table, a set or an element is missing: the caller may make it and retry. */
		int code = e && strstr(e, "No such file or directory") ? ENOENT
			   : e && strstr(e, "File exists")	       ? EEXIST
								       : EINVAL;
		return hutch_fail(err, code, "nft: %.*s", (int)len, len ? e : "failed");
	}
	if (out) {
		const char *o = lib.get_output(c);
		*out = hutch_xstrdup(o ? o : "");
	}
	return 0;
}

/* The label bit that says "this connection has been counted" (of 128; rarely used ones). */
#define COUNTED "125"

/*
 * The shared table. "create table" makes the batch fail when a concurrent hutch made it
 * first, so rules are never added twice; the caller then just retries its elements. Set
 * "layout_3" names this layout and holds its sandboxes' veths: adding to it fails on a table
 * of an older layout, whose sets all exist but whose rules are older (replace_old).
 *
 * Per sandbox, beside its elements in the shared sets: chain lim_VETH (its cap on tracked
 * connections, "ct count over N", and the counter of what the cap refused), reached through
 * map "limits" for a new connection, and chain and set rf_VETH (the destinations it was
 * refused, at most NET_REFUSED_SLOTS, with a counter each), reached through map "record". Its
 * own chain and set: nothing another sandbox does fills or empties them.
 *
 * The order (docs/networking.md): a forged source, in prerouting before conntrack, where a
 * packet it dropped can neither match another party's connection (the host's, another
 * sandbox's, either direction) nor move its state on, and IP options (a source route, which
 * a host accepting them rewrote after conntrack had matched the packet to a connection to
 * itself, and forwarded as part of it, wherever the route said: nobody needs options); IPv6, and a packet conntrack relates
 * to a connection that is not the sandbox's (an ICMP error carries any connection's header,
 * from any source: an error from the sandbox's own address about the host's flow made its
 * socket fail); replies of its own; the cap; --deny-cidr; --allow-cidr; the host itself and the special ranges; the addresses of
 * allowed names (the DNS forwarder's, which never holds a special one); restricted; the rest.
 * Towards a sandbox (forward, leaving through its veth) only replies of its connections
 * (one end is its address), and connections an operator's DNAT made, pass: a neighbour
 * routing to the subnet reaches nothing.
 */
static const char table_head[] =
	"create table " T "\n"
	"table " T " {\n"
	"  set layout_3 { type ifname; }\n"
	"  set sandboxes { type ifname; }\n"
	"  set sources { type ifname . ipv4_addr; }\n"
	"  set addrs { type ipv4_addr; }\n"
	"  set dns { type ifname . ipv4_addr; }\n"
	"  set restricted { type ifname; }\n"
	"  set allow_net { type ifname . ipv4_addr; flags interval; }\n"
	"  set allow_port { type ifname . ipv4_addr . inet_service; flags interval; }\n"
	"  set deny_net { type ifname . ipv4_addr; flags interval; }\n"
	"  set dns_net { type ifname . ipv4_addr; flags timeout; }\n"
	"  set dns_port { type ifname . ipv4_addr . inet_service; flags timeout; }\n"
	"  map ok_ctr { type ifname : counter; }\n"
	"  map no_ctr { type ifname : counter; }\n"
	"  map limits { type ifname : verdict; }\n"
	"  map record { type ifname : verdict; }\n"
	"  set special { type ipv4_addr; flags interval; elements = { ";
static const char table_rules[] =
	" }; }\n"
	"  chain prerouting { type filter hook prerouting priority raw; policy accept;\n"
	"    iifname @sandboxes jump early; }\n"
	"  chain early {\n"
	"    iifname . ip saddr != @sources counter name iifname map @no_ctr drop\n"
	"    ip hdrlength != 5 counter name iifname map @no_ctr drop\n"
	"  }\n"
	"  chain forward { type filter hook forward priority filter - 5; policy accept;\n"
	"    iifname @sandboxes jump own\n"
	"    oifname @sandboxes jump ingress\n"
	"    iifname @sandboxes jump egress\n"
	"  }\n"
	"  chain input { type filter hook input priority filter - 5; policy accept;\n"
	"    iifname @sandboxes jump own\n"
	"    iifname @sandboxes jump host_in\n"
	"  }\n"
	"  chain own {\n"
	"    meta nfproto ipv6 goto refuse\n"
	"    ct state established,related iifname . ct original ip saddr != @sources "
	"iifname . ct reply ip saddr != @sources goto refuse\n"
	"  }\n"
	"  chain ingress {\n"
	"    ct state established,related oifname . ct original ip saddr @sources accept\n"
	"    ct state established,related oifname . ct reply ip saddr @sources accept\n"
	"    ct status dnat accept\n"
	"    iifname @sandboxes goto refuse\n"
	"    drop\n"
	"  }\n"
	"  chain guard {\n"
	"    ct state new iifname vmap @limits\n"
	"  }\n"
	"  chain explicit {\n"
	"    iifname . ip daddr @deny_net goto refuse\n"
	"    meta l4proto { tcp, udp } iifname . ip daddr . th dport @allow_port goto allowed\n"
	"    iifname . ip daddr @allow_net goto allowed\n"
	"  }\n"
	"  chain egress {\n"
	"    ct state established,related accept\n"
	"    jump guard\n"
	"    jump explicit\n"
	"    ip daddr @special goto refuse\n"
	"    meta l4proto { tcp, udp } iifname . ip daddr . th dport @dns_port goto allowed\n"
	"    iifname . ip daddr @dns_net goto allowed\n"
	"    iifname @restricted goto refuse\n"
	"    goto allowed\n"
	"  }\n"
	"  chain host_in {\n"
	"    ct state established,related accept\n"
	"    jump guard\n"
	"    meta l4proto { tcp, udp } th dport 53 iifname . ip daddr @dns accept\n"
	"    jump explicit\n"
	"    goto refuse\n"
	"  }\n"
	"  chain allowed {\n"
	"    ct label " COUNTED " accept\n"
	"    ct label set " COUNTED "\n"
	"    counter name iifname map @ok_ctr\n"
	"    accept\n"
	"  }\n"
	"  chain capped {\n"
	"    meta l4proto tcp reject with tcp reset\n"
	"    reject with icmpx admin-prohibited\n"
	"  }\n"
	"  chain refuse {\n"
	"    counter name iifname map @no_ctr\n"
	"    meta nfproto ipv4 meta l4proto { tcp, udp } iifname vmap @record\n"
	"    meta l4proto tcp reject with tcp reset\n"
	"    reject with icmpx admin-prohibited\n"
	"  }\n"
	"  chain postrouting { type nat hook postrouting priority srcnat; policy accept;\n"
	"    ip saddr @addrs oifname != \"hv*\" masquerade; }\n"
	"}\n";

/*
 * ARP a sandbox sends from another sender address: the host would make each a neighbour entry
 * (STALE), in a table the whole host shares (gc_thresh3, 1024), once the reverse path filter
 * is loose (the host's conf/all, systemd's default, wins). Its sets hold what the inet table's
 * of the same names hold; a veth not in "sandboxes" (an older hutch's, which adds nothing
 * here) is left alone. Made apart from the inet table, so that either is made when missing.
 */
static const char arp_table[] =
	"create table arp hutch\n"
	"table arp hutch {\n"
	"  set sandboxes { type ifname; }\n"
	"  set sources { type ifname . ipv4_addr; }\n"
	"  chain input { type filter hook input priority filter; policy accept;\n"
	"    iifname @sandboxes iifname . arp saddr ip != @sources drop\n"
	"  }\n"
	"}\n";

/* The table, its set "special" from net_special (net-special.c). */
static char *table_script(void)
{
	char *s = hutch_xstrdup(table_head);
	for (size_t i = 0; i < net_n_special; i++) {
		char a[NET_IPV4_LEN];
		net_ipv4_format(net_special[i].addr, a);
		char *n = hutch_xasprintf("%s%s%s/%u", s, i ? ", " : "", a, net_special[i].prefix);
		free(s);
		s = n;
	}
	char *n = hutch_xasprintf("%s%s", s, table_rules);
	free(s);
	return n;
}

/*
 * A table without set "layout_3" is an older hutch's, whose rules checked a packet's source
 * after conntrack had accepted it as another party's (layout_2), let an allowed name's answer
 * open the host and private ranges, or shared the refused destinations (before). It is
 * replaced when none of its sandboxes is running (their elements would go with it). The
 * batch first creates set "layout_3", which fails when a concurrent hutch has just replaced
 * it: then this layout is there and the caller retries.
 */
static int replace_old(struct hutch_err *err)
{
	_cleanup_free_ char *listing = NULL;
	int r = run("list set " T " sandboxes\n", 0, &listing, err);
	if (r < 0)
		return r;
	if (strstr(listing, "elements = {"))
		return hutch_fail(err, EBUSY,
				  "nft: table " T " is an older hutch's, still used by its "
				  "sandboxes: let them end, or delete it (nft delete table " T ")");
	_cleanup_free_ char *table = table_script();
	_cleanup_free_ char *script = hutch_xasprintf("create set " T " layout_3 { type ifname; }\n"
						      "delete table " T "\n"
						      "table arp hutch\n"
						      "delete table arp hutch\n%s%s",
						      table, arp_table);
	r = run(script, 0, NULL, err);
	if (r == -EEXIST)
		return hutch_err_clear(err), 0;
	return r;
}

/* Appends "VETH" . CIDR [. PORTS] to allow_net, allow_port or deny_net. */
static void add_cidr(char **s, const char *veth, const struct net_cidr *c, bool deny)
{
	char a[NET_IPV4_LEN], ports[16] = "";
	net_ipv4_format(c->addr, a);
	const char *set = deny ? "deny_net" : c->port_lo ? "allow_port" : "allow_net";
	if (!deny && c->port_lo)
		snprintf(ports, sizeof(ports), " . %u-%u", c->port_lo, c->port_hi);
	char *n = hutch_xasprintf("%sadd element " T " %s { \"%s\" . %s/%u%s }\n", *s, set, veth, a,
				  c->prefix, ports);
	free(*s);
	*s = n;
}

/* Narrowest first: an interval set refuses a range inside one it already holds, not the
 * reverse. */
static int by_prefix_desc(const void *a, const void *b)
{
	const struct net_cidr *x = a, *y = b;
	return (int)y->prefix - (int)x->prefix;
}

static struct net_cidr *sorted_copy(const struct net_cidr *c, size_t n)
{
	struct net_cidr *v = hutch_xcalloc(n + 1, sizeof(*v));
	if (n) /* c may be NULL then, which memcpy may not be given */
		memcpy(v, c, n * sizeof(*v));
	qsort(v, n, sizeof(*v), by_prefix_desc);
	return v;
}

static void add_cidrs(char **s, const char *veth, const struct net_cidr *c, size_t n, bool deny)
{
	for (size_t i = 0; i < n; i++)
		add_cidr(s, veth, &c[i], deny);
}

/* The sandbox's own chains and set (see table_head). "flush" makes a chain or set left by a
 * sandbox whose removal failed this one's, empty. */
static char *own_script(const char *veth, unsigned max_conns)
{
	char *lim =
		max_conns
			? hutch_xasprintf("add chain " T " lim_%1$s\n"
					  "flush chain " T " lim_%1$s\n"
					  "add rule " T " lim_%1$s ct count over %2$u counter "
					  "goto capped\n"
					  "add element " T " limits { \"%1$s\" : jump lim_%1$s }\n",
					  veth, max_conns)
			: hutch_xstrdup("");
	char *s = hutch_xasprintf(
		"%2$sadd set " T " rf_%1$s { type ipv4_addr . inet_proto . inet_service; "
		"flags dynamic; size %3$u; counter; }\n"
		"flush set " T " rf_%1$s\n"
		"add chain " T " rf_%1$s\n"
		"flush chain " T " rf_%1$s\n"
		"add rule " T " rf_%1$s add @rf_%1$s { ip daddr . meta l4proto . th dport }\n"
		"add element " T " record { \"%1$s\" : jump rf_%1$s }\n",
		veth, lim, NET_REFUSED_SLOTS);
	free(lim);
	return s;
}

static char *add_script(const char *veth, uint32_t addr, const struct net_subnet *sn,
			const struct net_egress *eg)
{
	char a[NET_IPV4_LEN], gw[NET_IPV4_LEN];
	net_ipv4_format(addr, a);
	net_ipv4_format(net_subnet_gateway(sn), gw);
	_cleanup_free_ char *own = own_script(veth, eg->max_conns);
	char *s = hutch_xasprintf("add element " T " layout_3 { \"%1$s\" }\n"
				  "add element " T " sandboxes { \"%1$s\" }\n"
				  "add element " T " sources { \"%1$s\" . %2$s }\n"
				  "add element arp hutch sandboxes { \"%1$s\" }\n"
				  "add element arp hutch sources { \"%1$s\" . %2$s }\n"
				  "add element " T " addrs { %2$s }\n"
				  "add element " T " dns { \"%1$s\" . %3$s }\n"
				  "add counter " T " ok_%1$s\n"
				  "add counter " T " no_%1$s\n"
				  "add element " T " ok_ctr { \"%1$s\" : \"ok_%1$s\" }\n"
				  "add element " T " no_ctr { \"%1$s\" : \"no_%1$s\" }\n"
				  "%5$s%4$s",
				  veth, a, gw,
				  eg->restricted ? "add element " T " restricted " : "", own);
	if (eg->restricted) {
		char *n = hutch_xasprintf("%s{ \"%s\" }\n", s, veth);
		free(s);
		s = n;
	}
	add_cidrs(&s, veth, eg->allow, eg->n_allow, false);
	add_cidrs(&s, veth, eg->deny, eg->n_deny, true);
	return s;
}

/* Makes the tables (or replaces an older hutch's), then runs script again. */
static int make_table(const char *script, struct hutch_err *err)
{
	_cleanup_free_ char *table = table_script();
	int r = run(table, 0, NULL, err);
	if (r == -EEXIST) /* a concurrent hutch made it, or an older one */
		hutch_err_clear(err), r = 0;
	if (r >= 0)
		r = run(arp_table, 0, NULL, err);
	if (r == -EEXIST)
		hutch_err_clear(err), r = 0;
	if (r >= 0)
		r = run(script, 0, NULL, err);
	if (r == -ENOENT) { /* it is there, and lacks what this one adds: an older hutch's */
		hutch_err_clear(err);
		r = replace_old(err);
		if (r >= 0)
			r = run(script, 0, NULL, err);
	}
	return r;
}

int net_nft_sandbox_add(uint32_t addr, const struct net_subnet *s, const struct net_egress *eg,
			struct hutch_err *err)
{
	char veth[NET_IFNAME_LEN], a[NET_IPV4_LEN];
	net_veth_name(addr, veth);
	net_ipv4_format(addr, a);
	_cleanup_free_ struct net_cidr *allow = sorted_copy(eg->allow, eg->n_allow);
	_cleanup_free_ struct net_cidr *deny = sorted_copy(eg->deny, eg->n_deny);
	struct net_egress sorted = *eg;
	sorted.allow = allow;
	sorted.deny = deny;
	/* The common case: one batch built here, no library. Any failure (the first sandbox,
	 * whose table is missing, or an error) goes through libnftables, which makes the table
	 * and words the error; the kernel has undone the failed batch. */
	if (net_nftnl_sandbox_add(addr, s, &sorted) == 0)
		return 0;
	_cleanup_free_ char *script = add_script(veth, addr, s, &sorted);
	int r = run(script, 0, NULL, err);
	if (r == -ENOENT) {
		hutch_err_clear(err);
		r = make_table(script, err);
	}
	return r < 0 ? hutch_err_prefix(err, "firewall for %s: ", a) : 0;
}

int net_nft_sandbox_del_known(uint32_t addr, const struct net_subnet *s,
			      const struct net_egress *eg, struct hutch_err *err)
{
	/* One batch built here: libnftables's dlopen, listing and script cost 3-5 ms of CPU,
	 * on the host's CPUs beside the next sandbox's start. Anything unexpected (a part
	 * missing) goes the listing's way, which removes whatever is there. */
	if (net_nftnl_sandbox_del(addr, s, eg) == 0)
		return 0;
	return net_nft_sandbox_del(addr, NULL, err);
}

int net_nft_allow_addrs(uint32_t addr, const uint32_t *dst, size_t n, const struct net_cidr *c,
			unsigned timeout_s, struct hutch_err *err)
{
	char veth[NET_IFNAME_LEN], d[NET_IPV4_LEN], port[16] = "";
	net_veth_name(addr, veth);
	const char *set = c->port_lo ? "dns_port" : "dns_net";
	if (c->port_lo)
		snprintf(port, sizeof(port), " . %u", c->port_lo);
	/* add, delete, add: the element is there with a fresh timeout whether it was or not
	 * (this nft has no "update element"), in one atomic batch. */
	_cleanup_free_ char *script = hutch_xstrdup("");
	for (size_t i = 0; i < n; i++) {
		net_ipv4_format(dst[i], d);
		char *s = hutch_xasprintf("%1$sadd element " T " %2$s { \"%3$s\" . %4$s%5$s "
					  "timeout %6$us }\n"
					  "delete element " T " %2$s { \"%3$s\" . %4$s%5$s }\n"
					  "add element " T " %2$s { \"%3$s\" . %4$s%5$s "
					  "timeout %6$us }\n",
					  script, set, veth, d, port, timeout_s);
		free(script);
		script = s;
	}
	return n ? run(script, 0, NULL, err) : 0;
}

/* Both tables' listings, one after the other: nft 1.0.6 lists only the first table named in
 * one run. An older layout has no table "arp hutch". */
static int list_tables(char **listing, struct hutch_err *err)
{
	_cleanup_free_ char *inet = NULL, *arp = NULL;
	int r = run("list table " T "\n", 0, &inet, err);
	if (r < 0)
		return r;
	r = run("list table arp hutch\n", 0, &arp, err);
	if (r == -ENOENT)
		hutch_err_clear(err);
	else if (r < 0)
		return r;
	*listing = hutch_xasprintf("%s%s", inet, arp ? arp : "");
	return 0;
}

int net_nft_sandbox_del(uint32_t addr, struct net_egress_stats *st, struct hutch_err *err)
{
	char veth[NET_IFNAME_LEN], a[NET_IPV4_LEN];
	net_veth_name(addr, veth);
	net_ipv4_format(addr, a);
	int r = 0;
	/* An element with a timeout may expire between the listing and the delete, which then
	 * fails as a whole: list again. */
	for (int tries = 0; tries < 3; tries++) {
		hutch_err_clear(err);
		_cleanup_free_ char *listing = NULL;
		r = list_tables(&listing, err);
		if (r == -ENOENT) { /* never made: nothing to remove */
			hutch_err_clear(err);
			return 0;
		}
		if (r < 0)
			break;
		_cleanup_free_ char *script = net_nft_del_script(listing, veth, st);
		if (!*script)
			return 0;
		r = run(script, 0, NULL, err);
		if (r != -ENOENT)
			break;
	}
	return r < 0 ? hutch_err_prefix(err, "remove the firewall elements of %s: ", a) : 0;
}
