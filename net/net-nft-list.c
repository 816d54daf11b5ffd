// SPDX-License-Identifier: Apache-2.0
/*
 * Reading nft's listing of tables "inet hutch" and "arp hutch" back: a sandbox's elements are
 * found by its veth's name (the first field of every per-sandbox key, or its address in set
 * "addrs"), and its counters, chains and set by their names (ok_VETH, no_VETH, lim_VETH,
 * rf_VETH). Text, not JSON: the listing's element syntax is exactly what "delete element"
 * takes, so keys are copied rather than rebuilt. Pure, hence unit-tested.
 */
#include "net-internal.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct del {
	const char *table; /* the block's table: "inet hutch" or "arp hutch" */
	char *elems;	/* "delete element ..." lines, first: maps refer to chains and counters */
	char *chains;	/* "delete chain ...": the sandbox's own, whose rules refer to its set */
	char *sets;	/* "delete set ..." */
	char *counters; /* "delete counter ..." */
};

/* Adds "delete WHAT TABLE ARG" to *s. */
static void append(const struct del *d, char **s, const char *what, const char *arg)
{
	char *n = hutch_xasprintf("%sdelete %s %s %s\n", *s, what, d->table, arg);
	free(*s);
	*s = n;
}

/* An element's key: its text up to its data (" : ") or its state (counter, timeout...). */
static size_t key_len(const char *e, size_t len)
{
	static const char *const stops[] = { " : ", " counter ", " timeout ", " expires ",
					     " ct count " };
	size_t k = len;
	for (size_t i = 0; i < ARRAY_SIZE(stops); i++) {
		const char *p = memmem(e, len, stops[i], strlen(stops[i]));
		if (p && (size_t)(p - e) < k)
			k = (size_t)(p - e);
	}
	return k;
}

/* Elements of the sandbox's set rf_VETH: ADDR . PROTO . PORT counter packets N ... (an older
 * hutch's shared set "refused" had "VETH" . in front). */
static void note_refused(const char *e, size_t len, struct net_egress_stats *st)
{
	_cleanup_free_ char *s = hutch_xasprintf("%.*s", (int)len, e);
	char addr[NET_IPV4_LEN], proto[8];
	unsigned port;
	unsigned long long packets = 0;
	const char *c = strstr(s, " counter packets ");
	const char *key = s[0] == '"' && strchr(s, '.') ? strchr(s, '.') + 1 : s;
	if (!c || sscanf(key, " %15s . %7s . %u", addr, proto, &port) != 3)
		return;
	sscanf(c, " counter packets %llu", &packets);
	struct net_refused r = { .proto = strcmp(proto, "udp") ? IPPROTO_TCP : IPPROTO_UDP,
				 .port = (uint16_t)port,
				 .packets = packets };
	if (net_ipv4_parse(addr, &r.addr) < 0)
		return;
	size_t at = st->n_dest;
	while (at > 0 && st->dest[at - 1].packets < r.packets)
		at--;
	if (at >= NET_REFUSED_MAX)
		return;
	size_t n = st->n_dest < NET_REFUSED_MAX ? st->n_dest : NET_REFUSED_MAX - 1;
	memmove(&st->dest[at + 1], &st->dest[at], (n - at) * sizeof(st->dest[0]));
	st->dest[at] = r;
	if (st->n_dest < NET_REFUSED_MAX)
		st->n_dest++;
}

/* One set's "elements = { a, b, ... }" text (without the braces): veth's keys go to d. */
static void take_elems(const char *set, const char *text, size_t len, const char *veth,
		       const char *addr, struct del *d, struct net_egress_stats *st)
{
	char q[NET_IFNAME_LEN + 3];
	snprintf(q, sizeof(q), "\"%s\"", veth);
	_cleanup_free_ char *keys = hutch_xstrdup("");
	for (size_t i = 0; i < len;) {
		while (i < len && strchr(" \t\n,", text[i]))
			i++;
		size_t j = i;
		while (j < len && text[j] != ',')
			j++;
		size_t n = j - i;
		while (n > 0 && strchr(" \t\n", text[i + n - 1]))
			n--;
		size_t k = key_len(text + i, n);
		bool mine = (k > strlen(q) && !strncmp(text + i, q, strlen(q)) &&
			     text[i + strlen(q)] == ' ') ||
			    (!strcmp(set, "addrs") && k == strlen(addr) &&
			     !strncmp(text + i, addr, k)) ||
			    (k == strlen(q) && !strncmp(text + i, q, k));
		if (n && mine) {
			char *s = hutch_xasprintf("%s%s%.*s", keys, *keys ? ", " : "", (int)k,
						  text + i);
			free(keys);
			keys = s;
			if (st && !strcmp(set, "refused")) /* an older hutch's */
				note_refused(text + i, n, st);
		}
		i = j;
	}
	if (*keys) {
		_cleanup_free_ char *what = hutch_xasprintf("%s { %s }", set, keys);
		append(d, &d->elems, "element", what);
	}
}

static void take_counter(const char *name, const char *body, const char *veth, struct del *d,
			 struct net_egress_stats *st)
{
	bool ok = !strncmp(name, "ok_", 3), no = !strncmp(name, "no_", 3);
	if ((!ok && !no) || strcmp(name + 3, veth))
		return;
	unsigned long long packets = 0;
	const char *p = strstr(body, "packets ");
	if (p)
		sscanf(p, "packets %llu", &packets);
	if (st && ok)
		st->allowed = packets;
	if (st && no)
		st->refused = packets;
	append(d, &d->counters, "counter", name);
}

/* The sandbox's own set rf_VETH: its elements are its refused destinations. */
static void take_own_set(const char *name, const char *body, struct del *d,
			 struct net_egress_stats *st)
{
	const char *el = strstr(body, "elements = {");
	if (st && el) {
		el += strlen("elements = {");
		const char *ee = strchr(el, '}');
		size_t len = ee ? (size_t)(ee - el) : strlen(el);
		for (size_t i = 0; i < len;) {
			while (i < len && strchr(" \t\n,", el[i]))
				i++;
			size_t j = i;
			while (j < len && el[j] != ',')
				j++;
			if (j > i)
				note_refused(el + i, j - i, st);
			i = j;
		}
	}
	append(d, &d->sets, "set", name);
}

/* The sandbox's own chains: lim_VETH counts what its cap refused. */
static void take_own_chain(const char *name, const char *body, struct del *d,
			   struct net_egress_stats *st)
{
	const char *p = strstr(body, "counter packets ");
	unsigned long long packets = 0;
	if (p)
		sscanf(p, "counter packets %llu", &packets);
	if (st && !strncmp(name, "lim_", 4))
		st->capped = packets;
	append(d, &d->chains, "chain", name);
}

/* One block of the listing ("set NAME {" to its "}"): veth's part of it goes to d. */
static void take_block(const char *kind, const char *name, const char *body, const char *veth,
		       const char *addr, struct del *d, struct net_egress_stats *st)
{
	const char *own = strchr(name, '_');
	bool mine = own && !strcmp(own + 1, veth) &&
		    (!strncmp(name, "lim_", 4) || !strncmp(name, "rf_", 3));
	const char *el = strstr(body, "elements = {");
	if (mine && !strcmp(kind, "chain")) {
		take_own_chain(name, body, d, st);
	} else if (mine && !strcmp(kind, "set")) {
		take_own_set(name, body, d, st);
	} else if ((!strcmp(kind, "set") || !strcmp(kind, "map")) && el) {
		el += strlen("elements = {");
		const char *ee = strchr(el, '}');
		take_elems(name, el, ee ? (size_t)(ee - el) : strlen(el), veth, addr, d, st);
	} else if (!strcmp(kind, "counter")) {
		take_counter(name, body, veth, d, st);
	}
}

char *net_nft_del_script(const char *listing, const char *veth, struct net_egress_stats *st)
{
	struct del d = { "inet hutch", hutch_xstrdup(""), hutch_xstrdup(""), hutch_xstrdup(""),
			 hutch_xstrdup("") };
	char addr[NET_IPV4_LEN] = "";
	uint32_t a;
	if (sscanf(veth, "hv%8x", &a) == 1)
		net_ipv4_format(a, addr);
	if (st)
		*st = (struct net_egress_stats){ 0 };
	char kind[16], name[64];
	for (const char *l = listing; l && *l;) {
		const char *end = strchr(l, '\n');
		end = end ? end : l + strlen(l);
		if (!strncmp(l, "table arp hutch {", 17))
			d.table = "arp hutch";
		else if (!strncmp(l, "table ", 6))
			d.table = "inet hutch";
		if (sscanf(l, " %15s %63s {", kind, name) == 2 && end > l && end[-1] == '{' &&
		    strcmp(kind, "table")) {
			const char *close = strstr(end, "\n\t}");
			close = close ? close : end;
			_cleanup_free_ char *body =
				hutch_xasprintf("%.*s", (int)(close - end), end);
			take_block(kind, name, body, veth, addr, &d, st);
			end = close;
		}
		l = *end ? end + 1 : end;
	}
	char *script = hutch_xasprintf("%s%s%s%s", d.elems, d.chains, d.sets, d.counters);
	free(d.elems);
	free(d.chains);
	free(d.sets);
	free(d.counters);
	return script;
}
