// SPDX-License-Identifier: Apache-2.0
/*
 * The one flag parser (rt-cli.c): every kind of flag into its field, the --f=v, --f v and
 * -f v forms, "--", positionals, errors that name the flag, and the two modes (flags after
 * positionals; the sandbox's conventions). Pure parsing: no root needed.
 */
#include "tap.h"
#include "rt.h"

#include <stdarg.h>
#include <unistd.h>

struct t_flags {
	bool all;
	const char *name;
	int64_t count;
	struct rt_strv env;
	char seen[64]; /* what the fn kinds were given, ';'-separated */
};

static int note(void *field, const char *v, struct hutch_err *err)
{
	char *seen = field;
	if (!strcmp(v, "bad"))
		return hutch_fail(err, EINVAL, "--fn %s: bad value", v);
	strncat(seen, v, 63 - strlen(seen));
	strncat(seen, ";", 63 - strlen(seen));
	return 0;
}

#define F(field) offsetof(struct t_flags, field)
static const struct rt_flag t_flags[] = {
	{ "all", 'a', RT_FLAG_BOOL, "all of them", F(all), NULL },
	{ "name", 'n', RT_FLAG_STR, "a name", F(name), NULL },
	{ "count", 'c', RT_FLAG_INT, "a number", F(count), NULL },
	{ "env", 'e', RT_FLAG_STRV, "repeatable", F(env), NULL },
	{ "fn", 0, RT_FLAG_FN, "a callback", F(seen), note },
	{ "fn-bool", 0, RT_FLAG_FN_BOOL, NULL, F(seen), note },
	{ "key", 0, RT_FLAG_PROFILE, NULL, F(seen), note },
};
static const struct rt_flags runc = RT_FLAGS(t_flags, 0);
static const struct rt_flags anywhere = RT_FLAGS(t_flags, RT_PARSE_ANYWHERE);
static const struct rt_flags sandbox = RT_FLAGS(t_flags, RT_PARSE_SANDBOX);

static char *argv_buf[32];
static bool help;

/* Parses the NULL-terminated arguments after the verb "verb" into f (zeroed first). */
static int parse(const struct rt_flags *def, struct t_flags *f, struct hutch_err *err, ...)
{
	va_list ap;
	int argc = 0;
	argv_buf[argc++] = "verb";
	va_start(ap, err);
	for (char *a; (a = va_arg(ap, char *));)
		argv_buf[argc++] = a;
	va_end(ap);
	argv_buf[argc] = NULL;
	rt_flags_free(def, f);
	memset(f, 0, sizeof(*f));
	hutch_err_clear(err);
	help = false;
	return rt_parse_flags(def, argc, argv_buf, f, &help, err);
}

static void test_kinds(void)
{
	struct t_flags f = { 0 };
	struct hutch_err err;
	int r = parse(&runc, &f, &err, "--all", "--name", "x", "--count=-7", "--fn", "v", NULL);
	ok(r == 7 && f.all && !strcmp(f.name, "x") && f.count == -7 && !strcmp(f.seen, "v;"),
	   "bool, string, int and fn flags fill their fields");
	r = parse(&runc, &f, &err, "--name=a=b", "--count", "12", NULL);
	ok(r == 4 && !strcmp(f.name, "a=b") && f.count == 12, "--f=v keeps what follows '='");
	r = parse(&runc, &f, &err, "-a", "-n", "y", "-c", "3", NULL);
	ok(r == 6 && f.all && !strcmp(f.name, "y") && f.count == 3, "short flags, -f v");
	r = parse(&runc, &f, &err, "--name", "1", "--name=2", NULL);
	ok(r == 4 && !strcmp(f.name, "2"), "the last string given wins");
	r = parse(&runc, &f, &err, "--name=", NULL);
	ok(r == 2 && f.name && !*f.name, "--f= gives the empty string");
	r = parse(&runc, &f, &err, "-e", "A=1", "--env", "B=2", "--env=A=3", NULL);
	ok(r == 6 && f.env.n == 3 && !strcmp(f.env.v[0], "A=1") && !strcmp(f.env.v[1], "B=2") &&
		   !strcmp(f.env.v[2], "A=3") && !f.env.v[3],
	   "a repeated strv flag keeps every value, in order, NULL-terminated");
	r = parse(&runc, &f, &err, "--fn-bool", "--fn-bool=false", NULL);
	ok(r == 3 && !strcmp(f.seen, ";false;"), "fn-bool gets \"\" alone, VALUE after '='");
	r = parse(&runc, &f, &err, "--count", "ten", NULL);
	ok(r == -EINVAL && strstr(err.msg, "--count") && strstr(err.msg, "ten"),
	   "an int flag refuses a word: %s", err.msg);
	r = parse(&runc, &f, &err, "--fn", "bad", NULL);
	is_str(err.msg, "--fn bad: bad value", "a fn's own error is the error");
	r = parse(&runc, &f, &err, "--key", "v", NULL);
	is_str(err.msg, "verb: unknown flag --key", "a profile key is not a flag");
	rt_flags_free(&runc, &f);
	ok(!f.env.v && !f.env.n, "rt_flags_free empties the strv");
}

static void test_bools(void)
{
	struct t_flags f = { 0 };
	struct hutch_err err;
	int r = parse(&runc, &f, &err, "--all=true", NULL);
	ok(r == 2 && f.all, "--bool=true sets it");
	r = parse(&runc, &f, &err, "--all", "--all=false", NULL);
	ok(r == 3 && !f.all, "--bool=false clears it");
	r = parse(&runc, &f, &err, "--all=yes", NULL);
	is_str(err.msg, "verb: flag --all takes no value", "a bool given a value fails");
	r = parse(&runc, &f, &err, "--all", "x", NULL);
	ok(r == 2 && f.all && !strcmp(argv_buf[2], "x"), "a bool takes no next argument");
}

static void test_errors(void)
{
	struct t_flags f = { 0 };
	struct hutch_err err;
	ok(parse(&runc, &f, &err, "--bogus=1", NULL) == -EINVAL, "an unknown flag fails");
	is_str(err.msg, "verb: unknown flag --bogus", "its error names the flag, not the value");
	parse(&runc, &f, &err, "-x", NULL);
	is_str(err.msg, "verb: unknown flag -x", "an unknown short flag is named");
	parse(&runc, &f, &err, "-an", "x", NULL);
	is_str(err.msg, "verb: unknown flag -an", "short flags do not combine (nor does runc)");
	ok(parse(&runc, &f, &err, "--name", NULL) == -EINVAL, "a missing value fails");
	is_str(err.msg, "verb: flag --name requires a value", "and names the flag");
	parse(&runc, &f, &err, "-n", NULL);
	is_str(err.msg, "verb: flag --name requires a value", "by its long name, given short");
	parse(&sandbox, &f, &err, "--name", NULL);
	is_str(err.msg, "--name: requires a value", "the sandbox's own wording");
	parse(&sandbox, &f, &err, "--bogus=1", NULL);
	is_str(err.msg, "verb: unknown flag --bogus=1", "the sandbox names the whole argument");
	ok(parse(&sandbox, &f, &err, "-", "x", NULL) == -EINVAL, "to the sandbox, - is a flag");
	ok(parse(&sandbox, &f, &err, "--help", NULL) == -EINVAL && !help,
	   "and --help is not one of its flags");
}

static void test_suggestions(void)
{
	static const char *const cases[][2] = {
		{ "--nmae", "verb: unknown flag --nmae (did you mean --name?)" }, /* a swap */
		{ "--cuont=3", "verb: unknown flag --cuont (did you mean --count?)" },
		{ "--al", "verb: unknown flag --al (did you mean --all?)" }, /* its start */
		{ "--counter",
		  "verb: unknown flag --counter (did you mean --count?)" }, /* 2 more */
		{ "--fn-boo", "verb: unknown flag --fn-boo (did you mean --fn-bool?)" },
		{ "--fx", "verb: unknown flag --fx (did you mean --fn?)" },
		{ "--ke", "verb: unknown flag --ke" }, /* a profile key is no suggestion */
		{ "--nv", "verb: unknown flag --nv (did you mean --env?)" },
		{ "--ab", "verb: unknown flag --ab" },	     /* short: two edits are too many */
		{ "--fnv", "verb: unknown flag --fnv" },     /* --fn and --env: no clear best */
		{ "--xyzzy", "verb: unknown flag --xyzzy" }, /* nothing close */
		{ "-nmae", "verb: unknown flag -nmae" },     /* single-dash: named as given */
	};
	struct t_flags f = { 0 };
	struct hutch_err err;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		parse(&runc, &f, &err, cases[i][0], NULL);
		is_str(err.msg, cases[i][1], "%s: %s", cases[i][0], err.msg);
	}
	parse(&sandbox, &f, &err, "--nmae=x", NULL);
	is_str(err.msg, "verb: unknown flag --nmae=x (did you mean --name?)",
	       "the sandbox names the whole argument, then the suggestion");
	rt_flags_free(&runc, &f);
}

static void test_positionals(void)
{
	struct t_flags f = { 0 };
	struct hutch_err err;
	int r = parse(&runc, &f, &err, "--all", "id", "--name", "x", NULL);
	ok(r == 2 && !f.name && !strcmp(argv_buf[2], "id") && !strcmp(argv_buf[3], "--name"),
	   "flags end at the first positional (exec ID sh -c ...)");
	r = parse(&runc, &f, &err, "--", "--all", NULL);
	ok(r == 2 && !f.all && !strcmp(argv_buf[2], "--all"), "-- ends flags");
	r = parse(&runc, &f, &err, "-", "x", NULL);
	ok(r == 1 && !strcmp(argv_buf[1], "-"), "- alone is a positional");
	r = parse(&anywhere, &f, &err, "a", "--name", "n", "b", "--", "--all", NULL);
	ok(r == 4 && !strcmp(f.name, "n") && !f.all && !strcmp(argv_buf[4], "a") &&
		   !strcmp(argv_buf[5], "b") && !strcmp(argv_buf[6], "--all"),
	   "anywhere: flags after positionals, which keep their order at the end");
	r = parse(&runc, &f, &err, "--all", "-h", NULL);
	ok(r == 3 && help, "-h asks for help");
	r = parse(&runc, &f, &err, "--help", "--bogus", NULL);
	ok(r == -EINVAL, "help does not hide a bad flag after it");
	r = parse(&sandbox, &f, &err, "-a", "--", "cmd", "--all", NULL);
	ok(r == 3 && f.all && !strcmp(argv_buf[3], "cmd"), "sandbox: the command after --");
	rt_flags_free(&runc, &f);
}

static void test_help(void)
{
	char buf[1024] = { 0 };
	int p[2];
	if (pipe(p) < 0)
		return;
	rt_flags_help(p[1], &runc, 20, RT_HELP_SHORT | RT_HELP_VALUE);
	rt_flags_help(p[1], &runc, 8, 0);
	close(p[1]);
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	ok(n > 0 && strstr(buf, "  -a, --all            all of them\n") &&
		   strstr(buf, "  -n, --name VALUE     a name\n") &&
		   strstr(buf, "   --fn VALUE          a callback\n") &&
		   strstr(buf, "  --name   a name\n") && !strstr(buf, "fn-bool") &&
		   !strstr(buf, "--key"),
	   "help lines: short, VALUE, widths; flags without help are not listed");
}

/* --root wins over HUTCH_ROOT, which must be absolute, over the run dir; .sandbox, the
 * root's sandbox state, is no container id. */
static void test_root(void)
{
	struct hutch_err err = { 0 };
	const char *root = NULL;
	unsetenv("HUTCH_ROOT");
	ok(rt_root_resolve(NULL, &root, &err) == 0 && !strcmp(root, rt_run_dir()) &&
		   !strcmp(rt_root(), rt_run_dir()),
	   "root: the run dir by default");
	setenv("HUTCH_ROOT", "/tmp/h-root", 1);
	ok(rt_root_resolve(NULL, &root, &err) == 0 && !strcmp(root, "/tmp/h-root") &&
		   !strcmp(rt_root_flag(), "HUTCH_ROOT"),
	   "root: HUTCH_ROOT when set");
	ok(rt_root_resolve("/tmp/flag-root", &root, &err) == 0 && !strcmp(root, "/tmp/flag-root"),
	   "root: --root beats HUTCH_ROOT");
	setenv("HUTCH_ROOT", "", 1);
	ok(rt_root_resolve(NULL, &root, &err) == 0 && !strcmp(root, rt_run_dir()),
	   "root: an empty HUTCH_ROOT is unset");
	setenv("HUTCH_ROOT", "state", 1);
	ok(rt_root_resolve(NULL, &root, &err) == -EINVAL &&
		   !strcmp(err.msg, "HUTCH_ROOT: expected an absolute path, got state"),
	   "root: a relative HUTCH_ROOT is one error naming it");
	unsetenv("HUTCH_ROOT");
	ok(rt_validate_id(".sandbox", &err) == -EINVAL && strstr(err.msg, "reserved") &&
		   rt_validate_id(".sandbox2", &err) == 0,
	   "root: .sandbox is no container id");
}

int main(void)
{
	test_kinds();
	test_bools();
	test_errors();
	test_suggestions();
	test_positionals();
	test_help();
	test_root();
	return tap_done();
}
