// SPDX-License-Identifier: Apache-2.0
/*
 * image build's flags, without a store or root: --entrypoint/--cmd as a JSON array or a
 * shell command, and the checks of --copy, --workdir and --user (each error names its flag).
 */
#include "tap.h"
#include "rt.h"
#include "rt-image.h"

#include <errno.h>
#include <stdlib.h>

static bool argv_is(char **v, const char *a, const char *b, const char *c)
{
	const char *want[] = { a, b, c, NULL };
	for (size_t i = 0; i < 4; i++) {
		if (!want[i] || !v[i])
			return !want[i] && !v[i];
		if (strcmp(want[i], v[i]))
			return false;
	}
	return true;
}

static void test_argv(void)
{
	struct hutch_err err = { 0 };
	char **v = NULL;
	ok(rt_build_parse_argv("--cmd", "[\"echo\",\"a b\"]", &v, &err) == 0 &&
		   argv_is(v, "echo", "a b", NULL),
	   "a JSON array is the argv");
	hutch_strv_free(v);
	ok(rt_build_parse_argv("--cmd", "echo $HOME", &v, &err) == 0 &&
		   argv_is(v, "/bin/sh", "-c", "echo $HOME"),
	   "a plain string is sh -c STRING");
	hutch_strv_free(v);
	ok(rt_build_parse_argv("--entrypoint", "[]", &v, &err) == 0 && v && !v[0],
	   "[] is an empty argv");
	hutch_strv_free(v);
	ok(rt_build_parse_argv("--entrypoint", "[\"a\",1]", &v, &err) == -EINVAL &&
		   strstr(err.msg, "--entrypoint"),
	   "a non-string element is refused (%s)", err.msg);
	ok(rt_build_parse_argv("--cmd", "[oops", &v, &err) < 0 && strstr(err.msg, "--cmd"),
	   "bad JSON is refused, naming the flag (%s)", err.msg);
	ok(rt_build_parse_argv("--cmd", "{ echo; }", &v, &err) == 0 &&
		   argv_is(v, "/bin/sh", "-c", "{ echo; }"),
	   "only a leading [ means JSON");
	hutch_strv_free(v);
	ok(rt_build_parse_argv("--cmd", "  ", &v, &err) == -EINVAL, "an empty command is refused");
}

static int check(struct rt_build *b, struct hutch_err *err)
{
	char *argv[] = { "build", NULL };
	b->from = "base";
	return rt_build_check(1, argv, 1, b, err);
}

static void test_checks(void)
{
	struct hutch_err err = { 0 };
	char *c1[] = { "src:/opt/x" }, *c2[] = { "src:opt/x" }, *c3[] = { "src:/a/../b" },
	     *c4[] = { "src" }, *c5[] = { "a:b:/x..y/z" };
	struct rt_build b = { .copies = { c1, 1 } };
	ok(check(&b, &err) == 0, "--copy SRC:/DST");
	b.copies = (struct rt_strv){ c2, 1 };
	ok(check(&b, &err) == -EINVAL && strstr(err.msg, "--copy src:opt/x: DST must be"),
	   "a relative DST is refused (%s)", err.msg);
	b.copies = (struct rt_strv){ c3, 1 };
	ok(check(&b, &err) == -EINVAL, "a DST with .. is refused");
	b.copies = (struct rt_strv){ c4, 1 };
	ok(check(&b, &err) == -EINVAL && strstr(err.msg, "expected SRC:DST"), "no DST");
	b.copies = (struct rt_strv){ c5, 1 };
	ok(check(&b, &err) == 0, "SRC may hold ':', and x..y is a name");
	b = (struct rt_build){ .workdir = "rel" };
	ok(check(&b, &err) == -EINVAL && strstr(err.msg, "--workdir"), "a relative --workdir");
	const char *users[] = { "a b", ":g", "u:", "u:g:h", "" },
		   *good[] = { "1000", "u:g", "0:0" };
	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		b = (struct rt_build){ .user = users[i] };
		ok(check(&b, &err) == -EINVAL && strstr(err.msg, "--user"), "--user '%s' refused",
		   users[i]);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		b = (struct rt_build){ .user = good[i] };
		ok(check(&b, &err) == 0, "--user %s", good[i]);
	}
}

int main(void)
{
	test_argv();
	test_checks();
	return tap_done();
}
