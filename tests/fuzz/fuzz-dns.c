// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: a DNS message as the sandbox (a query) or an upstream (an answer) sends
 * it to the policy forwarder. Every parser in net-dns.c reads it, held to what the others
 * say of it: a query that parses has an empty reply that answers it; a name that parses is
 * in the normal form the policy matches; an answer rebuilt without some addresses reads and
 * holds none of them; and the input as text is a user's name pattern.
 */
#include "fuzz.h"
#include "net-egress.h"

static void check_name(const char *name)
{
	size_t len = strlen(name);
	FUZZ_CHECK(len <= NET_DNS_NAME_MAX - 1, "name of %zu", len);
	for (const char *p = name; *p; p++)
		FUZZ_CHECK(*p > 0x20 && *p < 0x7f && !(*p >= 'A' && *p <= 'Z'), "byte %#x in %s",
			   (unsigned char)*p, name);
	FUZZ_CHECK(!len || (name[0] != '.' && name[len - 1] != '.' && !strstr(name, "..")),
		   "empty label in %s", name);
	FUZZ_CHECK(!len || net_dns_name_match(name, name), "%s does not match itself", name);
}

static void query(const uint8_t *data, size_t size)
{
	char name[NET_DNS_NAME_MAX];
	uint16_t qtype, qclass;
	int r = net_dns_parse_query(data, size, name, &qtype, &qclass);
	uint8_t out[1024 + 16];
	ssize_t n = net_dns_reply_empty(data, size, 5, out, sizeof(out));
	FUZZ_CHECK((r == 0) == (n > 0), "parse %d but reply %zd", r, n);
	if (r < 0)
		return;
	check_name(name);
	FUZZ_CHECK((size_t)n <= size && out[0] == data[0] && out[1] == data[1] &&
			   (out[3] & 15) == 5,
		   "reply of %zd", n);
	FUZZ_CHECK(net_dns_same_question(data, size, out, (size_t)n), "the reply is not an answer");
	char rname[NET_DNS_NAME_MAX];
	FUZZ_CHECK(net_dns_parse_query(out, (size_t)n, rname, &qtype, &qclass) == -EINVAL,
		   "a reply parses as a query");
	FUZZ_CHECK(net_dns_reply_empty(data, size, 2, out, (size_t)n - 1) == -EINVAL,
		   "a reply fits in less than its length");
	char wild[NET_DNS_NAME_MAX + 2];
	snprintf(wild, sizeof(wild), "*.%s", name);
	FUZZ_CHECK(!net_dns_name_match(wild, name), "*.%s matches its apex", name);
}

static void answer(const uint8_t *data, size_t size)
{
	uint32_t addrs[8], ttl = 0xdead;
	int n = net_dns_answer_a(data, size, addrs, 8, &ttl);
	FUZZ_CHECK(n <= 8, "%d addresses", n);
	FUZZ_CHECK(n < 0 || ttl <= 0x7fffffff, "TTL %u", ttl);
	FUZZ_CHECK(n < 0 || n > 0 || ttl == 0, "no address, TTL %u", ttl);
	uint32_t one;
	int m = net_dns_answer_a(data, size, &one, 1, &ttl);
	FUZZ_CHECK((n < 0) == (m < 0) && (n <= 0 || (m == 1 && one == addrs[0])),
		   "max 1 said %d, max 8 %d", m, n);
	/* As its own query: an answer matches itself when it is one (QR) and its question reads. */
	if (size >= 12 && !(data[2] & 0x80))
		FUZZ_CHECK(!net_dns_same_question(data, size, data, size), "QR=0 answers");
}

/* Drops addresses whose low bit is set: what is left must read, hold none of them, and
 * need no pointer (every name is written in full), and a second pass drops nothing. */
static bool odd(uint32_t a, void *arg)
{
	(void)arg;
	return a & 1;
}

static void rebind(const uint8_t *data, size_t size)
{
	static uint8_t out[65536], again[65536];
	struct net_dns_drop d = { odd, NULL };
	unsigned dropped = 0, twice = 0;
	ssize_t n = net_dns_drop_a(data, size, &d, out, sizeof(out), &dropped);
	FUZZ_CHECK(n < 0 || (n == 0) == (dropped == 0), "%zd bytes, %u dropped", n, dropped);
	if (n <= 0)
		return;
	uint32_t addrs[64], ttl;
	int k = net_dns_answer_a(out, (size_t)n, addrs, 64, &ttl);
	FUZZ_CHECK(k >= 0, "the rebuilt message does not read");
	for (int i = 0; i < k && i < 64; i++)
		FUZZ_CHECK(!(addrs[i] & 1), "%#x left in", addrs[i]);
	FUZZ_CHECK(net_dns_drop_a(out, (size_t)n, &d, again, sizeof(again), &twice) == 0 && !twice,
		   "a second pass dropped %u", twice);
	FUZZ_CHECK(size < 12 || net_dns_same_question(data, size, out, (size_t)n) ||
			   !net_dns_same_question(data, size, data, size),
		   "the rebuilt message lost its question");
}

static void pattern(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char out[NET_DNS_NAME_MAX];
	struct hutch_err err = { 0 };
	if (net_dns_pattern_parse(text, out, &err) == 0) {
		bool wild = out[0] == '*';
		check_name(wild ? out + 2 : out);
		FUZZ_CHECK(!strchr(wild ? out + 1 : out, '*'), "a '*' inside %s", out);
		FUZZ_CHECK(wild || net_dns_name_match(out, text), "%s does not match %s", out,
			   text);
	} else {
		FUZZ_CHECK(err.code == EINVAL && err.msg[0], "no message for a bad pattern");
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	query(data, size);
	answer(data, size);
	rebind(data, size);
	pattern(data, size);
	return 0;
}
