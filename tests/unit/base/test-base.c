// SPDX-License-Identifier: Apache-2.0
/*
 * base: the error convention, the fd helpers that keep rootfs paths inside the
 * root (a planted symlink must never reach the host), atomic writes, fd closing, and finding
 * a member's bytes in JSON text without parsing it.
 */
#include "hutch-base.h"
#include "hutch-dl.h"
#include "hutch-json.h"
#include "hutch-path.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_errors(void)
{
	struct hutch_err err = { 0 };
	int r = hutch_fail(&err, ENOENT, "open %s", "x");
	ok(r == -ENOENT && err.code == ENOENT, "hutch_fail returns -errno and sets code");
	hutch_err_prefix(&err, "mount /proc: ");
	is_str(err.msg, "mount /proc: open x", "prefix adds context");
	r = hutch_fail_errno(&err, -EACCES, "exec %s", "y");
	ok(r == -EACCES, "negative codes are accepted");
	is_str(err.msg, "exec y: Permission denied", "strerror appended");
	char big[1000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	hutch_fail(&err, EINVAL, "%s", big);
	hutch_err_prefix(&err, "ctx: ");
	ok(strlen(err.msg) == sizeof(err.msg) - 1, "long messages are truncated, not overflowed");
}

static void test_parse(void)
{
	uint64_t u;
	int64_t i;
	ok(hutch_parse_u64("42", &u) == 0 && u == 42, "parse u64");
	ok(hutch_parse_u64("-1", &u) < 0, "u64 rejects negatives");
	ok(hutch_parse_u64("4x", &u) < 0, "u64 rejects trailing junk");
	ok(hutch_parse_u64("", &u) < 0, "u64 rejects empty");
	ok(hutch_parse_i64("-7", &i) == 0 && i == -7, "parse i64");
	ok(hutch_parse_u64("99999999999999999999999", &u) < 0, "u64 rejects overflow");
}

static void test_in_root(const char *tmp)
{
	struct hutch_err err = { 0 };
	char root[256], host[256], path[1024];
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(host, sizeof(host), "%s/host", tmp);
	mkdir(root, 0755);
	mkdir(host, 0755);
	snprintf(path, sizeof(path), "%s/evil", root);
	ok(symlink(host, path) == 0, "plant an absolute symlink to a host dir");
	snprintf(path, sizeof(path), "%s/up", root);
	ok(symlink("../../..", path) == 0, "plant a ../ symlink");

	_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = hutch_mkdir_in_root(rfd, "/evil/x", 0755, &err);
	ok(fd >= 0, "mkdir through the symlink succeeds inside the root");
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/x", host);
	ok(access(path, F_OK) < 0, "nothing was created in the host dir");
	snprintf(path, sizeof(path), "%s%s/x", root, host);
	ok(access(path, F_OK) == 0, "the directory landed under the root instead");
	/* Now the link's parent resolves in the root: the one-mkdir path, not the walk. */
	fd = hutch_mkdir_in_root(rfd, "/evil/y", 0755, &err);
	ok(fd >= 0, "mkdir beneath an existing parent through the symlink");
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/y", host);
	ok(access(path, F_OK) < 0, "nothing was created in the host dir (existing parent)");
	snprintf(path, sizeof(path), "%s%s/y", root, host);
	ok(access(path, F_OK) == 0, "it landed under the root (existing parent)");
	snprintf(path, sizeof(path), "%s/dangling", root);
	ok(symlink("/made-by-link", path) == 0, "plant a dangling absolute symlink");
	fd = hutch_mkdir_in_root(rfd, "/dangling", 0755, &err);
	ok(fd >= 0, "mkdir of a dangling symlink");
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/made-by-link", root);
	ok(access(path, F_OK) == 0 && access("/made-by-link", F_OK) < 0,
	   "its target was made inside the root, not on the host");

	fd = hutch_open_in_root(rfd, "/up/etc/hostname", O_RDONLY, 0, &err);
	ok(fd < 0, "../ symlinks cannot climb out of the root");
	fd = hutch_open_in_root(rfd, "/f", O_WRONLY | O_CREAT, 0644, &err);
	ok(fd >= 0, "create a file in the root");
	if (fd >= 0)
		close(fd);
	fd = hutch_mkdir_in_root(rfd, "/a/../b", 0755, &err);
	ok(fd < 0 && strstr(err.msg, ".."), "'..' in a path to create is refused");
}

static void test_files(const char *tmp)
{
	struct hutch_err err = { 0 };
	_cleanup_close_ int dfd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ok(hutch_write_atomic_at(dfd, "s.json", "{}", 2, 0600, &err) == 0, "atomic write");
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	ok(hutch_read_file_at(dfd, "s.json", 100, &buf, &len, &err) == 0 && len == 2 &&
		   !strcmp(buf, "{}"),
	   "read it back");
	free(buf);
	buf = NULL;
	ok(hutch_read_file_at(dfd, "missing", 100, &buf, &len, &err) == -ENOENT &&
		   strstr(err.msg, "missing"),
	   "missing file error names it");
}

static void test_close_fds(void)
{
	int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY);
	int c = open("/dev/null", O_RDONLY);
	int keep[] = { b };
	ok(hutch_close_fds_from(a, keep, 1) == 0, "close_fds_from");
	ok(fcntl(a, F_GETFD) < 0 && fcntl(c, F_GETFD) < 0, "others closed");
	ok(fcntl(b, F_GETFD) >= 0, "kept fd stays open");
	close(b);
}

static void test_proc_stat(void)
{
	uint64_t start = 0;
	char state = 0;
	ok(hutch_proc_stat(getpid(), &start, &state) == 0 && start > 0 && state == 'R',
	   "own /proc stat: running with a start time");
}

/* The bytes found for linux.seccomp in text, or "-" when the scanner declines. */
static const char *find(const char *text)
{
	static char buf[256];
	size_t at, len;
	if (!hutch_json_find_object(text, "linux", "seccomp", &at, &len))
		return "-";
	snprintf(buf, sizeof(buf), "%.*s", (int)len, text + at);
	return buf;
}

static void test_json_find(void)
{
	is_str(find("{\"linux\":{\"seccomp\":{\"a\":1}}}"), "{\"a\":1}", "found");
	is_str(find(" {\n \"ociVersion\": \"1\",\n \"linux\" : { \"x\": [1, {\"y\": \"]}\"}],\n"
		    "  \"seccomp\" :\t{ \"s\": \"\\\"}{\", \"n\": [ ] } , \"z\": null } }\n"),
	       "{ \"s\": \"\\\"}{\", \"n\": [ ] }",
	       "brackets and escaped quotes inside strings do not count; whitespace anywhere");
	is_str(find("{\"a\":\"linux\",\"linux\":{\"seccomp\":{}},\"b\":[\"seccomp\"]}"), "{}",
	       "keys, not string values");
	is_str(find("{\"linux\":{\"seccomp\":{}},\"linux\":{}}"), "-", "a repeated outer key");
	is_str(find("{\"linux\":{\"seccomp\":{},\"seccomp\":{\"a\":1}}}"), "-",
	       "a repeated inner key");
	is_str(find("{\"linux\":{\"sec\\u0063omp\":{},\"seccomp\":{}}}"), "-",
	       "an escaped key (it may be the same name)");
	is_str(find("{\"linux\":{/* c */\"seccomp\":{}}}"), "-", "a comment");
	is_str(find("{\"linux\":{\"seccomp\":null}}"), "-", "not an object");
	is_str(find("{\"seccomp\":{},\"linux\":{}}"), "-", "only at the top level");
	is_str(find("{\"linuxx\":{\"seccomp\":{}},\"linu\":{\"seccomp\":{}}}"), "-",
	       "names must match exactly");
	is_str(find("{\"linux\":{\"seccomp\":{\"a\":[}}}"), "-", "unbalanced");
	is_str(find("{\"linux\":{\"seccomp\":{\"a\":1],\"b\":2}}"), "-",
	       "an object closed by ']' (the rest would be JSON once it is cut out)");
	is_str(find("{\"x\":[1},\"linux\":{\"seccomp\":{}}}"), "-",
	       "another member's array closed by '}'");
	is_str(find("{\"linux\":{\"seccomp\":{\"a\":\"a string past the 64 bytes of one block, "
		    "for the fast path\"],\"b\":2}}"),
	       "-", "an object closed by ']' after a whole block");
	is_str(find("{\"linux\":{\"seccomp\":{}}} x"), "-", "trailing text");
	is_str(find("{\"linux\":{\"seccomp\":{\"a\":\"b"), "-", "truncated in a string");
	is_str(find("[{\"linux\":{\"seccomp\":{}}}]"), "-", "not an object at the top");

	/* Every truncation declines, and reads nothing past the end (the ASan build checks). */
	static const char full[] = "{\"a\":[1,\"x\\\"\"],\"linux\":{\"b\":{\"c\":null},"
				   "\"seccomp\":{\"d\":[\"e\",{}]}},\"f\":true}";
	bool declined = true;
	for (size_t n = 0; n < sizeof(full) - 1; n++) {
		char *t = strndup(full, n);
		declined &= strcmp(find(t), "-") == 0;
		free(t);
	}
	ok(declined && strcmp(find(full), "{\"d\":[\"e\",{}]}") == 0,
	   "every truncation of a document declines; the whole one is found");
}

/* ---- long documents: the scanner's 64-byte blocks, and the bytes between them ---- */

struct gen {
	char *buf;
	size_t len, cap;
	unsigned seed;
};

static void put(struct gen *g, const char *s)
{
	size_t n = strlen(s);
	if (g->len + n + 1 > g->cap) {
		g->cap = 2 * (g->len + n + 1);
		g->buf = realloc(g->buf, g->cap);
	}
	memcpy(g->buf + g->len, s, n + 1);
	g->len += n;
}

static unsigned pick(struct gen *g, unsigned n)
{
	return (unsigned)rand_r(&g->seed) % n;
}

static void gen_ws(struct gen *g)
{
	static const char *const ws[] = { "", "", " ", "\n  ", "\t" };
	put(g, ws[pick(g, 5)]);
}

/* A string whose bytes include every one the scanner counts: brackets, escaped quotes and
 * backslashes, slashes. Long ones cross block boundaries. */
static void gen_string(struct gen *g)
{
	static const char *const parts[] = {
		"a", "clone3",	      "{", "}", "[", "]", "\\\"", "\\\\", "/", "\\/", "\\u0041",
		" ", "SCMP_ACT_ERRNO"
	};
	put(g, "\"");
	for (unsigned n = pick(g, 4) == 0 ? 40 + pick(g, 80) : pick(g, 12); n; n--)
		put(g, parts[pick(g, sizeof(parts) / sizeof(parts[0]))]);
	put(g, "\"");
}

static void gen_value(struct gen *g, int depth)
{
	unsigned kind = depth > 5 ? 2 + pick(g, 3) : pick(g, 5);
	if (kind == 0 || kind == 1) {
		bool object = kind == 0;
		put(g, object ? "{" : "[");
		for (unsigned n = pick(g, 6), i = 0; i < n; i++) {
			if (i)
				put(g, ",");
			gen_ws(g);
			if (object) {
				gen_string(g);
				put(g, ":");
				gen_ws(g);
			}
			gen_value(g, depth + 1);
			gen_ws(g);
		}
		put(g, object ? "}" : "]");
	} else if (kind == 2) {
		gen_string(g);
	} else {
		static const char *const lit[] = { "1", "-2.5e3", "true", "null", "4294967295" };
		put(g, lit[pick(g, 5)]);
	}
}

static void test_json_find_long(void)
{
	size_t wrong = 0, wrong_truncated = 0, docs = 0, bytes = 0;
	for (unsigned seed = 1; seed <= 120; seed++, docs++) {
		struct gen g = { .seed = seed }, sc = { .seed = seed * 7919 };
		put(&sc, "{\"syscalls\":[");
		for (unsigned n = 1 + pick(&sc, 30), i = 0; i < n; i++) {
			put(&sc, i ? ",{\"names\":" : "{\"names\":");
			gen_value(&sc, 2);
			put(&sc, "}");
		}
		put(&sc, "]}");
		put(&g, "{\"ociVersion\":");
		gen_value(&g, 3);
		put(&g, ",\"linux\":{\"a\":");
		gen_value(&g, 2);
		put(&g, ",\"seccomp\":");
		gen_ws(&g);
		size_t at = g.len;
		put(&g, sc.buf);
		gen_ws(&g);
		put(&g, ",\"b\":");
		gen_value(&g, 2);
		put(&g, "},\"z\":");
		gen_value(&g, 3);
		put(&g, "}");
		bytes += g.len;

		size_t fat, flen;
		if (!hutch_json_find_object(g.buf, "linux", "seccomp", &fat, &flen) || fat != at ||
		    flen != sc.len)
			wrong++;
		/* Cut anywhere, the text declines and nothing past its end is read (ASan). */
		for (size_t n = 0; n < g.len; n += 1 + n % 29) {
			char *t = strndup(g.buf, n);
			wrong_truncated +=
				hutch_json_find_object(t, "linux", "seccomp", &fat, &flen);
			free(t);
		}
		free(g.buf);
		free(sc.buf);
	}
	ok(wrong == 0,
	   "long generated documents: the profile found exactly (%zu of %zu wrong, %zu bytes)",
	   wrong, docs, bytes);
	ok(wrong_truncated == 0, "and every truncation of them declines (%zu found)",
	   wrong_truncated);

	/* A comment, or an unbalanced bracket, deep in a long profile. */
	char *doc = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&doc, &n);
	fputs("{\"linux\":{\"seccomp\":{\"names\":[", f);
	for (int i = 0; i < 200; i++)
		fprintf(f, "%s\"name%d\"", i ? "," : "", i);
	fputs("]}}}", f);
	fclose(f);
	size_t at, len, want = strlen("{\"names\":[") + strcspn(doc + 30, "]") + 2;
	ok(hutch_json_find_object(doc, "linux", "seccomp", &at, &len) && at == 20 && len == want,
	   "a long profile is found (%zu bytes)", want);
	size_t mid = n / 2;
	while (doc[mid] != ',')
		mid++;
	doc[mid] = '/';
	is_str(find(doc), "-", "a '/' outside strings, mid-profile, declines");
	doc[mid] = ']';
	is_str(find(doc), "-", "an extra closing bracket, mid-profile, declines");
	free(doc);
}

static void on_usr2(int s)
{
	(void)s;
}

static void test_signals_not_default(void)
{
	sigset_t set;
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, on_usr2);
	int r = hutch_signals_not_default(&set);
	ok(r == 0 && sigismember(&set, SIGUSR1) && sigismember(&set, SIGUSR2) &&
		   !sigismember(&set, SIGTERM) && !sigismember(&set, SIGHUP),
	   "signals not at their default: the ignored and the caught, no other");
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	r = hutch_signals_not_default(&set);
	ok(r == 0 && !sigismember(&set, SIGUSR1) && !sigismember(&set, SIGUSR2),
	   "and none of them once they are back to default");
}

/* The stamp's own calendar against glibc's gmtime_r, over four centuries and their edges. */
static void test_utc_stamp(void)
{
	char got[HUTCH_UTC_MAX], want[64];
	struct timespec ts = { .tv_sec = 1796149762, .tv_nsec = 5 };
	size_t bad = 0, n = 0;

	hutch_utc_stamp(&ts, true, got);
	ok(strcmp(got, "2026-12-01T18:29:22.000000005Z") == 0, "a stamp with nanoseconds: %s", got);
	for (int64_t t = -12219292800LL; t < 32503680000LL; t += 86399 * 7 + 3601, n++) {
		struct tm tm;
		time_t tt = (time_t)t;
		ts = (struct timespec){ .tv_sec = tt };
		gmtime_r(&tt, &tm);
		snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		hutch_utc_stamp(&ts, false, got);
		if (strcmp(got, want) != 0 && bad++ < 3)
			printf("# %lld: %s, gmtime_r says %s\n", (long long)t, got, want);
	}
	ok(bad == 0, "1582 to 3000: %zu stamps as gmtime_r's, %zu differ", n, bad);
}

static void test_utf8(void)
{
	static const struct {
		const char *s;
		bool valid;
	} cases[] = {
		{ "", true },
		{ "plain ascii", true },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb9", true },	/* 2, 3 and 4 bytes */
		{ "\xed\x9f\xbf \xee\x80\x80 \xf4\x8f\xbf\xbf", true }, /* the edges allowed */
		{ "caf\xe9", false },					/* Latin-1 */
		{ "\xff", false },
		{ "\x80", false },	       /* a lone continuation byte */
		{ "\xc0\xaf", false },	       /* overlong '/' */
		{ "\xe0\x80\xaf", false },     /* overlong, 3 bytes */
		{ "\xf0\x80\x80\xaf", false }, /* overlong, 4 bytes */
		{ "\xed\xa0\x80", false },     /* a surrogate */
		{ "\xf4\x90\x80\x80", false }, /* past U+10FFFF */
		{ "\xe2\x82", false },	       /* cut short by the end */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		ok(hutch_utf8_valid(cases[i].s) == cases[i].valid, "utf8 case %zu: %s", i,
		   cases[i].valid ? "valid" : "refused");
}

/* The getters every module's parser uses (base-json.c): Go's reading of duplicates and null,
 * ranges, and errors that name the field. */
static void test_json_getters(void)
{
	struct hutch_err err = { 0 };
	yajl_val v = NULL;
	ok(hutch_json_parse("{\"a\": 1, \"a\": \"two\", \"n\": null, \"u\": 18446744073709551615,"
			    " \"s\": [\"x\", 3]}",
			    "doc", &v, &err) == 0,
	   "json: parses (%s)", err.msg);
	yajl_val a = hutch_json_get(v, "a");
	ok(a && YAJL_IS_STRING(a) && !strcmp(a->u.string, "two"), "json: the last duplicate wins");
	ok(hutch_json_get(v, "n") == NULL, "json: null is absent");
	uint64_t u = 0;
	bool present = false;
	ok(hutch_json_uint64(v, "u", "doc.u", UINT64_MAX, &present, &u, &err) == 0 && present &&
		   u == UINT64_MAX,
	   "json: 2^64-1 from the raw text");
	ok(hutch_json_uint64(v, "u", "doc.u", 5, &present, &u, &err) == -ERANGE &&
		   strstr(err.msg, "doc.u: 18446744073709551615 out of range 0..5"),
	   "json: above max is refused, naming the field (%s)", err.msg);
	char *str = NULL;
	ok(hutch_json_string(v, "n", "doc.n", true, &str, &err) == -EINVAL &&
		   !strcmp(err.msg, "doc.n: required"),
	   "json: a required null is missing (%s)", err.msg);
	char **sv = NULL;
	ok(hutch_json_strv(v, "s", "doc.s", false, &sv, NULL, &err) == -EINVAL &&
		   !strcmp(err.msg, "doc.s[1]: expected a string") && !sv,
	   "json: a strv names its bad element (%s)", err.msg);
	yajl_tree_free(v);
	ok(hutch_json_parse("{\"a\": \"x\\u0000y\"}", "doc", &v, &err) == -EINVAL &&
		   strstr(err.msg, "doc: a: a string holds a NUL byte"),
	   "json: a NUL byte in a string is refused (%s)", err.msg);
}

/* "[[...0]]" n deep (objects for odd levels when mixed), malloc'd. */
static char *nested(size_t n, bool mixed)
{
	char *t = malloc(6 * n + 8);
	size_t o = 0;
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(t + o, "%s", mixed && i % 2 ? "{\"k\":" : "[");
	t[o++] = '0';
	for (size_t i = n; i-- > 0;)
		t[o++] = mixed && i % 2 ? '}' : ']';
	t[o] = '\0';
	return t;
}

/* yajl builds and frees its tree by recursion: 400,000 levels (800 KB, under the 4 MiB
 * blob cap) overflowed the stack. Nesting is refused past 512, before yajl sees it. */
static void test_json_depth(void)
{
	struct hutch_err err = { 0 };
	yajl_val v = NULL;
	char *deep = nested(400000, false), *max = nested(HUTCH_JSON_DEPTH_MAX, true);
	char *over = nested(HUTCH_JSON_DEPTH_MAX + 1, true);
	ok(hutch_json_parse(deep, "index.json", &v, &err) == -EINVAL && !v &&
		   !strcmp(err.msg, "index.json: invalid JSON: nested deeper than 512"),
	   "json: 400,000 levels are refused, no crash (%s)", err.msg);
	err = (struct hutch_err){ 0 };
	ok(hutch_json_parse(max, "doc", &v, &err) == 0 && v, "json: 512 levels parse (%s)",
	   err.msg);
	yajl_tree_free(v);
	v = NULL;
	ok(hutch_json_parse(over, "doc", &v, &err) == -EINVAL && !v, "json: 513 do not");
	err = (struct hutch_err){ 0 };
	/* Brackets in strings (escaped quotes too) and comments are not nesting. */
	char *quoted = malloc(2000), *t = quoted;
	t += sprintf(t, "{\"a\\\"\": \"");
	for (int i = 0; i < 600; i++)
		*t++ = '[';
	t += sprintf(t, "\" /* {{{ */, \"b\": [1]}");
	ok(hutch_json_check_depth(quoted, "doc", &err) == 0 &&
		   hutch_json_parse(quoted, "doc", &v, &err) == 0,
	   "json: brackets in strings and comments do not count (%s)", err.msg);
	yajl_tree_free(v);
	free(quoted);
	free(deep);
	free(max);
	free(over);
}

/* Each element with its field name; absent and null are no array, a non-array an error. */
static void test_json_items(void)
{
	struct hutch_err err = { 0 };
	_cleanup_json_ yajl_val top = NULL;
	struct hutch_json_items it;
	char names[512] = "";
	ok(hutch_json_parse("{\"a\":[1,2],\"n\":null,\"s\":\"x\"}", "t", &top, &err) == 0,
	   "items: parsed");
	ok(hutch_json_items(top, "a", "t.a", &it, &err) == 0 && it.n == 2, "items: two");
	for (yajl_val v; hutch_json_next(&it, &v);)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s=%lld ", it.field,
			 YAJL_GET_INTEGER(v));
	ok(!strcmp(names, "t.a[0]=1 t.a[1]=2 "), "items: in order, named (%s)", names);
	ok(hutch_json_items(top, "n", "t.n", &it, &err) == 0 && !it.arr && it.n == 0 &&
		   !hutch_json_next(&it, &(yajl_val){ 0 }),
	   "items: null is none");
	ok(hutch_json_items(top, "s", "t.s", &it, &err) == -EINVAL &&
		   !strcmp(err.msg, "t.s: expected an array"),
	   "items: a string is refused by name (%s)", err.msg);
}

/* Numbers past INT64_MAX keep their digits; a NULL key writes the value alone. */
static void test_json_gen_numbers(void)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_int(g, "i", -5);
	hutch_json_gen_u64(g, "u", UINT64_MAX);
	hutch_json_gen_bool(g, "b", true);
	hutch_json_gen_str(g, "a");
	yajl_gen_array_open(g);
	hutch_json_gen_u64(g, NULL, 7);
	hutch_json_gen_bool(g, NULL, false);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	_cleanup_free_ char *text = hutch_json_gen_finish(g, NULL);
	ok(!strcmp(text, "{\"i\":-5,\"u\":18446744073709551615,\"b\":true,\"a\":[7,false]}"),
	   "json gen: int, u64 past INT64_MAX, bool, keyless in an array (%s)", text);
}

/* An optional library: loaded with its symbols, or refused naming what is missing. */
static void test_dl_load(void)
{
	struct hutch_err err = { 0 };
	double (*cos_fn)(double) = NULL;
	void *dl = NULL;
	const struct hutch_dl_sym ok_syms[] = { { (void **)&cos_fn, "cos" } };
	int r = hutch_dl_load("libm.so.6", ok_syms, 1, "the test", "libc6", &dl, &err);
	ok(r == 0 && dl && cos_fn && cos_fn(0.0) == 1.0, "dl: libm.so.6's cos loads and runs: %s",
	   err.msg);
	void *missing = NULL, *dl2 = NULL;
	const struct hutch_dl_sym bad_syms[] = { { (void **)&cos_fn, "cos" },
						 { &missing, "hutch_no_such_symbol" } };
	r = hutch_dl_load("libm.so.6", bad_syms, 2, "the test", "libc6", &dl2, &err);
	ok(r == -ENOTSUP && !dl2 && strstr(err.msg, "libm.so.6 lacks hutch_no_such_symbol"),
	   "dl: a missing symbol is named (%s)", err.msg);
	hutch_err_clear(&err);
	r = hutch_dl_load("libhutch-none.so.9", ok_syms, 1, "the test", "nothing", &dl2, &err);
	ok(r == -ENOTSUP && strstr(err.msg, "the test needs libhutch-none.so.9 (apt-get install "
					    "nothing): "),
	   "dl: a missing library is named with its package (%s)", err.msg);
}

/* hutch_chase: a link is followed only where no other user could have planted it. */
static void test_chase(const char *tmp)
{
	struct hutch_err err = { 0 };
	char dir[256], open_dir[256], path[512];
	snprintf(dir, sizeof(dir), "%s/chase", tmp);
	snprintf(open_dir, sizeof(open_dir), "%s/chase/open", tmp);
	mkdir(dir, 0755);
	mkdir(open_dir, 0755);
	chmod(open_dir, 0777); /* past the umask: writable by anyone */
	snprintf(path, sizeof(path), "%s/real", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/link", dir);
	(void)!symlink("real", path);
	snprintf(path, sizeof(path), "%s/open/link", dir);
	(void)!symlink("../real", path);

	snprintf(path, sizeof(path), "%s/link", dir);
	int fd = hutch_chase("--workspace", path, 0, NULL, &err);
	char *real = fd >= 0 ? hutch_fd_realpath(fd) : hutch_xstrdup("");
	char want[600];
	snprintf(want, sizeof(want), "%s/real", dir);
	ok(fd >= 0 && !strcmp(real, want),
	   "a link in a directory only its owner writes is followed");
	free(real);
	if (fd >= 0)
		close(fd);
	fd = hutch_chase("--workspace", path, HUTCH_CHASE_NOFOLLOW, NULL, &err);
	ok(fd == -ELOOP && strstr(err.msg, "--workspace ") && strstr(err.msg, "/link: a symlink"),
	   "NOFOLLOW refuses a link as the last component, naming it");
	snprintf(path, sizeof(path), "%s/open/link/x", dir);
	fd = hutch_chase("--bind", path, 0, NULL, &err);
	ok(fd == -ELOOP && strstr(err.msg, "open/link: a symlink in a directory that another"),
	   "a link in a directory anyone can write is refused, naming it");
	snprintf(path, sizeof(path), "%s/real/missing/x", dir);
	fd = hutch_chase("--bind", path, 0, NULL, &err);
	ok(fd == -ENOENT && strstr(err.msg, "real/missing"), "a missing component is named");

	char *name = NULL;
	snprintf(path, sizeof(path), "%s/link/report.json", dir);
	fd = hutch_chase("--report", path, HUTCH_CHASE_PARENT, &name, &err);
	real = fd >= 0 ? hutch_fd_realpath(fd) : hutch_xstrdup("");
	ok(fd >= 0 && name && !strcmp(name, "report.json") && !strcmp(real, want),
	   "PARENT: the directory (through a trusted link) and the last name");
	free(real);
	free(name);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/..", dir);
	ok(hutch_chase("--report", path, HUTCH_CHASE_PARENT, &name, &err) == -EISDIR,
	   "PARENT: a path ending in .. names no file");
	snprintf(path, sizeof(path), "%s/real", dir);
	ok(hutch_chase_type("--image", path, 0, S_IFREG, NULL, &err) == -EINVAL &&
		   strstr(err.msg, "not a regular file"),
	   "chase_type: the wrong type is refused");
}

static void test_read_caller_file(const char *tmp)
{
	struct hutch_err err = { 0 };
	char path[512], *buf = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/profile.json", tmp);
	hutch_write_atomic(path, "{}", 2, 0600, &err);
	ok(hutch_read_caller_file("--profile", path, 1024, 100, &buf, &len, &err) == 0 &&
		   len == 2 && !strcmp(buf, "{}"),
	   "a regular file is read whole");
	free(buf);
	ok(hutch_read_caller_file("--profile", path, 1, 100, &buf, &len, &err) == -EFBIG,
	   "past max: refused");
	int file = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/dev/fd/%d", file);
	int twice = 0;
	for (int i = 0; i < 2; i++) {
		if (hutch_read_caller_file("--env-file", path, 1024, 100, &buf, &len, &err) == 0 &&
		    len == 2)
			twice++;
		free(buf);
		buf = NULL;
	}
	ok(twice == 2, "/dev/fd/N of a file: read from its start each time it is named");
	close(file);
	snprintf(path, sizeof(path), "%s/fifo", tmp);
	mkfifo(path, 0600);
	double t0 = hutch_now_ms();
	int r = hutch_read_caller_file("--env-file", path, 1024, 5000, &buf, &len, &err);
	ok(r == -ENODATA && hutch_now_ms() - t0 < 1000 && strstr(err.msg, "no writer"),
	   "a FIFO with no writer is an error at once, not a wait");
	int p[2];
	(void)!pipe(p);
	(void)!write(p[1], "A=1\n", 4);
	close(p[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", p[0]);
	r = hutch_read_caller_file("--env-file", path, 1024, 1000, &buf, &len, &err);
	ok(r == 0 && !strcmp(buf, "A=1\n"), "/dev/fd/N: the caller's pipe, as <(...) gives");
	free(buf);
	close(p[0]);
	(void)!pipe(p);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	r = hutch_read_caller_file("--env-file", path, 1024, 100, &buf, &len, &err);
	ok(r == -ETIMEDOUT, "a pipe whose writer never closes: an error at the deadline");
	close(p[0]);
	close(p[1]);
}

/* The temp file is O_EXCL under a random name: a FIFO or link planted beside can't catch it. */
static void test_write_atomic_planted(const char *tmp)
{
	struct hutch_err err = { 0 };
	char path[512], target[512], link[512];
	snprintf(target, sizeof(target), "%s/victim", tmp);
	hutch_write_atomic(target, "keep", 4, 0600, &err);
	snprintf(link, sizeof(link), "%s/r.json", tmp);
	(void)!symlink(target, link);
	snprintf(path, sizeof(path), "%s/.r.json.tmp.%d", tmp, (int)getpid());
	mkfifo(path, 0600);
	ok(hutch_write_atomic(link, "new", 3, 0600, &err) == 0, "written beside a planted FIFO");
	char *buf = NULL;
	size_t len = 0;
	hutch_read_file_at(AT_FDCWD, target, 64, &buf, &len, &err);
	ok(buf && !strcmp(buf, "keep"), "a link at the name is replaced, its target untouched");
	free(buf);
}

int main(void)
{
	char tmp[] = "/tmp/hutch-test-base-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	test_errors();
	test_dl_load();
	test_parse();
	test_in_root(tmp);
	test_files(tmp);
	test_chase(tmp);
	test_read_caller_file(tmp);
	test_write_atomic_planted(tmp);
	test_close_fds();
	test_proc_stat();
	test_json_find();
	test_json_find_long();
	test_utf8();
	test_json_getters();
	test_json_depth();
	test_json_gen_numbers();
	test_json_items();
	test_utc_stamp();
	test_signals_not_default();
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	(void)!system(cmd);
	return tap_done();
}
