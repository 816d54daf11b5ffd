// SPDX-License-Identifier: Apache-2.0
/*
 * Reading nft's listing of table "inet hutch" back: a sandbox's elements are found by its
 * veth's name (the first field of every per-sandbox key, or its address in set "addrs"), and
 * its counters by their names. Text, not JSON: the listing's element syntax is exactly what
 * "delete element" takes, so keys are copied rather than rebuilt. Pure, hence unit-tested.
 */
#include "net-internal.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct del {
	char *elems;	/* "delete element ..." lines */
	char *counters; /* "delete counter ..." lines, after: the maps refer to them */
};

/* Adds "delete WHAT inet hutch ARG" to *s. */
static void append(char **s, const char *what, const char *arg)
{
	char *n = hutch_xasprintf("%sdelete %s inet hutch %s\n", *s, what, arg);
	free(*s);
	*s = n;
}

/* An element's key: its text up to its data (" : ") or its state (counter, timeout...). */
static size_t key_len(const char *e, size_t len)
{
	static const char *const stops[] = { " : ", " counter ", " timeout ", " expires " };
	size_t k = len;
	for (size_t i = 0; i < ARRAY_SIZE(stops); i++) {
		const char *p = memmem(e, len, stops[i], strlen(stops[i]));
		if (p && (size_t)(p - e) < k)
			k = (size_t)(p - e);
	}
	return k;
}

/* Refused-set elements: "VETH" . ADDR . PROTO . PORT counter packets N ... */
static void note_refused(const char *e, size_t len, struct net_egress_stats *st)
{
	_cleanup_free_ char *s = hutch_xasprintf("%.*s", (int)len, e);
	char addr[NET_IPV4_LEN], proto[8];
	unsigned port;
	unsigned long long packets = 0;
	const char *c = strstr(s, " counter packets ");
	if (!c || sscanf(strchr(s, '.') ? strchr(s, '.') + 1 : s, " %15s . %7s . %u", addr, proto,
			 &port) != 3)
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
			if (st && !strcmp(set, "refused"))
				note_refused(text + i, n, st);
		}
		i = j;
	}
	if (*keys) {
		_cleanup_free_ char *what = hutch_xasprintf("%s { %s }", set, keys);
		append(&d->elems, "element", what);
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
	append(&d->counters, "counter", name);
}

char *net_nft_del_script(const char *listing, const char *veth, struct net_egress_stats *st)
{
	struct del d = { hutch_xstrdup(""), hutch_xstrdup("") };
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
		if (sscanf(l, " %15s %63s {", kind, name) == 2 && end > l && end[-1] == '{' &&
		    strcmp(kind, "table")) {
			const char *close = strstr(end, "\n\t}");
			close = close ? close : end;
			_cleanup_free_ char *body =
				hutch_xasprintf("%.*s", (int)(close - end), end);
			const char *el = strstr(body, "elements = {");
			if ((!strcmp(kind, "set") || !strcmp(kind, "map")) && el) {
				el += strlen("elements = {");
				const char *ee = strchr(el, '}');
				take_elems(name, el, ee ? (size_t)(ee - el) : strlen(el), veth,
					   addr, &d, st);
			} else if (!strcmp(kind, "counter")) {
				take_counter(name, body, veth, &d, st);
			}
			end = close;
		}
		l = *end ? end + 1 : end;
	}
	char *script = hutch_xasprintf("%s%s", d.elems, d.counters);
	free(d.elems);
	free(d.counters);
	return script;
}
