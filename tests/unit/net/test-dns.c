// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the DNS policy forwarder: the wire format on hand-built packets (queries,
 * empty replies, A records behind compression pointers, loops and pointers out of bounds),
 * name patterns, and the serving loop against a fake upstream on 127.0.0.1, in forked
 * processes. No root and no network are needed.
 */
#include "tap.h"
#include "net-egress.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

/* Appends name (dotted) in wire form; returns the new length. */
static size_t put_name(uint8_t *b, size_t n, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);
		b[n++] = (uint8_t)l;
		memcpy(b + n, name, l);
		n += l;
		name += l + (dot ? 1 : 0);
	}
	b[n++] = 0;
	return n;
}

static size_t put16(uint8_t *b, size_t n, uint16_t v)
{
	b[n] = (uint8_t)(v >> 8);
	b[n + 1] = (uint8_t)v;
	return n + 2;
}

static size_t header(uint8_t *b, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an)
{
	memset(b, 0, 12);
	put16(b, 0, id);
	put16(b, 2, flags);
	put16(b, 4, qd);
	put16(b, 6, an);
	return 12;
}

static size_t query(uint8_t *b, uint16_t id, const char *name, uint16_t qtype)
{
	size_t n = header(b, id, 0x0100, 1, 0);
	n = put_name(b, n, name);
	n = put16(b, n, qtype);
	return put16(b, n, 1);
}

/* An A record whose owner is a pointer to offset at; addr a.b.c.d given as 32 bits. */
static size_t rr_a(uint8_t *b, size_t n, uint16_t at, uint32_t ttl, uint32_t addr)
{
	n = put16(b, n, (uint16_t)(0xc000 | at));
	n = put16(b, n, 1);
	n = put16(b, n, 1);
	n = put16(b, n, (uint16_t)(ttl >> 16));
	n = put16(b, n, (uint16_t)ttl);
	n = put16(b, n, 4);
	n = put16(b, n, (uint16_t)(addr >> 16));
	return put16(b, n, (uint16_t)addr);
}

static void test_parse_query(void)
{
	uint8_t b[600];
	char name[NET_DNS_NAME_MAX];
	uint16_t t, c;
	size_t n = query(b, 0x1234, "WWW.Example.COM", 28);
	ok(net_dns_parse_query(b, n, name, &t, &c) == 0 && !strcmp(name, "www.example.com") &&
		   t == 28 && c == 1,
	   "query: lowercased name, type and class (%s)", name);
	n = query(b, 1, "", 2);
	ok(net_dns_parse_query(b, n, name, &t, &c) == 0 && !strcmp(name, ""), "root name is \"\"");
	for (size_t cut = 0; cut < query(b, 1, "a.example", 1); cut++)
		if (net_dns_parse_query(b, cut, name, &t, &c) == 0) {
			ok(0, "truncated at %zu accepted", cut);
			goto next;
		}
	ok(1, "every truncation of a query refused");
next:
	n = query(b, 1, "a.b", 1);
	b[2] |= 0x80;
	ok(net_dns_parse_query(b, n, name, &t, &c) == -EINVAL, "QR=1 refused");
	n = query(b, 1, "a.b", 1);
	b[2] |= 0x28; /* opcode 5, UPDATE */
	ok(net_dns_parse_query(b, n, name, &t, &c) == -EINVAL, "opcode UPDATE refused");
	n = query(b, 1, "a.b", 1);
	b[5] = 2;
	ok(net_dns_parse_query(b, n, name, &t, &c) == -EINVAL, "QDCOUNT 2 refused");
	n = query(b, 1, "a.b", 1);
	b[5] = 0;
	ok(net_dns_parse_query(b, n, name, &t, &c) == -EINVAL, "QDCOUNT 0 refused");

	/* a question of one label, then a pointer back into the header */
	n = header(b, 1, 0, 1, 0);
	b[n++] = 1, b[n++] = 'a';
	n = put16(b, n, 0xc000);
	n = put16(b, n, 1);
	n = put16(b, n, 1);
	ok(net_dns_parse_query(b, n, name, &t, &c) == -EINVAL, "compressed question refused");

	char label[80];
	memset(label, 'x', 64);
	label[64] = '\0';
	n = query(b, 1, label, 1);
	ok(net_dns_parse_query(b, n, name, &t, &c) == -EINVAL, "label of 64 refused");
	label[63] = '\0';
	n = query(b, 1, label, 1);
	ok(net_dns_parse_query(b, n, name, &t, &c) == 0, "label of 63 accepted");

	/* 63+1+63+1+63+1+61 = 253 characters, then one more */
	char big[400];
	snprintf(big, sizeof(big), "%s.%s.%s.%.61s", label, label, label, label);
	n = query(b, 1, big, 1);
	ok(strlen(big) == 253 && net_dns_parse_query(b, n, name, &t, &c) == 0 && !strcmp(name, big),
	   "name of 253 accepted");
	snprintf(big, sizeof(big), "%s.%s.%s.%.62s", label, label, label, label);
	n = query(b, 1, big, 1);
	ok(net_dns_parse_query(b, n, name, &t, &c) == -EINVAL, "name of 254 refused");
	n = query(b, 1, "a\x01.b", 1);
	ok(net_dns_parse_query(b, n, name, &t, &c) == -EINVAL, "control byte in a label refused");
	n = header(b, 1, 0, 1, 0);
	memcpy(b + n,
	       "\x03"
	       "a.b"
	       "\x03"
	       "com"
	       "\0\0\1\0\1",
	       13);
	ok(net_dns_parse_query(b, n + 13, name, &t, &c) == -EINVAL, "'.' inside a label refused");
}

static void test_reply_empty(void)
{
	uint8_t q[128], r[128];
	size_t n = query(q, 0xbeef, "x.example.com", 1);
	q[11] = 1; /* an OPT record would follow: the reply must not claim it */
	ssize_t rl = net_dns_reply_empty(q, n, 5, r, sizeof(r));
	ok(rl == (ssize_t)n, "reply length %zd: header and question", rl);
	ok(r[0] == 0xbe && r[1] == 0xef && r[2] == 0x81 && r[3] == 0x85, "ID, QR RD, RA REFUSED");
	ok(r[5] == 1 && !r[6] && !r[7] && !r[9] && !r[11], "counts 1 0 0 0");
	q[11] = 0;
	ok(net_dns_same_question(q, n, r, (size_t)rl), "it answers the query's question");
	q[2] = 0; /* RD clear */
	ok(net_dns_reply_empty(q, n, 2, r, sizeof(r)) > 0 && r[2] == 0x80 && r[3] == 0x82,
	   "SERVFAIL, RD clear kept clear");
	ok(net_dns_reply_empty(q, n, 2, r, n - 1) == -EINVAL, "too small a buffer");
	ok(net_dns_reply_empty(q, n, 16, r, sizeof(r)) == -EINVAL, "rcode 16");
	ok(net_dns_reply_empty(q, 11, 2, r, sizeof(r)) == -EINVAL, "no header");
	ok(net_dns_reply_empty(q, n, 2, q, sizeof(q)) == (ssize_t)n && q[2] == 0x80,
	   "in place (out == q)");
}

static void test_same_question(void)
{
	uint8_t q[128], r[128];
	size_t n = query(q, 7, "a.example.com", 1);
	size_t m = query(r, 7, "A.EXAMPLE.com", 1);
	r[2] |= 0x80;
	ok(net_dns_same_question(q, n, r, m), "same question, other case");
	r[1] = 8;
	ok(!net_dns_same_question(q, n, r, m), "other ID");
	m = query(r, 7, "b.example.com", 1);
	r[2] |= 0x80;
	ok(!net_dns_same_question(q, n, r, m), "other name");
	m = query(r, 7, "a.example.com", 28);
	r[2] |= 0x80;
	ok(!net_dns_same_question(q, n, r, m), "other type");
	m = query(r, 7, "a.example.com", 1);
	ok(!net_dns_same_question(q, n, r, m), "a query is no answer (QR=0)");
}

/* www.example.com CNAME cdn.example.net, then two A records for the latter. */
static size_t cname_answer(uint8_t *b, uint32_t ttl1, uint32_t ttl2)
{
	size_t n = header(b, 9, 0x8180, 1, 3);
	n = put_name(b, n, "www.example.com");
	n = put16(b, n, 1);
	n = put16(b, n, 1);
	n = put16(b, n, 0xc00c); /* www.example.com */
	n = put16(b, n, 5);
	n = put16(b, n, 1);
	n = put16(b, n, 0);
	n = put16(b, n, 600);
	size_t rdlen_at = n;
	n += 2;
	size_t target = n;
	b[n++] = 3;
	memcpy(b + n, "cdn", 3);
	n += 3;
	b[n++] = 7;
	memcpy(b + n, "example", 7);
	n += 7;
	b[n++] = 3;
	memcpy(b + n, "net", 3);
	n += 3;
	b[n++] = 0;
	put16(b, rdlen_at, (uint16_t)(n - target));
	n = rr_a(b, n, (uint16_t)target, ttl1, 0xc0000201);
	return rr_a(b, n, (uint16_t)target, ttl2, 0xc0000202);
}

static void test_answer_a(void)
{
	uint8_t b[512] = { 0 };
	uint32_t addrs[8], ttl = 1;
	size_t n = cname_answer(b, 300, 60);
	int r = net_dns_answer_a(b, n, addrs, 8, &ttl);
	ok(r == 2 && addrs[0] == 0xc0000201 && addrs[1] == 0xc0000202,
	   "CNAME chain, then two A records: %d", r);
	ok(ttl == 60, "smallest TTL: %u", ttl);
	ok(net_dns_answer_a(b, n, addrs, 1, &ttl) == 1 && addrs[0] == 0xc0000201, "max 1 stores 1");
	n = cname_answer(b, 0x80000000u, 60);
	ok(net_dns_answer_a(b, n, addrs, 8, &ttl) == 2 && ttl == 0,
	   "a TTL with the top bit set counts as 0");
	for (size_t cut = 12; cut < n; cut++)
		if (net_dns_answer_a(b, cut, addrs, 8, &ttl) >= 0) {
			ok(0, "truncated at %zu accepted", cut);
			goto next;
		}
	ok(1, "every truncation of an answer refused");
next:
	n = header(b, 1, 0x8180, 0, 0);
	ok(net_dns_answer_a(b, n, addrs, 8, &ttl) == 0 && ttl == 0, "no answer: 0, TTL 0");

	/* the owner of the answer points at itself */
	n = query(b, 1, "a.b", 1);
	b[7] = 1;
	size_t self = n;
	n = rr_a(b, n, (uint16_t)self, 5, 1);
	ok(net_dns_answer_a(b, n, addrs, 8, &ttl) == -EINVAL, "pointer to itself");
	/* two pointers pointing at each other: the first at the second, forwards */
	n = query(b, 1, "a.b", 1);
	b[7] = 1;
	size_t at = n;
	n = put16(b, n, (uint16_t)(0xc000 | (at + 2)));
	n = put16(b, n, (uint16_t)(0xc000 | at));
	n = put16(b, n, 1);
	n = put16(b, n, 1);
	n += 4;
	n = put16(b, n, 4);
	n += 4;
	ok(net_dns_answer_a(b, n, addrs, 8, &ttl) == -EINVAL, "pointer loop");
	/* a label run that leads back to the pointer which jumped to it */
	n = query(b, 1, "a.b", 1);
	b[7] = 1;
	at = n;
	b[n++] = 1, b[n++] = 'x';
	n = put16(b, n, (uint16_t)(0xc000 | at));
	ok(net_dns_answer_a(b, n + 14, addrs, 8, &ttl) == -EINVAL, "loop through a label");
	n = query(b, 1, "a.b", 1);
	b[7] = 1;
	n = rr_a(b, n, 0x3fff, 5, 1);
	ok(net_dns_answer_a(b, n, addrs, 8, &ttl) == -EINVAL, "pointer past the end");
	n = query(b, 1, "a.b", 1);
	b[7] = 1;
	n = rr_a(b, n, 12, 5, 1);
	b[n - 5] = 5; /* rdlength 5 for an A record */
	ok(net_dns_answer_a(b, n + 1, addrs, 8, &ttl) == -EINVAL, "A record of 5 bytes");
	n = query(b, 1, "a.b", 1);
	b[7] = 2; /* ANCOUNT 2, one record */
	n = rr_a(b, n, 12, 5, 1);
	ok(net_dns_answer_a(b, n, addrs, 8, &ttl) == -EINVAL, "ANCOUNT past the end");
}

static bool drop_201(uint32_t a, void *arg)
{
	(void)arg;
	return a == 0xc0000201;
}

static bool drop_all(uint32_t a, void *arg)
{
	(void)a, (void)arg;
	return true;
}

static bool drop_none(uint32_t a, void *arg)
{
	(void)a, (void)arg;
	return false;
}

/* How many times name (wire form, len bytes with the root) is in b[0..n). */
static int count_of(const uint8_t *b, size_t n, const char *name, size_t len)
{
	int k = 0;
	for (const uint8_t *p = b; (p = memmem(p, n - (size_t)(p - b), name, len)); p++)
		k++;
	return k;
}

static void test_drop_a(void)
{
	uint8_t b[512] = { 0 }, out[512];
	uint32_t addrs[8], ttl;
	unsigned dropped = 9;
	size_t n = cname_answer(b, 300, 60);
	struct net_dns_drop none = { drop_none, NULL }, d201 = { drop_201, NULL },
			    all = { drop_all, NULL };
	ok(net_dns_drop_a(b, n, &none, out, sizeof(out), &dropped) == 0 && dropped == 0,
	   "nothing to drop: 0, the message stands");
	ssize_t m = net_dns_drop_a(b, n, &d201, out, sizeof(out), &dropped);
	ok(m > 0 && dropped == 1 && out[7] == 2, "one A dropped, CNAME and the other kept");
	ok(m > 0 && net_dns_answer_a(out, (size_t)m, addrs, 8, &ttl) == 1 &&
		   addrs[0] == 0xc0000202 && ttl == 60,
	   "the rebuilt answer reads: %zd bytes", m);
	ok(m > 0 && net_dns_same_question(b, n, out, (size_t)m), "same header and question");
	/* The kept A's owner pointed into the CNAME's data: it is written out in full. */
	static const char cdn[] = "\x03"
				  "cdn\x07"
				  "example\x03"
				  "net";
	ok(m > 0 && count_of(out, (size_t)m, cdn, sizeof(cdn)) == 2,
	   "names in full: the CNAME's target and the A's owner");
	m = net_dns_drop_a(b, n, &all, out, sizeof(out), &dropped);
	ok(m > 0 && dropped == 2 && out[7] == 1 &&
		   net_dns_answer_a(out, (size_t)m, addrs, 8, &ttl) == 0,
	   "both dropped: the CNAME alone");
	for (size_t cut = 12; cut < n; cut++)
		if (net_dns_drop_a(b, cut, &all, out, sizeof(out), &dropped) >= 0) {
			ok(0, "truncated at %zu accepted", cut);
			goto next;
		}
	ok(1, "every truncation refused");
next:
	/* Too little room for names written in full: header and question, TC. */
	m = net_dns_drop_a(b, n, &d201, out, 40, &dropped);
	ok(m == 33 && (out[2] & 0x02) && !out[7] && !out[9] && !out[11] && dropped == 1,
	   "no room: TC, the question alone (%zd)", m);
	ok(net_dns_drop_a(b, n, &d201, out, 20, &dropped) == -ENOSPC, "no room for the question");

	/* An A in the additional section (glue for a name the answer holds) goes too. */
	n = query(b, 3, "mx.test", 15);
	b[2] |= 0x80;
	b[7] = 1;
	b[11] = 1;
	n = put16(b, n, 0xc00c); /* mx.test MX 10 mail.mx.test */
	n = put16(b, n, 15);
	n = put16(b, n, 1);
	n = put16(b, n, 0);
	n = put16(b, n, 60);
	n = put16(b, n, 9);
	n = put16(b, n, 10);
	size_t mail = n;
	b[n++] = 4;
	memcpy(b + n, "mail", 4);
	n += 4;
	n = put16(b, n, 0xc00c);
	n = rr_a(b, n, (uint16_t)mail, 60, 0xc0000201);
	m = net_dns_drop_a(b, n, &d201, out, sizeof(out), &dropped);
	static const char full[] = "\x04"
				   "mail\x02"
				   "mx\x04"
				   "test";
	ok(m > 0 && dropped == 1 && out[7] == 1 && out[11] == 0 &&
		   count_of(out, (size_t)m, full, sizeof(full)) == 1,
	   "additional A dropped; the MX's exchange written in full");
}

/* A record of type and class whose owner points to the question, with rdlen bytes of data. */
static size_t rr_raw(uint8_t *b, size_t n, uint16_t type, uint16_t class, const void *data,
		     uint16_t rdlen)
{
	n = put16(b, n, 0xc00c);
	n = put16(b, n, type);
	n = put16(b, n, class);
	n = put16(b, n, 0);
	n = put16(b, n, 60);
	n = put16(b, n, rdlen);
	memcpy(b + n, data, rdlen);
	return n + rdlen;
}

static bool drop_gw(uint32_t a, void *arg)
{
	(void)arg;
	return a == 0x0a590001; /* 10.89.0.1 */
}

/* musl reads a record's type by its low byte alone and ignores its class: class CH type 1,
 * and type 0x0101 (CAA), carrying 4 bytes, are A records to it; glibc reads them as they are.
 * An IPv4-mapped AAAA (::ffff:a.b.c.d) is an IPv4 address to a dual-stack socket. */
static void test_drop_musl(void)
{
	static const uint8_t gw[4] = { 10, 89, 0, 1 }, ok4[4] = { 192, 0, 2, 10 };
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 10, 89, 0, 1 };
	static const uint8_t mapped_ok[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 10 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	uint8_t b[512] = { 0 }, out[512];
	unsigned dropped = 0;
	size_t n = query(b, 4, "rebind.test", 1);
	b[2] |= 0x80;
	n = rr_raw(b, n, 1, 3, gw, 4);		 /* class CH, type A */
	n = rr_raw(b, n, 0x0101, 1, gw, 4);	 /* type 257 (low byte 1), class IN */
	n = rr_raw(b, n, 0x011c, 1, mapped, 16); /* type 284 (low byte 28) */
	n = rr_raw(b, n, 28, 1, mapped, 16);	 /* IN AAAA ::ffff:10.89.0.1 */
	n = rr_raw(b, n, 1, 1, ok4, 4);		 /* IN A 192.0.2.10: kept */
	n = rr_raw(b, n, 28, 1, v6, 16);	 /* IN AAAA 2001:db8::1: kept */
	n = rr_raw(b, n, 28, 1, mapped_ok, 16);	 /* IN AAAA ::ffff:192.0.2.10: kept */
	b[7] = 7;
	struct net_dns_drop d = { drop_gw, NULL };
	ssize_t m = net_dns_drop_a(b, n, &d, out, sizeof(out), &dropped);
	ok(m > 0 && dropped == 4 && out[7] == 3,
	   "A/AAAA look-alikes of another class or type, and a mapped AAAA the judge drops, go "
	   "(%u dropped, %u kept)",
	   dropped, m > 0 ? out[7] : 0);
	ok(m > 0 && !memmem(out, (size_t)m, gw, 4), "10.89.0.1 is nowhere in the answer");
	uint32_t addrs[4], ttl;
	ok(m > 0 && net_dns_answer_a(out, (size_t)m, addrs, 4, &ttl) == 1 &&
		   addrs[0] == 0xc000020a && memmem(out, (size_t)m, v6, 16) &&
		   memmem(out, (size_t)m, mapped_ok, 16),
	   "the IN A, the AAAA and the mapped AAAA the judge keeps stay");
}

static void test_patterns(void)
{
	char out[NET_DNS_NAME_MAX];
	struct hutch_err err = { 0 };
	ok(net_dns_pattern_parse("Example.COM", out, &err) == 0 && !strcmp(out, "example.com"),
	   "pattern lowercased: %s", out);
	ok(net_dns_pattern_parse("*.a_b-1.example", out, &err) == 0 &&
		   !strcmp(out, "*.a_b-1.example"),
	   "wildcard pattern: %s", out);
	static const char *const bad[] = {
		"*",	"*.",	"a.*.b", "a*.b", "",	".",	  "a..b",
		"a.b.", ".a.b", "a b",	 "ä.b",	 "a/b", "**.a.b", "*.*.a"
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		hutch_err_clear(&err);
		ok(net_dns_pattern_parse(bad[i], out, &err) == -EINVAL && strstr(err.msg, bad[i]),
		   "pattern \"%s\" refused: %s", bad[i], err.msg);
	}
	char label[70];
	memset(label, 'a', 64);
	label[64] = '\0';
	ok(net_dns_pattern_parse(label, out, &err) == -EINVAL, "label of 64 refused");
	char big[300];
	memset(big, 'a', 299);
	big[299] = '\0';
	for (size_t i = 50; i < 299; i += 50)
		big[i] = '.';
	ok(net_dns_pattern_parse(big, out, &err) == -EINVAL && strstr(err.msg, "253"),
	   "299 characters refused: %s", err.msg);

	ok(net_dns_name_match("example.com", "example.com"), "exact");
	ok(net_dns_name_match("example.com", "EXAMPLE.com"), "exact, any case");
	ok(!net_dns_name_match("example.com", "www.example.com"), "exact is not a wildcard");
	ok(!net_dns_name_match("example.com", "example.co"), "exact: shorter");
	ok(net_dns_name_match("*.example.com", "www.example.com"), "wildcard, one label");
	ok(net_dns_name_match("*.example.com", "a.b.c.Example.Com"),
	   "wildcard, any depth and case");
	ok(!net_dns_name_match("*.example.com", "example.com"), "wildcard: not the apex");
	ok(!net_dns_name_match("*.example.com", "badexample.com"), "wildcard: label boundary");
	ok(!net_dns_name_match("*.example.com", ".example.com"), "wildcard: empty label");
	ok(!net_dns_name_match("*.example.com", "example.com.evil"), "wildcard: suffix only");
	ok(!net_dns_name_match("*.example.com", ""), "wildcard: root");
}

/* ---- the forwarder, against a fake upstream on 127.0.0.1 ---- */

static int bind_lo(int type, uint16_t port)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 8) < 0))
		return -1;
	return fd;
}

static uint16_t port_of(int fd)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &l);
	return ntohs(a.sin_port);
}

/* The fake upstream's answer to query q (in b, n bytes): two A records, TTL 300 and 60; 0 for
 * "slow.example.com", which gets none. */
static size_t fake_answer(uint8_t *b, size_t n)
{
	char name[NET_DNS_NAME_MAX];
	uint16_t t, c;
	if (net_dns_parse_query(b, n, name, &t, &c) < 0 || !strcmp(name, "slow.example.com"))
		return 0;
	b[2] |= 0x80;
	b[3] |= 0x80;
	b[7] = 2;
	n = rr_a(b, n, 12, 300, 0x0a000001);
	return rr_a(b, n, 12, 60, 0x0a000002);
}

/* What the fake upstream saw, written to the test over a pipe (the lab's seen_up). */
struct up_seen {
	char kind; /* 'u': a UDP query from port; 'r', 'e': a TCP connection ended by a reset, EOF */
	uint16_t port;
};
static int up_seen_w = -1;

static void up_note(char kind, uint16_t port)
{
	struct up_seen u = { kind, port };
	if (up_seen_w >= 0)
		(void)!write(up_seen_w, &u, sizeof(u)); /* non-blocking: a full pipe drops it */
}

static void fake_tcp_client(int fd)
{
	uint8_t b[1024];
	int end = 0;
	while ((end = (int)hutch_read_all(fd, b, 2)) == 2) {
		size_t len = (size_t)(b[0] << 8 | b[1]);
		if (len > 900 || hutch_read_all(fd, b + 2, len) != (ssize_t)len)
			break;
		size_t n = fake_answer(b + 2, len);
		b[0] = (uint8_t)(n >> 8);
		b[1] = (uint8_t)n;
		if (n && hutch_write_all(fd, b, n + 2) < 0)
			break;
	}
	up_note(end < 0 && errno == ECONNRESET ? 'r' : 'e', 0);
	close(fd);
}

/* Answers over UDP and TCP until killed; "forged.example.com" first gets an answer with
 * another ID, which the forwarder must drop. */
static void fake_upstream(int udp, int tcp)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = udp, .events = POLLIN },
				       { .fd = tcp, .events = POLLIN } };
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			fake_tcp_client(accept4(tcp, NULL, NULL, SOCK_CLOEXEC));
		if (!p[0].revents)
			continue;
		uint8_t b[1024];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(udp, b, 900, 0, (struct sockaddr *)&from, &fl);
		if (n > 0)
			up_note('u', ntohs(from.sin_port));
		size_t m = n > 0 ? fake_answer(b, (size_t)n) : 0;
		if (!m)
			continue;
		if (memmem(b, m,
			   "\x06"
			   "forged",
			   7)) {
			b[0] ^= 0x55;
			sendto(udp, b, m, 0, (struct sockaddr *)&from, fl);
			b[0] ^= 0x55;
		}
		sendto(udp, b, m, 0, (struct sockaddr *)&from, fl);
	}
}

/* What on_answer saw, sent from the forwarder's process to the test's over a pipe. */
struct seen {
	char name[64];
	bool matched;
	uint32_t n, ttl, addrs[4];
};

static int on_answer(const char *name, bool matched, const uint32_t *addrs, size_t n, uint32_t ttl,
		     void *arg)
{
	struct seen s = { .matched = matched, .n = (uint32_t)n, .ttl = ttl };
	snprintf(s.name, sizeof(s.name), "%s", name);
	memcpy(s.addrs, addrs, (n < 4 ? n : 4) * sizeof(*addrs));
	hutch_write_all(*(int *)arg, &s, sizeof(s));
	return strcmp(name, "deny.example.com") ? 0 : -EPERM; /* say, nft failed */
}

struct lab {
	pid_t upstream_pid, fwd_pid;
	int stop_w, seen_r, stats_r, up_r;
	uint16_t udp_port, tcp_port;
	bool open;   /* not restricted: every name is forwarded */
	bool rebind; /* 10.0.0.1 is removed from answers */
	unsigned tcp_per_s, tcp_burst;
};

static bool drop_first(uint32_t a, void *arg)
{
	(void)arg;
	return a == 0x0a000001;
}

static size_t count_fds(void)
{
	size_t n = 0;
	DIR *d = opendir("/proc/self/fd");
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void run_forwarder(const struct lab *l, int udp, int tcp, int stop_r, int seen_w,
			  int stats_w, uint16_t up_port)
{
	bool open = l->open;
	static const char *const patterns[] = { "*.example.com", "ok.test" };
	static const uint32_t ups[] = { 0x7f000001, 0x7f000001 };
	struct net_dns_fwd f = { .udp_fd = udp,
				 .tcp_fd = tcp,
				 .stop_fd = stop_r,
				 .upstream = ups,
				 .n_upstream = 2,
				 .upstream_port = up_port,
				 .restricted = !open,
				 .patterns = patterns,
				 .n_patterns = 2,
				 .drop_addr = l->rebind ? drop_first : NULL,
				 .on_answer = on_answer,
				 .arg = &seen_w,
				 .timeout_ms = 300,
				 .tcp_per_s = l->tcp_per_s,
				 .tcp_burst = l->tcp_burst };
	struct net_dns_stats st = { 0 };
	struct hutch_err err = { 0 };
	size_t fds = count_fds();
	int r = net_dns_fwd_run(&f, &st, &err);
	if (r < 0)
		fprintf(stderr, "# forwarder: %s\n", err.msg);
	hutch_write_all(stats_w, &st, sizeof(st));
	_exit(r < 0 ? 1 : count_fds() != fds ? 2 : 0); /* 2: it leaked a socket */
}

static bool lab_start(struct lab *l)
{
	/* The upstream first: it must not hold the pipes' write ends, or no hang-up is seen. */
	int uu = bind_lo(SOCK_DGRAM, 0);
	int ut = uu >= 0 ? bind_lo(SOCK_STREAM, port_of(uu)) : -1;
	if (ut < 0)
		return false;
	uint16_t up_port = port_of(uu);
	int up[2];
	if (pipe2(up, O_CLOEXEC | O_NONBLOCK) < 0)
		return false;
	if ((l->upstream_pid = fork()) == 0) {
		close(up[0]);
		up_seen_w = up[1];
		fake_upstream(uu, ut);
	}
	close(uu), close(ut), close(up[1]);
	l->up_r = up[0];
	int fu = bind_lo(SOCK_DGRAM, 0), ft = bind_lo(SOCK_STREAM, 0);
	int stop[2], seen[2], stats[2];
	if (l->upstream_pid < 0 || fu < 0 || ft < 0 || pipe2(stop, O_CLOEXEC) ||
	    pipe2(seen, O_CLOEXEC) || pipe2(stats, O_CLOEXEC))
		return false;
	l->udp_port = port_of(fu);
	l->tcp_port = port_of(ft);
	if ((l->fwd_pid = fork()) == 0) {
		close(stop[1]);
		run_forwarder(l, fu, ft, stop[0], seen[1], stats[1], up_port);
	}
	close(fu), close(ft);
	close(stop[0]), close(seen[1]), close(stats[1]);
	l->stop_w = stop[1];
	l->seen_r = seen[0];
	l->stats_r = stats[0];
	return l->fwd_pid > 0;
}

static struct sockaddr_in lo_addr(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* Sends msg to the forwarder over UDP; the reply's length, or -1 after wait_ms. */
static ssize_t ask_udp(const struct lab *l, const uint8_t *msg, size_t len, uint8_t *reply,
		       int wait_ms)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = lo_addr(l->udp_port);
	ssize_t n = -1;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (sendto(fd, msg, len, 0, (struct sockaddr *)&a, sizeof(a)) == (ssize_t)len &&
	    poll(&p, 1, wait_ms) == 1)
		n = recv(fd, reply, 4096, 0);
	close(fd);
	return n;
}

static unsigned rcode(const uint8_t *r)
{
	return r[3] & 0xf;
}

static bool read_seen(const struct lab *l, struct seen *s)
{
	struct pollfd p = { .fd = l->seen_r, .events = POLLIN };
	return poll(&p, 1, 1000) == 1 && hutch_read_all(l->seen_r, s, sizeof(*s)) == sizeof(*s);
}

static void test_fwd_udp(const struct lab *l)
{
	uint8_t q[512], r[4096];
	uint32_t addrs[4], ttl;
	struct seen s;
	size_t n = query(q, 0x4242, "WWW.example.com", 1);
	ssize_t rl = ask_udp(l, q, n, r, 2000);
	ok(rl > 0 && net_dns_same_question(q, n, r, (size_t)rl) && rcode(r) == 0,
	   "allowed name answered, under the client's ID");
	ok(rl > 0 && net_dns_answer_a(r, (size_t)rl, addrs, 4, &ttl) == 2 &&
		   addrs[0] == 0x0a000001 && ttl == 60,
	   "the upstream's A records relayed");
	ok(read_seen(l, &s) && !strcmp(s.name, "www.example.com") && s.matched && s.n == 2 &&
		   s.addrs[1] == 0x0a000002 && s.ttl == 60,
	   "on_answer saw them first: %s n=%u ttl=%u", s.name, s.n, s.ttl);

	n = query(q, 7, "unlisted.org", 1);
	rl = ask_udp(l, q, n, r, 2000);
	ok(rl == (ssize_t)n && rcode(r) == 5 && r[0] == 0 && r[1] == 7, "unlisted name: REFUSED");
	n = query(q, 8, "www.example.com", 255);
	rl = ask_udp(l, q, n, r, 2000);
	ok(rl > 0 && rcode(r) == 5, "ANY: REFUSED");

	n = query(q, 9, "slow.example.com", 1);
	double t0 = hutch_now_ms();
	rl = ask_udp(l, q, n, r, 3000);
	double took = hutch_now_ms() - t0;
	ok(rl > 0 && rcode(r) == 2 && r[1] == 9, "no upstream answer: SERVFAIL");
	ok(took >= 550 && took < 1500, "after both upstreams' 300 ms (%.0f ms)", took);

	n = query(q, 10, "deny.example.com", 1);
	rl = ask_udp(l, q, n, r, 2000);
	ok(rl > 0 && rcode(r) == 2 && read_seen(l, &s) && !strcmp(s.name, "deny.example.com"),
	   "on_answer failed: SERVFAIL, no address handed out");
	n = query(q, 11, "forged.example.com", 1);
	rl = ask_udp(l, q, n, r, 2000);
	ok(rl > 0 && rcode(r) == 0 && net_dns_same_question(q, n, r, (size_t)rl) &&
		   read_seen(l, &s) && !strcmp(s.name, "forged.example.com"),
	   "an answer under another ID is dropped, the real one relayed");
	n = query(q, 12, "ok.test", 1);
	q[5] = 2;
	ok(ask_udp(l, q, n, r, 300) < 0, "malformed query: no reply");
}

/* Two pipelined queries and one refused, on one TCP connection. */
static void test_fwd_tcp(const struct lab *l)
{
	uint8_t q[1024], r[4096];
	size_t n = 0;
	const char *names[] = { "a.example.com", "ok.test", "nope.test" };
	for (size_t i = 0; i < 3; i++) {
		size_t m = query(q + n + 2, (uint16_t)(100 + i), names[i], 1);
		put16(q, n, (uint16_t)m);
		n += 2 + m;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = lo_addr(l->tcp_port);
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ok(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && hutch_write_all(fd, q, n) == 0,
	   "TCP: three queries sent at once");
	for (size_t i = 0; i < 3; i++) {
		uint32_t addrs[4], ttl;
		size_t len = hutch_read_all(fd, r, 2) == 2 ? (size_t)(r[0] << 8 | r[1]) : 0;
		bool got = len && hutch_read_all(fd, r, len) == (ssize_t)len;
		ok(got && r[1] == 100 + i && rcode(r) == (i == 2 ? 5 : 0) &&
			   (i == 2 || net_dns_answer_a(r, len, addrs, 4, &ttl) == 2),
		   "TCP reply %zu: %s %s", i, names[i], i == 2 ? "REFUSED" : "answered");
	}
	close(fd);
	struct seen s;
	ok(read_seen(l, &s) && read_seen(l, &s) && !strcmp(s.name, "ok.test"),
	   "on_answer saw the TCP answers");
}

/* Stops the forwarder (stop_fd hangs up) and the upstream; the forwarder's stats. */
static struct net_dns_stats lab_stop(struct lab *l)
{
	close(l->stop_w);
	struct net_dns_stats st = { 0 };
	struct pollfd p = { .fd = l->stats_r, .events = POLLIN };
	ok(poll(&p, 1, 2000) == 1 && hutch_read_all(l->stats_r, &st, sizeof(st)) == sizeof(st),
	   "the forwarder stops when stop_fd hangs up");
	int status = -1;
	if (p.revents == 0)
		kill(l->fwd_pid, SIGKILL);
	waitpid(l->fwd_pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "and returns 0, with no socket left open (exit %d)", WEXITSTATUS(status));
	kill(l->upstream_pid, SIGKILL);
	waitpid(l->upstream_pid, NULL, 0);
	close(l->seen_r);
	close(l->stats_r);
	close(l->up_r);
	return st;
}

static void test_forwarder(void)
{
	struct lab l = { 0 };
	if (!lab_start(&l)) {
		ok(0, "fake upstream and forwarder on 127.0.0.1");
		return;
	}
	test_fwd_udp(&l);
	test_fwd_tcp(&l);
	struct net_dns_stats st = lab_stop(&l);
	ok(st.answered == 4 && st.refused == 3 && st.failed == 3 && st.forged == 1 &&
		   st.timeouts == 2 && st.tcp == 3,
	   "stats: answered %llu refused %llu failed %llu forged %llu timeouts %llu tcp %llu",
	   (unsigned long long)st.answered, (unsigned long long)st.refused,
	   (unsigned long long)st.failed, (unsigned long long)st.forged,
	   (unsigned long long)st.timeouts, (unsigned long long)st.tcp);
}

/* Not restricted: an unlisted name is forwarded, and on_answer told it matched nothing. */
static void test_forwarder_open(void)
{
	struct lab l = { .open = true };
	if (!lab_start(&l)) {
		ok(0, "fake upstream and open forwarder on 127.0.0.1");
		return;
	}
	uint8_t q[512], r[4096];
	size_t n = query(q, 5, "unlisted.org", 1);
	ssize_t rl = ask_udp(&l, q, n, r, 2000);
	struct seen s;
	ok(rl > 0 && rcode(r) == 0 && read_seen(&l, &s) && !strcmp(s.name, "unlisted.org") &&
		   !s.matched && s.n == 2,
	   "open: unlisted name answered, on_answer told it matched no pattern");
	n = query(q, 6, "ok.test", 1);
	rl = ask_udp(&l, q, n, r, 2000);
	ok(rl > 0 && rcode(r) == 0 && read_seen(&l, &s) && s.matched, "open: a listed one matched");
	n = query(q, 7, "ok.test", 255);
	ok(ask_udp(&l, q, n, r, 2000) > 0 && rcode(r) == 5, "open: ANY still REFUSED");
	struct net_dns_stats st = lab_stop(&l);
	ok(st.answered == 2 && st.refused == 1, "open: stats");
}

/* An answer's address removed before on_answer is told, over UDP and TCP. */
static void test_forwarder_rebind(void)
{
	struct lab l = { .rebind = true };
	if (!lab_start(&l)) {
		ok(0, "fake upstream and forwarder on 127.0.0.1");
		return;
	}
	uint8_t q[512], r[4096];
	uint32_t addrs[4], ttl;
	struct seen s;
	size_t n = query(q, 5, "a.example.com", 1);
	ssize_t rl = ask_udp(&l, q, n, r, 2000);
	ok(rl > 0 && rcode(r) == 0 && net_dns_answer_a(r, (size_t)rl, addrs, 4, &ttl) == 1 &&
		   addrs[0] == 0x0a000002 && r[0] == 0 && r[1] == 5,
	   "UDP: the refused address is not relayed, under the client's ID");
	ok(read_seen(&l, &s) && s.n == 1 && s.addrs[0] == 0x0a000002,
	   "on_answer saw only what was kept");
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = lo_addr(l.tcp_port);
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = query(q + 2, 6, "b.example.com", 1);
	put16(q, 0, (uint16_t)n);
	size_t len = 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    hutch_write_all(fd, q, n + 2) == 0 && hutch_read_all(fd, r, 2) == 2)
		len = (size_t)(r[0] << 8 | r[1]);
	ok(len && hutch_read_all(fd, r, len) == (ssize_t)len &&
		   net_dns_answer_a(r, len, addrs, 4, &ttl) == 1 && addrs[0] == 0x0a000002,
	   "TCP: the same, its length prefix the new length (%zu)", len);
	close(fd);
	ok(read_seen(&l, &s) && s.n == 1, "on_answer, TCP");
	struct net_dns_stats st = lab_stop(&l);
	ok(st.answered == 2 && st.dropped == 2, "stats: %llu dropped",
	   (unsigned long long)st.dropped);
}

/* What the upstream saw so far: the distinct UDP source ports, and TCP ends by reset/EOF. */
static void up_seen(const struct lab *l, size_t *ports, size_t *resets, size_t *eofs)
{
	uint16_t seen[64];
	struct up_seen u;
	*ports = *resets = *eofs = 0;
	while (read(l->up_r, &u, sizeof(u)) == sizeof(u)) {
		*resets += u.kind == 'r';
		*eofs += u.kind == 'e';
		bool known = u.kind != 'u';
		for (size_t i = 0; i < *ports && !known; i++)
			known = seen[i] == u.port;
		if (!known && *ports < 64)
			seen[(*ports)++] = u.port;
	}
}

/* N lookups on one TCP connection to the forwarder: how many were answered. */
static int ask_tcp_many(const struct lab *l, int n)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = lo_addr(l->tcp_port);
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int answered = 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		n = 0;
	for (int i = 0; i < n; i++) {
		uint8_t q[512], r[4096];
		size_t m = query(q + 2, (uint16_t)i, "ok.test", 1);
		put16(q, 0, (uint16_t)m);
		size_t len = 0;
		if (hutch_write_all(fd, q, m + 2) == 0 && hutch_read_all(fd, r, 2) == 2)
			len = (size_t)(r[0] << 8 | r[1]);
		answered += len && hutch_read_all(fd, r, len) == (ssize_t)len && rcode(r) == 0;
	}
	close(fd);
	return answered;
}

/* The host's connection-tracking entries (no cap counts them): UDP lookups share one socket
 * per upstream, and TCP ones open at most a few connections a second, each ended by a reset
 * (no TIME_WAIT). */
static void test_forwarder_upstream_sockets(void)
{
	struct lab l = { .open = true, .tcp_per_s = 10, .tcp_burst = 2 };
	if (!lab_start(&l)) {
		ok(0, "fake upstream and forwarder on 127.0.0.1");
		return;
	}
	uint8_t q[512], r[4096];
	int answered = 0;
	for (int i = 0; i < 40; i++) {
		size_t n = query(q, (uint16_t)(1000 + i), "ok.test", 1);
		ssize_t rl = ask_udp(&l, q, n, r, 2000);
		answered += rl > 0 && rcode(r) == 0 && r[0] == q[0] && r[1] == q[1];
	}
	size_t ports, resets, eofs;
	up_seen(&l, &ports, &resets, &eofs);
	ok(answered == 40 && ports == 1,
	   "UDP: 40 lookups answered (%d), from 1 upstream source port (%zu)", answered, ports);
	double t0 = hutch_now_ms();
	answered = ask_tcp_many(&l, 6);
	double took = hutch_now_ms() - t0;
	ok(answered == 6, "TCP: 6 lookups on one connection answered (%d)", answered);
	ok(took >= 350 && took < 1500,
	   "after a burst of 2, the other 4 upstream connections at 10 a second (%.0f ms)", took);
	usleep(100 * 1000);
	up_seen(&l, &ports, &resets, &eofs);
	ok(resets == 6 && eofs == 0, "each upstream connection ended by a reset (%zu, %zu EOF)",
	   resets, eofs);
	lab_stop(&l);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_parse_query();
	test_reply_empty();
	test_same_question();
	test_answer_a();
	test_drop_a();
	test_drop_musl();
	test_patterns();
	test_forwarder();
	test_forwarder_open();
	test_forwarder_rebind();
	test_forwarder_upstream_sockets();
	return tap_done();
}
