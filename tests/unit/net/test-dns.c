// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for the DNS policy forwarder: the wire format on hand-built packets (queries,
 * empty replies, A records behind compression pointers, loops and pointers out of bounds),
 * name patterns, and the serving loop against a fake upstream on 127.0.0.1, in forked
 * processes. No root and no network are needed.
 */
#include "tap.h"
#include "net.h"

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

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_parse_query();
	test_reply_empty();
	test_same_question();
	test_answer_a();
	test_patterns();
	return tap_done();
}
