// SPDX-License-Identifier: Apache-2.0
/*
 * Bridge mode's egress policy, from the options: --allow-host, --allow-cidr, --deny-cidr and
 * --egress (and the same keys in a profile), checked and turned into the firewall's terms
 * (net_egress) and the DNS forwarder's (patterns). docs/networking.md has the policy.
 */
#include "rt-sandbox.h"
#include "hutch-ids.h"
#include "rt-sandbox-net.h"
#include "hutch-json.h"

#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rt_sb_set_egress(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	if (strcmp(v, "open") && strcmp(v, "restricted"))
		return hutch_fail(err, EINVAL, "--egress %s: expected open or restricted", v);
	o->egress_restricted = !strcmp(v, "restricted");
	o->egress_opts_set = true;
	return 0;
}

int rt_sb_set_max_connections(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	uint64_t n;
	if (hutch_parse_u64(v, &n) < 0 || (n && n < 16) || n > 1048576)
		return hutch_fail(err, EINVAL,
				  "--max-connections %s: expected 16 to 1048576 (or 0: no cap)", v);
	o->max_connections = (unsigned)n;
	o->egress_opts_set = true;
	return 0;
}

int rt_sb_set_allow_host(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	_cleanup_free_ char *name = hutch_xstrdup(v);
	uint64_t port = 0;
	char *colon = strrchr(name, ':');
	if (colon) {
		*colon = '\0';
		if (hutch_parse_u64(colon + 1, &port) < 0 || port == 0 || port > 65535)
			return hutch_fail(err, EINVAL, "--allow-host %s: expected NAME[:PORT]", v);
	}
	char pat[NET_DNS_NAME_MAX];
	if (net_dns_pattern_parse(name, pat, err) < 0)
		return hutch_err_prefix(err, "--allow-host: ");
	o->allow_host =
		hutch_xrealloc(o->allow_host, (o->n_allow_host + 1) * sizeof(*o->allow_host));
	o->allow_host[o->n_allow_host++] =
		(struct rt_sb_allow_host){ hutch_xstrdup(pat), (uint16_t)port };
	o->egress_opts_set = true;
	return 0;
}

/* Identical entries are dropped: the firewall's interval sets refuse an element twice. */
static int add_cidr(struct net_cidr **list, size_t *n, const char *flag, const char *v, bool ports,
		    struct hutch_err *err)
{
	struct net_cidr c;
	if (net_cidr_parse(v, &c, err) < 0)
		return hutch_err_prefix(err, "%s: ", flag);
	if (!ports && c.port_lo)
		return hutch_fail(err, EINVAL, "%s %s: a port is not supported here (A.B.C.D[/N])",
				  flag, v);
	for (size_t i = 0; i < *n; i++)
		if (!memcmp(&(*list)[i], &c, sizeof(c)))
			return 0;
	*list = hutch_xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = c;
	return 0;
}

int rt_sb_set_allow_cidr(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	o->egress_opts_set = true;
	return add_cidr(&o->allow_cidr, &o->n_allow_cidr, "--allow-cidr", v, true, err);
}

int rt_sb_set_deny_cidr(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	o->egress_opts_set = true;
	return add_cidr(&o->deny_cidr, &o->n_deny_cidr, "--deny-cidr", v, false, err);
}

int rt_sb_set_publish(void *p, const char *v, struct hutch_err *err)
{
	struct rt_sb_opts *o = p;
	struct net_publish pub;
	TRY(net_publish_parse(v, &pub, err));
	if (o->n_publish >= NET_PROXY_MAX)
		return hutch_fail(err, EINVAL, "--publish %s: at most %d ports", v, NET_PROXY_MAX);
	o->publish = hutch_xrealloc(o->publish, (o->n_publish + 1) * sizeof(*o->publish));
	o->publish[o->n_publish++] = pub;
	o->egress_opts_set = true;
	return 0;
}

/* The host's loopback is refused by a cgroup BPF program (cg_deny_loopback: Landlock's
 * network rules match TCP ports, not addresses), which only host root may attach. Rootless,
 * only host mode's --best-effort runs without it (and reports that). */
static int check_deny_loopback(const struct rt_sb_opts *o, struct hutch_err *err)
{
	bool host_mode = o->isolation != RT_SB_ISO_NAMESPACES;
	bool host_net = host_mode && !o->network_set ? true : o->network == RT_SB_NET_HOST;
	if (!host_net)
		return hutch_fail(
			err, EINVAL,
			"--deny-host-loopback needs --network host (none and bridge never "
			"reach the host's loopback)");
	if (!hutch_rootless() || (host_mode && o->best_effort))
		return 0;
	return hutch_fail(err, ENOTSUP,
			  "--deny-host-loopback: not supported rootless: its connect filter is "
			  "a cgroup BPF program, which needs CAP_NET_ADMIN on the host "
			  "(--network none never reaches the host's loopback)");
}

int rt_sb_check_egress(const struct rt_sb_opts *o, struct hutch_err *err)
{
	if (o->deny_host_loopback)
		TRY(check_deny_loopback(o, err));
	if (o->egress_opts_set && o->network != RT_SB_NET_BRIDGE)
		return hutch_fail(err, EINVAL,
				  "--egress, --allow-host, --allow-cidr, --deny-cidr, "
				  "--max-connections and --publish need --network bridge");
	return 0;
}

void rt_sb_egress_free(struct rt_sb_opts *o)
{
	for (size_t i = 0; i < o->n_allow_host; i++)
		free(o->allow_host[i].pattern);
	free(o->allow_host);
	free(o->allow_cidr);
	free(o->deny_cidr);
	free(o->publish);
}

struct net_egress rt_sb_egress_of(const struct rt_sb_opts *o)
{
	return (struct net_egress){ .restricted = o->egress_restricted,
				    .allow = o->allow_cidr,
				    .n_allow = o->n_allow_cidr,
				    .deny = o->deny_cidr,
				    .n_deny = o->n_deny_cidr,
				    .max_conns = o->max_connections };
}

static void gen_cidrs(yajl_gen g, const char *key, const struct net_cidr *c, size_t n)
{
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		char a[NET_IPV4_LEN], buf[48];
		net_ipv4_format(c[i].addr, a);
		int len = snprintf(buf, sizeof(buf), "%s/%u", a, c[i].prefix);
		if (c[i].port_lo == c[i].port_hi && c[i].port_lo)
			snprintf(buf + len, sizeof(buf) - (size_t)len, ":%u", c[i].port_lo);
		else if (c[i].port_lo)
			snprintf(buf + len, sizeof(buf) - (size_t)len, ":%u-%u", c[i].port_lo,
				 c[i].port_hi);
		hutch_json_gen_str(g, buf);
	}
	yajl_gen_array_close(g);
}

static void gen_policy(yajl_gen g, const struct rt_sb_opts *o)
{
	hutch_json_gen_kv(g, "policy", o->egress_restricted ? "restricted" : "open");
	hutch_json_gen_str(g, "allow_hosts");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < o->n_allow_host; i++) {
		char buf[NET_DNS_NAME_MAX + 8];
		snprintf(buf, sizeof(buf), o->allow_host[i].port ? "%s:%u" : "%s",
			 o->allow_host[i].pattern, o->allow_host[i].port);
		hutch_json_gen_str(g, buf);
	}
	yajl_gen_array_close(g);
	gen_cidrs(g, "allow_cidrs", o->allow_cidr, o->n_allow_cidr);
	gen_cidrs(g, "deny_cidrs", o->deny_cidr, o->n_deny_cidr);
	hutch_json_gen_int(g, "max_connections", o->max_connections);
	static const char *const refused[] = { "host",		"169.254.0.0/16", "10.0.0.0/8",
					       "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
					       "ipv6" };
	hutch_json_gen_str(g, "refused_by_default");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		hutch_json_gen_str(g, refused[i]);
	yajl_gen_array_close(g);
}

/* "egress": the policy in force, and (once the sandbox has ended) what it let through and
 * refused: connections counted by the firewall, and the forwarder's DNS answers. */
void rt_sb_gen_egress(yajl_gen g, const struct rt_sb_opts *o, const struct rt_sb_egress_result *r)
{
	if (o->network != RT_SB_NET_BRIDGE)
		return;
	hutch_json_gen_str(g, "egress");
	yajl_gen_map_open(g);
	gen_policy(g, o);
	hutch_json_gen_str(g, "connections_allowed");
	r->present ? yajl_gen_integer(g, (long long)r->fw.allowed) : yajl_gen_null(g);
	hutch_json_gen_str(g, "connections_refused");
	r->present ? yajl_gen_integer(g, (long long)r->fw.refused) : yajl_gen_null(g);
	hutch_json_gen_str(g, "connections_over_limit");
	r->present ? yajl_gen_integer(g, (long long)r->fw.capped) : yajl_gen_null(g);
	hutch_json_gen_str(g, "refused_destinations");
	yajl_gen_array_open(g);
	for (size_t i = 0; r->present && i < r->fw.n_dest; i++) {
		const struct net_refused *d = &r->fw.dest[i];
		char a[NET_IPV4_LEN];
		net_ipv4_format(d->addr, a);
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "address", a);
		hutch_json_gen_kv(g, "protocol", d->proto == IPPROTO_UDP ? "udp" : "tcp");
		hutch_json_gen_int(g, "port", d->port);
		hutch_json_gen_int(g, "attempts", (long long)d->packets);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	hutch_json_gen_str(g, "dns");
	if (r->dns) {
		yajl_gen_map_open(g);
		hutch_json_gen_int(g, "answered", (long long)r->dns_stats.answered);
		hutch_json_gen_int(g, "refused", (long long)r->dns_stats.refused);
		hutch_json_gen_int(g, "failed", (long long)r->dns_stats.failed);
		hutch_json_gen_int(g, "addresses_dropped", (long long)r->dns_stats.dropped);
		yajl_gen_map_close(g);
	} else {
		yajl_gen_null(g);
	}
	yajl_gen_map_close(g);
}
