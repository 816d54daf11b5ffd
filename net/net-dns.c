// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS wire format (RFC 1035) as the policy forwarder needs it: the question of a query,
 * an empty reply (REFUSED, SERVFAIL), the A records of an answer, and name patterns. Pure: no
 * I/O, every read bounds-checked against the message, so it can be fuzzed as it is.
 */
#include "net-internal.h"

#include <string.h>

#define HDR_LEN 12
#define FLAG_QR 0x8000
#define FLAG_RD 0x0100
#define FLAG_RA 0x0080
#define FLAG_TC 0x0200
#define TYPE_A 1
#define TYPE_AAAA 28
#define CLASS_IN 1
/* A name of 255 wire bytes has at most 127 labels, so it needs no more pointers than that. */
#define MAX_HOPS 127

/* A name as it is on the wire, without compression: at most 255 bytes with the root label. */
struct wire_name {
	uint8_t b[255];
	size_t len;
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ASCII only: the C library's tolower() follows the locale. */
static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool ascii_eq(const char *a, const char *b)
{
	for (; *a && lower(*a) == lower(*b); a++, b++)
		;
	return lower(*a) == lower(*b);
}

/* Appends label l (len bytes) to out in dotted form. A '.' inside a label, or a byte that is
 * not printable ASCII, would make the dotted form ambiguous ("a.b" as one label or two) and
 * so the policy match unsound: such names are refused. */
static int put_label(char *out, size_t *n, const uint8_t *l, size_t len)
{
	if (*n)
		out[(*n)++] = '.';
	for (size_t i = 0; i < len; i++) {
		if (l[i] <= 0x20 || l[i] >= 0x7f || l[i] == '.')
			return -EINVAL;
		out[(*n)++] = lower((char)l[i]);
	}
	return 0;
}

/*
 * Reads the name at *off, moving *off past it (past its first pointer if it has one). out, if
 * not NULL, gets the name lowercased and dotted. Each pointer must point before the start of
 * the segment being read: segments then start ever earlier, so a loop is impossible, and the
 * hop count is bounded besides. Real encoders only ever point back to an earlier name.
 */
static int read_name_wire(const uint8_t *msg, size_t len, size_t *off, char *out, bool ptrs,
			  struct wire_name *w)
{
	size_t pos = *off, seg = *off, end = 0, wire = 0, n = 0;
	unsigned hops = 0;
	for (;;) {
		if (pos >= len)
			return -EINVAL;
		uint8_t l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			if (!ptrs || pos + 1 >= len || ++hops > MAX_HOPS)
				return -EINVAL;
			size_t to = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			if (to >= seg)
				return -EINVAL;
			if (!end)
				end = pos + 2;
			pos = seg = to;
			continue;
		}
		if (l & 0xc0) /* 0x40 and 0x80: extended label types (RFC 6891 retired them) */
			return -EINVAL;
		if (l == 0)
			break;
		/* 255 bytes on the wire with the root label: 253 characters dotted */
		wire += 1 + (size_t)l;
		if (pos + 1 + l > len || wire > 254)
			return -EINVAL;
		if (out && put_label(out, &n, msg + pos + 1, l) < 0)
			return -EINVAL;
		if (w) {
			memcpy(w->b + w->len, msg + pos, 1 + (size_t)l);
			w->len += 1 + (size_t)l;
		}
		pos += 1 + (size_t)l;
	}
	if (out)
		out[n] = '\0';
	if (w)
		w->b[w->len++] = 0;
	*off = end ? end : pos + 1;
	return 0;
}

static int read_name(const uint8_t *msg, size_t len, size_t *off, char *out, bool ptrs)
{
	return read_name_wire(msg, len, off, out, ptrs, NULL);
}

/* The question at offset 12 of a message with QDCOUNT 1; returns the offset after it. */
static int read_question(const uint8_t *msg, size_t len, bool ptrs, char name[NET_DNS_NAME_MAX],
			 uint16_t *qtype, uint16_t *qclass)
{
	if (len < HDR_LEN || get16(msg + 4) != 1)
		return -EINVAL;
	size_t off = HDR_LEN;
	if (read_name(msg, len, &off, name, ptrs) < 0 || off + 4 > len)
		return -EINVAL;
	*qtype = get16(msg + off);
	*qclass = get16(msg + off + 2);
	return (int)(off + 4);
}

/* A query's question never needs compression (nothing precedes it to point at), so a pointer
 * there is refused outright rather than followed. */
static int query_question(const uint8_t *msg, size_t len, char name[NET_DNS_NAME_MAX],
			  uint16_t *qtype, uint16_t *qclass)
{
	if (len < HDR_LEN)
		return -EINVAL;
	uint16_t flags = get16(msg + 2);
	if ((flags & FLAG_QR) || (flags >> 11 & 0xf) != 0 || get16(msg + 6) || get16(msg + 8))
		return -EINVAL;
	return read_question(msg, len, false, name, qtype, qclass);
}

int net_dns_parse_query(const uint8_t *msg, size_t len, char name[NET_DNS_NAME_MAX],
			uint16_t *qtype, uint16_t *qclass)
{
	int r = query_question(msg, len, name, qtype, qclass);
	return r < 0 ? r : 0;
}

ssize_t net_dns_reply_empty(const uint8_t *q, size_t qlen, unsigned rcode, uint8_t *out, size_t cap)
{
	char name[NET_DNS_NAME_MAX];
	uint16_t qtype, qclass;
	int end = query_question(q, qlen, name, &qtype, &qclass);
	if (end < 0 || rcode > 15 || (size_t)end > cap)
		return -EINVAL;
	memmove(out, q, (size_t)end);
	put16(out + 2, (uint16_t)(FLAG_QR | (get16(q + 2) & FLAG_RD) | FLAG_RA | rcode));
	memset(out + 6, 0, 6); /* no answer, authority or additional (an OPT would be there) */
	return end;
}

bool net_dns_same_question(const uint8_t *q, size_t qlen, const uint8_t *r, size_t rlen)
{
	char qn[NET_DNS_NAME_MAX], rn[NET_DNS_NAME_MAX];
	uint16_t qt, qc, rt, rc;
	if (qlen < HDR_LEN || rlen < HDR_LEN || get16(q) != get16(r) || !(get16(r + 2) & FLAG_QR))
		return false;
	if (read_question(q, qlen, true, qn, &qt, &qc) < 0 ||
	    read_question(r, rlen, true, rn, &rt, &rc) < 0)
		return false;
	return qt == rt && qc == rc && !strcmp(qn, rn);
}

/* One resource record at *off; for an A record of class IN, its address and TTL. */
static int read_rr(const uint8_t *msg, size_t len, size_t *off, bool *is_a, uint32_t *addr,
		   uint32_t *ttl)
{
	if (read_name(msg, len, off, NULL, true) < 0 || *off + 10 > len)
		return -EINVAL;
	const uint8_t *p = msg + *off;
	uint16_t rdlen = get16(p + 8);
	if (*off + 10 + rdlen > len)
		return -EINVAL;
	*is_a = get16(p) == TYPE_A && get16(p + 2) == CLASS_IN;
	if (*is_a) {
		if (rdlen != 4)
			return -EINVAL;
		*addr = get32(p + 10);
		/* RFC 2181 8: a TTL with the top bit set is read as zero */
		*ttl = get32(p + 4) & 0x80000000u ? 0 : get32(p + 4);
	}
	*off += 10 + (size_t)rdlen;
	return 0;
}

int net_dns_answer_a(const uint8_t *msg, size_t len, uint32_t *addrs, size_t max, uint32_t *min_ttl)
{
	if (len < HDR_LEN)
		return -EINVAL;
	size_t off = HDR_LEN, n = 0;
	for (unsigned i = get16(msg + 4); i > 0; i--)
		if (read_name(msg, len, &off, NULL, true) < 0 || (off += 4) > len)
			return -EINVAL;
	uint32_t min = UINT32_MAX;
	for (unsigned i = get16(msg + 6); i > 0; i--) {
		bool is_a;
		uint32_t addr, ttl;
		if (read_rr(msg, len, &off, &is_a, &addr, &ttl) < 0)
			return -EINVAL;
		if (!is_a)
			continue;
		if (n < max)
			addrs[n++] = addr;
		if (ttl < min)
			min = ttl;
	}
	*min_ttl = n ? min : 0;
	return (int)n;
}

/* An output buffer that remembers running out of room rather than writing past it. */
struct out {
	uint8_t *p;
	size_t len, cap;
	bool full;
};

static void emit(struct out *o, const void *d, size_t n)
{
	if (o->full || n > o->cap - o->len) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, d, n);
	o->len += n;
}

/* Reads the name at *off (pointers followed) and writes it out in full. */
static int copy_name(const uint8_t *msg, size_t len, size_t *off, struct out *o)
{
	struct wire_name w = { .len = 0 };
	if (read_name_wire(msg, len, off, NULL, true, &w) < 0)
		return -EINVAL;
	emit(o, w.b, w.len);
	return 0;
}

/*
 * The types whose data holds names that may be compressed (RFC 3597 4: those of RFC 1035,
 * and a few later ones that old servers compress): a fixed prefix, then names, then the rest
 * as it is. The data of every other type is copied as it is (compression is forbidden there).
 */
static const struct {
	uint16_t type;
	uint8_t prefix, names;
} name_data[] = {
	{ 2, 0, 1 },  /* NS */ { 3, 0, 1 },	/* MD */ { 4, 0, 1 },  /* MF */
	{ 5, 0, 1 },  /* CNAME */ { 6, 0, 2 },	/* SOA */ { 7, 0, 1 }, /* MB */
	{ 8, 0, 1 },  /* MG */ { 9, 0, 1 },	/* MR */ { 12, 0, 1 }, /* PTR */
	{ 14, 0, 2 }, /* MINFO */ { 15, 2, 1 }, /* MX */ { 17, 0, 2 }, /* RP */
	{ 18, 2, 1 }, /* AFSDB */ { 21, 2, 1 }, /* RT */ { 33, 6, 1 }, /* SRV */
	{ 36, 2, 1 }, /* KX */ { 39, 0, 1 },			       /* DNAME */
};

/* Copies the data of a record of type (at..at+rdlen of msg) with its names in full. */
static int copy_data(const uint8_t *msg, size_t len, size_t at, size_t rdlen, uint16_t type,
		     struct out *o)
{
	size_t end = at + rdlen, off = at;
	for (size_t i = 0; i < ARRAY_SIZE(name_data); i++) {
		if (name_data[i].type != type)
			continue;
		if (name_data[i].prefix > rdlen)
			return -EINVAL;
		emit(o, msg + off, name_data[i].prefix);
		off += name_data[i].prefix;
		for (unsigned k = 0; k < name_data[i].names; k++)
			if (copy_name(msg, len, &off, o) < 0 || off > end)
				return -EINVAL;
		break;
	}
	emit(o, msg + off, end - off);
	return 0;
}

/*
 * Whether the record at p (type, class, TTL, rdlength, data) leaves the answer: an IN A whose
 * address drop() refuses, an IN AAAA mapping such an IPv4 address (::ffff:a.b.c.d, which a
 * dual-stack socket reaches over IPv4), and any other record whose type's low byte is A's or
 * AAAA's, whatever its class: musl's resolver reads only that byte and never the class, so
 * class CH type 1 and type 0x0101 (CAA) carrying 10.89.0.1 were addresses to it. -EINVAL for
 * an IN A that holds no address (as net_dns_answer_a: no address, no answer).
 */
static int drops_rr(const uint8_t *p, size_t rdlen, const struct net_dns_drop *d)
{
	uint16_t type = get16(p), class = get16(p + 2);
	if (type == TYPE_A && class == CLASS_IN)
		return rdlen != 4 ? -EINVAL : d->drop(get32(p + 10), d->arg);
	static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };
	if (type == TYPE_AAAA && class == CLASS_IN)
		return rdlen == 16 && !memcmp(p + 10, v4_mapped, 12) &&
		       d->drop(get32(p + 22), d->arg);
	return (type & 0xff) == TYPE_A || (type & 0xff) == TYPE_AAAA;
}

/* One record at *off, unless drops_rr() says it goes (then *dropped grows). */
static int copy_rr(const uint8_t *msg, size_t len, size_t *off, const struct net_dns_drop *d,
		   struct out *o, unsigned *dropped, bool *kept)
{
	struct wire_name w = { .len = 0 };
	if (read_name_wire(msg, len, off, NULL, true, &w) < 0 || *off + 10 > len)
		return -EINVAL;
	const uint8_t *p = msg + *off;
	size_t rdlen = get16(p + 8), at = *off + 10;
	if (at + rdlen > len)
		return -EINVAL;
	*off = at + rdlen;
	int drop = drops_rr(p, rdlen, d);
	if (drop < 0)
		return drop;
	*kept = !drop;
	if (!*kept) {
		(*dropped)++;
		return 0;
	}
	emit(o, w.b, w.len);
	emit(o, p, 8); /* type, class, TTL */
	size_t len_at = o->len;
	emit(o, p + 8, 2);
	if (copy_data(msg, len, at, rdlen, get16(p), o) < 0)
		return -EINVAL;
	if (!o->full && o->len - len_at - 2 > 0xffff)
		return -EINVAL;
	if (!o->full)
		put16(o->p + len_at, (uint16_t)(o->len - len_at - 2));
	return 0;
}

ssize_t net_dns_drop_a(const uint8_t *msg, size_t len, const struct net_dns_drop *d, uint8_t *out,
		       size_t cap, unsigned *dropped)
{
	*dropped = 0;
	if (len < HDR_LEN || cap < HDR_LEN)
		return -EINVAL;
	struct out o = { out, 0, cap, false };
	emit(&o, msg, HDR_LEN);
	size_t off = HDR_LEN;
	for (unsigned i = get16(msg + 4); i > 0; i--) {
		if (copy_name(msg, len, &off, &o) < 0 || off + 4 > len)
			return -EINVAL;
		emit(&o, msg + off, 4);
		off += 4;
	}
	if (o.full)
		return -ENOSPC;
	size_t question_end = o.len;
	for (unsigned s = 0; s < 3; s++) {
		unsigned kept = 0;
		for (unsigned i = get16(msg + 6 + 2 * s); i > 0; i--) {
			bool k;
			if (copy_rr(msg, len, &off, d, &o, dropped, &k) < 0)
				return -EINVAL;
			kept += k;
		}
		put16(out + 6 + 2 * s, (uint16_t)kept);
	}
	if (!*dropped)
		return 0;
	if (o.full) { /* names written in full took more room: the client asks again over TCP */
		memset(out + 6, 0, 6);
		put16(out + 2, get16(out + 2) | FLAG_TC);
		return (ssize_t)question_end;
	}
	return (ssize_t)o.len;
}

bool net_dns_name_match(const char *pattern, const char *name)
{
	if (pattern[0] != '*' || pattern[1] != '.')
		return ascii_eq(pattern, name);
	const char *suffix = pattern + 2;
	size_t sl = strlen(suffix), nl = strlen(name);
	/* strictly below: at least one label, then the dot, then the suffix */
	return sl && nl > sl + 1 && name[nl - sl - 1] == '.' && ascii_eq(suffix, name + nl - sl);
}

int net_dns_pattern_parse(const char *in, char out[NET_DNS_NAME_MAX], struct hutch_err *err)
{
	size_t n = 0, label = 0;
	const char *p = in;
	if (strlen(in) > NET_DNS_NAME_MAX - 1)
		return hutch_fail(err, EINVAL, "dns pattern %.64s...: longer than 253 characters",
				  in);
	if (p[0] == '*' && p[1] == '.') {
		memcpy(out, "*.", 2);
		n = 2;
		p += 2;
	}
	for (;; p++) {
		char c = lower(*p);
		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63)
				return hutch_fail(
					err, EINVAL,
					"dns pattern %s: a label must be 1 to 63 characters "
					"(\"*.\" may only lead)",
					in);
			if (c == '\0')
				break;
			label = 0;
		} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			     c == '_')) {
			return hutch_fail(
				err, EINVAL,
				"dns pattern %s: a label may hold only a-z, 0-9, '-' and '_'", in);
		} else {
			label++;
		}
		out[n++] = c;
	}
	out[n] = '\0';
	return 0;
}
