// SPDX-License-Identifier: Apache-2.0
/*
 * Looking at JSON text without building a tree: finding one member's bytes (config.json's
 * seccomp profile, 90% of its size, is compiled through a cache keyed on them), and the
 * strings that hold a NUL byte, which C strings would cut short.
 */
#include "hutch-json.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_parse.h>

/* ---- NUL bytes ("\u0000") in strings, which C strings would cut short ---- */

struct nul_scan {
	struct {
		char key[64]; /* in an object: the current key */
		long index;   /* in an array: the current index; -1 in an object */
	} f[32];
	int depth; /* frames in use; deeper ones are counted but not kept */
	char where[HUTCH_FIELD_MAX];
};

static void nul_path(struct nul_scan *s, const char *key)
{
	size_t n = 0;
	int kept = s->depth < (int)ARRAY_SIZE(s->f) ? s->depth : (int)ARRAY_SIZE(s->f);
	s->where[0] = '\0';
	for (int i = 0; i < kept && n < sizeof(s->where); i++) {
		if (s->f[i].index >= 0)
			n += (size_t)snprintf(s->where + n, sizeof(s->where) - n, "[%ld]",
					      s->f[i].index);
		else if (!key || i + 1 < kept)
			n += (size_t)snprintf(s->where + n, sizeof(s->where) - n, "%s%s",
					      n ? "." : "", s->f[i].key);
	}
	if (key && n < sizeof(s->where))
		snprintf(s->where + n, sizeof(s->where) - n, "%s%.*s", n ? "." : "", 48, key);
}

static void nul_next(struct nul_scan *s) /* a value ended: the enclosing array moves on */
{
	if (s->depth > 0 && s->depth <= (int)ARRAY_SIZE(s->f) && s->f[s->depth - 1].index >= 0)
		s->f[s->depth - 1].index++;
}

static int nul_push(void *ctx, long index)
{
	struct nul_scan *s = ctx;
	if (s->depth < (int)ARRAY_SIZE(s->f))
		s->f[s->depth] = (typeof(s->f[0])){ .key = "", .index = index };
	s->depth++;
	return 1;
}

static int nul_pop(void *ctx)
{
	struct nul_scan *s = ctx;
	s->depth--;
	nul_next(s);
	return 1;
}

static int nul_map(void *ctx)
{
	return nul_push(ctx, -1);
}

static int nul_array(void *ctx)
{
	return nul_push(ctx, 0);
}

static int nul_key(void *ctx, const unsigned char *k, size_t len)
{
	struct nul_scan *s = ctx;
	if (memchr(k, '\0', len)) {
		nul_path(s, NULL);
		snprintf(s->where + strlen(s->where), sizeof(s->where) - strlen(s->where),
			 "%s(a key)", s->where[0] ? " " : "");
		return 0;
	}
	if (s->depth > 0 && s->depth <= (int)ARRAY_SIZE(s->f))
		snprintf(s->f[s->depth - 1].key, sizeof(s->f[0].key), "%.*s", (int)len, k);
	return 1;
}

static int nul_string(void *ctx, const unsigned char *v, size_t len)
{
	struct nul_scan *s = ctx;
	if (memchr(v, '\0', len)) {
		nul_path(s, NULL);
		return 0;
	}
	nul_next(s);
	return 1;
}

static int nul_scalar(void *ctx)
{
	nul_next(ctx);
	return 1;
}

static int nul_bool(void *ctx, int b)
{
	(void)b;
	return nul_scalar(ctx);
}

static int nul_number(void *ctx, const char *n, size_t len)
{
	(void)n, (void)len;
	return nul_scalar(ctx);
}

/* An escaped NUL: "\u0000" after an even run of backslashes (an odd one escapes the last). */
static bool may_hold_nul(const char *text)
{
	for (const char *p = text; (p = strstr(p, "\\u0000")); p++) {
		size_t run = 0;
		while (p - run > text && p[-(ptrdiff_t)run - 1] == '\\')
			run++;
		if (run % 2 == 0)
			return true;
	}
	return false;
}

int hutch_json_check_nul(const char *text, const char *what, struct hutch_err *err)
{
	static const yajl_callbacks cb = {
		.yajl_null = nul_scalar,
		.yajl_boolean = nul_bool,
		.yajl_number = nul_number,
		.yajl_string = nul_string,
		.yajl_start_map = nul_map,
		.yajl_map_key = nul_key,
		.yajl_end_map = nul_pop,
		.yajl_start_array = nul_array,
		.yajl_end_array = nul_pop,
	};
	if (!may_hold_nul(text))
		return 0;
	struct nul_scan s = { .depth = 0 };
	yajl_handle h = yajl_alloc(&cb, NULL, &s);
	yajl_config(h, yajl_allow_comments, 1);
	yajl_status st = yajl_parse(h, (const unsigned char *)text, strlen(text));
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	yajl_free(h);
	if (st != yajl_status_client_canceled)
		return 0; /* no NUL in a string after all, or not JSON: the parse says so */
	return hutch_fail(err, EINVAL, "%s: %s: a string holds a NUL byte (\\u0000)", what,
			  s.where[0] ? s.where : "the top level");
}

/* ---- nesting depth ---- */

/* Past a string's closing quote (p just after the opening one), or at its end. */
static const char *past_string(const char *p)
{
	for (; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p + 1 : p;
}

/* Past a comment (p at its '/'), or at the text's end when it never closes. */
static const char *past_comment(const char *p)
{
	if (p[1] == '/')
		return p + strcspn(p, "\n");
	const char *end = strstr(p + 2, "*/");
	return end ? end + 2 : p + strlen(p);
}

int hutch_json_check_depth(const char *text, const char *what, struct hutch_err *err)
{
	size_t depth = 0;
	for (const char *p = text; *p;) {
		if (*p == '"') {
			p = past_string(p + 1);
			continue;
		}
		if (*p == '/' && (p[1] == '/' || p[1] == '*')) {
			p = past_comment(p);
			continue;
		}
		if ((*p == '[' || *p == '{') && ++depth > HUTCH_JSON_DEPTH_MAX)
			return hutch_fail(err, EINVAL, "%s: invalid JSON: nested deeper than %d",
					  what, HUTCH_JSON_DEPTH_MAX);
		if ((*p == ']' || *p == '}') && depth > 0)
			depth--;
		p++;
	}
	return 0;
}

/* ---- finding a member without parsing ---- */

struct scan {
	const char *p, *end; /* end: the text's NUL */
	bool bad;	     /* malformed, or something the scanner does not vouch for */
};

static void skip_ws(struct scan *s)
{
	s->p += strspn(s->p, " \t\n\r");
	if (*s->p == '/') /* yajl allows comments; we do not follow them */
		s->bad = true;
}

/* Bytes that end a run the scanner skips: in a string, and between tokens. The scan is a
 * table lookup per byte, since config.json's seccomp profile is tens of kilobytes; the
 * tables are constants, so that a start pays no page of its own to build them. */
static const bool string_table[256] = { ['"'] = true, ['\\'] = true, ['\0'] = true };
static const bool value_table[256] = { ['"'] = true, ['{'] = true, ['}'] = true, ['['] = true,
				       [']'] = true, [','] = true, ['/'] = true, ['\0'] = true };

static const char *skip_while_not(const char *p, const bool table[256])
{
	while (!table[(unsigned char)*p])
		p++;
	return p;
}

/* At '"': past the closing quote. *escaped says if the string had a backslash. */
static void skip_string(struct scan *s, bool *escaped)
{
	const char *p = s->p + 1;

	*escaped = false;
	for (;;) {
		p = skip_while_not(p, string_table);
		if (*p != '\\')
			break;
		*escaped = true;
		if (!*++p)
			break;
		p++;
	}
	s->bad |= *p != '"';
	s->p = *p ? p + 1 : p;
}

#ifdef __SSE2__
#include <emmintrin.h>

/* 64 bytes at p, a bit per byte: quotes, opening and closing brackets, and the bytes the
 * fast path leaves to the byte loop (a backslash, '/' and NUL). */
struct block {
	uint64_t quote, open, close, other;
};

static uint64_t bits(__m128i v)
{
	return (uint16_t)_mm_movemask_epi8(v);
}

static struct block classify(const char *p)
{
	const __m128i quote = _mm_set1_epi8('"'), open = _mm_set1_epi8('{'),
		      close = _mm_set1_epi8('}'), lower = _mm_set1_epi8(0x20),
		      bslash = _mm_set1_epi8('\\'), slash = _mm_set1_epi8('/'),
		      zero = _mm_setzero_si128();
	struct block b = { 0 };
	for (int i = 0; i < 4; i++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
		__m128i folded = _mm_or_si128(v, lower); /* '[' -> '{', ']' -> '}' */
		__m128i other = _mm_or_si128(
			_mm_cmpeq_epi8(v, bslash),
			_mm_or_si128(_mm_cmpeq_epi8(v, slash), _mm_cmpeq_epi8(v, zero)));
		b.quote |= bits(_mm_cmpeq_epi8(v, quote)) << (16 * i);
		b.open |= bits(_mm_cmpeq_epi8(folded, open)) << (16 * i);
		b.close |= bits(_mm_cmpeq_epi8(folded, close)) << (16 * i);
		b.other |= bits(other) << (16 * i);
	}
	return b;
}

/* Bit i: the XOR of bits 0..i, i.e. set from an opening quote up to its closing one. */
static uint64_t prefix_xor(uint64_t x)
{
	for (int shift = 1; shift < 64; shift *= 2)
		x ^= x << shift;
	return x;
}

/*
 * The next 64 bytes of a container at once, when they hold no backslash, '/' or NUL: with
 * no escapes a quote always toggles "in a string", so the brackets outside strings are
 * known without a byte loop. Returns the bytes consumed: 64, fewer when the container ends
 * here (depth back to 0), or 0 when the block is not for the fast path.
 */
static size_t skip_block(const char *p, size_t *depth, bool *in_string)
{
	struct block b = classify(p);
	if (b.other)
		return 0;
	uint64_t inside = prefix_xor(b.quote) ^ (*in_string ? ~0ULL : 0);
	uint64_t open = b.open & ~inside, close = b.close & ~inside;
	*in_string = inside >> 63;
	if ((size_t)__builtin_popcountll(close) < *depth) { /* cannot reach 0 here */
		*depth += (size_t)__builtin_popcountll(open) - (size_t)__builtin_popcountll(close);
		return 64;
	}
	for (uint64_t ev = open | close; ev; ev &= ev - 1) {
		int i = __builtin_ctzll(ev);
		*depth += 2 * (open >> i & 1) - 1; /* no branch on which kind: they alternate */
		if (*depth == 0)
			return (size_t)i + 1;
	}
	return 64;
}
#endif

/*
 * At '{' or '[': past the matching bracket, counting brackets outside strings. Profiles are
 * tens of kilobytes of short strings, where a byte loop costs ~3 cycles a byte: 64-byte
 * blocks without escapes go through skip_block (SSE2), the rest byte by byte.
 */
static void skip_container(struct scan *s)
{
	const char *p = s->p;
	size_t depth = 0;
	bool in_string = false;

	for (;;) {
#ifdef __SSE2__
		size_t n;
		if (s->end - p >= 64 && (n = skip_block(p, &depth, &in_string)) > 0) {
			p += n;
			if (depth == 0)
				break;
			continue;
		}
#endif
		/* A block the fast path declined (or the tail), byte by byte. */
		for (const char *stop = p + 64; p < stop; p++) {
			char c = *p;
			if (!c ||
			    (!in_string && c == '/')) { /* the end of the text, or a comment */
				s->bad = true;
				s->p = p;
				return;
			}
			if (in_string && c == '\\' && p[1])
				p++; /* the escaped byte cannot end the string */
			else if (c == '"')
				in_string = !in_string;
			else if (!in_string && (c == '{' || c == '['))
				depth++;
			else if (!in_string && (c == '}' || c == ']') && --depth == 0) {
				s->p = p + 1;
				return;
			}
		}
	}
	s->p = p;
}

/*
 * Any value: a container through skip_container; a scalar (string, number, literal) up to
 * the ',' or closing bracket after it. For well-formed JSON that is exactly the value's
 * extent, and the caller parses those bytes (or knows them already) and yajl parses
 * everything around them, so nothing else needs checking here.
 */
static void skip_value(struct scan *s)
{
	bool escaped;

	if (*s->p == '{' || *s->p == '[') {
		char close = *s->p == '{' ? '}' : ']';
		skip_container(s);
		/* Brackets within are counted, '[' and '{' alike (the profile's own parse checks
		 * their pairs); the container's own pair must match, or "{...]" would pass for
		 * an object, and its bytes would be cut out of a text that is not JSON. */
		s->bad |= !s->bad && s->p[-1] != close;
		return;
	}
	while (!s->bad) {
		s->p = skip_while_not(s->p, value_table);
		switch (*s->p) {
		case '"':
			skip_string(s, &escaped);
			continue;
		case '}':
		case ']':
		case ',':
			return; /* the end of the enclosing container, or the next member */
		default: /* a bracket within a scalar, '/' (a comment) or the end of the text */
			s->bad = true;
			return;
		}
	}
}

/*
 * At '{': the object value of key, the only member so named, or with inner the object value
 * of inner within it (found in the same pass). Leaves s->p at the closing '}'.
 */
static bool find_member(struct scan *s, const char *key, const char *inner, const char **at,
			const char **end)
{
	size_t klen = strlen(key);
	bool escaped, seen = false, found = false;

	s->p++;
	skip_ws(s);
	while (!s->bad && *s->p == '"') {
		const char *k = s->p;
		skip_string(s, &escaped);
		bool match =
			!escaped && (size_t)(s->p - k) == klen + 2 && !strncmp(k + 1, key, klen);
		skip_ws(s);
		if (escaped || (match && seen) || *s->p++ != ':')
			return false;
		skip_ws(s);
		seen |= match;
		if (match && *s->p == '{' && inner) {
			if (!find_member(s, inner, NULL, at, end))
				return false; /* and s->p may be anywhere */
			found = true;
			s->p++;
		} else if (match && *s->p == '{') {
			found = true;
			*at = s->p;
			skip_value(s);
			*end = s->p;
		} else {
			skip_value(s);
		}
		if (s->bad)
			return false; /* s->p may be at the end of the text */
		skip_ws(s);
		if (*s->p == '}')
			return found && !s->bad;
		if (*s->p++ != ',')
			return false;
		skip_ws(s);
	}
	return false;
}

bool hutch_json_find_object(const char *text, const char *outer, const char *inner, size_t *start,
			    size_t *len)
{
	struct scan s = { .p = text, .end = text + strlen(text) };
	const char *at = NULL, *end = NULL;

	skip_ws(&s);
	if (s.bad || *s.p != '{' || !find_member(&s, outer, inner, &at, &end))
		return false;
	s.p++; /* past the top object's '}': only whitespace may follow */
	skip_ws(&s);
	if (s.bad || *s.p)
		return false;
	*start = (size_t)(at - text);
	*len = (size_t)(end - at);
	return true;
}
