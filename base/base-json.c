// SPDX-License-Identifier: Apache-2.0
/*
 * Writing a parsed yajl tree back out, for documents that are read, amended and written
 * again (a spec's seccomp profile, an image config, a seccomp listener's state), whether a
 * string may go into one (UTF-8), and finding one member's bytes without a parse
 * (config.json's seccomp profile, 90% of its size).
 */
#include "hutch-json.h"

#include <stdint.h>
#include <string.h>

void hutch_json_gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

void hutch_json_gen_strv(yajl_gen g, const char *key, const char *const *v, size_t n)
{
	hutch_json_gen_str(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; v && i < n && (n != SIZE_MAX || v[i]); i++)
		hutch_json_gen_str(g, v[i]);
	yajl_gen_array_close(g);
}

bool hutch_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned char c = *p++;
		size_t more = c < 0x80		       ? 0
			      : c >= 0xc2 && c <= 0xdf ? 1
			      : c >= 0xe0 && c <= 0xef ? 2
			      : c >= 0xf0 && c <= 0xf4 ? 3
						       : 4;
		if (more == 4)
			return false; /* a continuation byte, or a lead byte RFC 3629 forbids */
		/* The second byte's range rules out overlong forms, surrogates and > U+10FFFF. */
		unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
		for (size_t i = 0; i < more; i++, p++)
			if (*p < (i ? 0x80 : lo) || *p > (i ? 0xbf : hi))
				return false; /* also the NUL that ends s too early */
	}
	return true;
}

void hutch_json_gen_value(yajl_gen g, yajl_val v)
{
	if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			hutch_json_gen_str(g, v->u.object.keys[i]);
			hutch_json_gen_value(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			hutch_json_gen_value(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else if (YAJL_IS_STRING(v)) {
		hutch_json_gen_str(g, YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		const char *num = YAJL_GET_NUMBER(v);
		yajl_gen_number(g, num, strlen(num));
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else {
		yajl_gen_null(g);
	}
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
