// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: config.json as an untrusted caller hands it over. The scanner that cuts
 * linux.seccomp out unparsed (hutch_json_find_object, rt_spec_cut_seccomp), held to yajl's
 * parse of the same text; then the whole spec parser with no bundle (nothing on disk is
 * resolved), the profile it cut as a cache miss parses it, and exec --process's parser.
 */
#include "fuzz.h"
#include "hutch-json.h"
#include "rt-spec-internal.h"

static yajl_val member(yajl_val obj, const char *key)
{
	for (size_t i = 0; YAJL_IS_OBJECT(obj) && i < obj->u.object.len; i++)
		if (!strcmp(obj->u.object.keys[i], key))
			return obj->u.object.values[i];
	return NULL;
}

/* A value as yajl sees it, in one canonical text: what a cut must agree with. */
static char *canon(yajl_val v)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	hutch_json_gen_value(g, v);
	yajl_gen_get_buf(g, &buf, &len);
	char *s = strndup((const char *)buf, len);
	yajl_gen_free(g);
	return s;
}

/*
 * The scanner's answer is bytes of the text that start with '{' and end with '}'; when yajl
 * takes the whole text, those bytes alone are its linux.seccomp, and the rest with null in
 * their place is everything else unchanged. A cut that disagreed with yajl would compile a
 * profile other than the one the spec's parser (and any other runtime) reads.
 */
static void check_cut(const char *text)
{
	size_t at = 0, len = 0, n = strlen(text);

	if (!hutch_json_find_object(text, "linux", "seccomp", &at, &len))
		return;
	FUZZ_CHECK(at < n && len >= 2 && len <= n - at, "at %zu len %zu of %zu", at, len, n);
	FUZZ_CHECK(text[at] == '{' && text[at + len - 1] == '}', "at %zu len %zu", at, len);

	char *copy = strdup(text), *rest = NULL;
	const char *seccomp = NULL;
	FUZZ_CHECK(rt_spec_cut_seccomp(copy, &rest, &seccomp) == 1, "cut refused what was found");
	FUZZ_CHECK(seccomp == copy + at && strlen(seccomp) == len, "cut at %zu", at);

	yajl_val whole = yajl_tree_parse(text, NULL, 0);
	if (whole) {
		yajl_val lx = member(whole, "linux");
		yajl_val sc = member(lx, "seccomp");
		FUZZ_CHECK(YAJL_IS_OBJECT(sc), "yajl's linux.seccomp is not an object");
		yajl_val alone = yajl_tree_parse(seccomp, NULL, 0);
		FUZZ_CHECK(alone, "the cut bytes alone are not JSON");
		char *a = canon(alone), *b = canon(sc);
		FUZZ_CHECK(!strcmp(a, b), "cut %s\nyajl %s", a, b);
		free(a);
		free(b);
		yajl_tree_free(alone);

		yajl_val parsed_rest = yajl_tree_parse(rest, NULL, 0);
		FUZZ_CHECK(parsed_rest, "the rest is not JSON");
		static struct yajl_val_s null_val = { .type = yajl_t_null };
		for (size_t i = 0; i < lx->u.object.len; i++)
			if (lx->u.object.values[i] == sc)
				lx->u.object.values[i] = &null_val;
		a = canon(parsed_rest);
		b = canon(whole);
		FUZZ_CHECK(!strcmp(a, b), "rest %s\nyajl %s", a, b);
		for (size_t i = 0; i < lx->u.object.len; i++)
			if (lx->u.object.values[i] == &null_val)
				lx->u.object.values[i] = sc;
		free(a);
		free(b);
		yajl_tree_free(parsed_rest);
		yajl_tree_free(whole);
	}
	free(rest);
	free(copy);
}

static void parse_spec(const char *text)
{
	struct hutch_err err = { 0 };
	struct rt_spec *spec = NULL;

	int r = rt_spec_parse(text, NULL, &spec, &err);
	if (r < 0) {
		FUZZ_CHECK(err.msg[0], "rt_spec_parse failed (%d) without a message", r);
		FUZZ_CHECK(!spec, "rt_spec_parse failed but returned a spec");
		return;
	}
	FUZZ_CHECK(spec && spec->root_path && spec->process.args && spec->process.args[0],
		   "a parsed spec lacks what it requires");
	if (spec->seccomp_json) { /* what sc_compile_json parses on a cache miss */
		struct sc_config cfg = { 0 };
		struct hutch_err e = { 0 };
		if (sc_config_parse(spec->seccomp_json, "linux.seccomp", &cfg, &e) < 0)
			FUZZ_CHECK(e.msg[0], "sc_config_parse failed without a message");
		sc_config_free(&cfg);
	}
	rt_spec_free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct hutch_err err = { 0 };
	struct rt_process p;

	check_cut(text);
	parse_spec(text);
	if (rt_process_parse(text, &p, &err) >= 0) /* exec --process FILE */
		rt_process_free(&p);
	else
		FUZZ_CHECK(err.msg[0], "rt_process_parse failed without a message");
	free(text);
	return 0;
}
