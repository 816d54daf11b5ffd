// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: `hutch sandbox`'s flags and profile. The input up to its first two NUL
 * bytes in a row (all of it when there are none) is a profile file, read through a memfd;
 * what follows them (again all of it) is argv, one argument per NUL-separated piece. Options
 * that rt_sb_check accepts must make an OCI config that hutch's own spec parser accepts.
 */
#include "fuzz.h"
#include "rt-sandbox.h"
#include "rt-sandbox-plan.h"
#include "rt-spec.h"
#include "rt-spec-build.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_ARGS 512

static int memfd = -1;
static char memfd_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("fuzz-sandbox-profile", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("memfd_create");
		exit(1);
	}
	snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	return 0;
}

/* What the sandbox runs: rt_sb_spec's typed spec (natively, as create takes it), written as a
 * delegate's config.json, which rt_spec_parse must accept. The plan is what a rootless run on
 * a host uid would get. */
static void check_spec(const struct rt_sb_opts *o)
{
	struct rt_sb_plan plan = { .rootfs = "/fuzz/rootfs",
				   .host_uid = 1000,
				   .host_gid = 1000,
				   .sub_uid = 100000,
				   .sub_gid = 100000,
				   .userns = true,
				   .with_init = true,
				   .cgroups_path = "/hutch/sandbox/fuzz" };
	struct hutch_err err = { 0 };
	struct rt_spec *spec = NULL, *parsed = NULL;
	char *json = NULL;

	if (o->isolation != RT_SB_ISO_NAMESPACES)
		return; /* host mode builds no config */
	struct rt_sb_bind_ids ids[o->n_binds + 1];
	struct rt_sb_src srcs[o->n_binds + 1];
	memset(ids, 0, sizeof(ids));
	memset(srcs, 0, sizeof(srcs));
	plan.binds = ids;
	/* Where rt_sb_anchor_paths would have mounted each resolved path in scratch. */
	plan.ws.at = (char *)"/fuzz/src/workspace";
	for (size_t i = 0; i < o->n_binds; i++)
		srcs[i].at = (char *)"/fuzz/src/bind";
	plan.srcs = srcs;
	plan.n_srcs = o->n_binds;
	int r = rt_sb_plan_process(o, &plan, &err);
	if (r < 0 && plan.argv && !plan.argv[0]) { /* a store image's: its config names it */
		hutch_strv_free(plan.argv);
		free(plan.cwd);
		return;
	}
	FUZZ_CHECK(r == 0, "options rt_sb_check accepts plan no process: %s", err.msg);
	FUZZ_CHECK(rt_sb_spec(o, &plan, "/fuzz", &spec, &err) == 0,
		   "options rt_sb_check accepts make no spec: %s", err.msg);
	FUZZ_CHECK(rt_spec_write(spec, &json, &err) == 0, "the sandbox's spec is not written: %s",
		   err.msg);
	FUZZ_CHECK(rt_spec_parse(json, NULL, &parsed, &err) == 0,
		   "options rt_sb_check accepts make a config rt_spec_parse refuses: %s\n%s",
		   err.msg, json);
	rt_spec_free(parsed);
	rt_spec_free(spec);
	free(json);
	hutch_strv_free(plan.argv);
	free(plan.cwd);
}

static void check(const struct rt_sb_opts *o)
{
	struct hutch_err err = { 0 };
	if (rt_sb_check(o, &err) == 0)
		check_spec(o);
	else
		FUZZ_CHECK(err.msg[0], "rt_sb_check failed without a message");
}

/* Files named on the command line are the caller's own choice: here they are the memfd, so
 * that the fuzzer reads its own bytes rather than the host's files. */
static char *file_arg(char **argv, int i)
{
	static const char *const flags[] = { "--profile", "--env-file" };
	for (size_t k = 0; k < ARRAY_SIZE(flags); k++) {
		size_t n = strlen(flags[k]);
		if (i > 1 && !strcmp(argv[i - 1], flags[k]))
			return hutch_xstrdup(memfd_path);
		if (!strncmp(argv[i], flags[k], n) && argv[i][n] == '=')
			return hutch_xasprintf("%s=%s", flags[k], memfd_path);
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = hutch_xmalloc(size + 1), *argv[MAX_ARGS + 1], *owned[MAX_ARGS] = { 0 };
	struct rt_sb_opts o;
	struct hutch_err err = { 0 };
	int argc = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	const char *split = memmem(data, size, "\0\0", 2);
	size_t plen = split ? (size_t)(split - (const char *)data) : size;
	const char *args = split ? text + plen + 2 : text;
	const char *end = text + size;

	FUZZ_CHECK(ftruncate(memfd, 0) == 0 && pwrite(memfd, data, plen, 0) == (ssize_t)plen,
		   "memfd: %s", strerror(errno));
	rt_sb_opts_init(&o);
	if (rt_sb_load_profile(&o, memfd_path, &err) == 0)
		check(&o);
	else
		FUZZ_CHECK(err.msg[0], "rt_sb_load_profile failed without a message");
	rt_sb_opts_free(&o);

	argv[argc++] = "sandbox";
	for (const char *p = args; p < end && argc < MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = (char *)p; /* a final NUL ends the last piece, adds none */
	argv[argc] = NULL;
	for (int i = 1; i < argc; i++)
		if ((owned[i] = file_arg(argv, i)))
			argv[i] = owned[i];

	rt_sb_opts_init(&o);
	memset(&err, 0, sizeof(err));
	if (rt_sb_parse_args(&o, argc, argv, &err) == 0)
		check(&o);
	else
		FUZZ_CHECK(err.msg[0], "rt_sb_parse_args failed without a message");
	rt_sb_opts_free(&o);

	for (int i = 0; i < argc; i++)
		free(owned[i]);
	free(text);
	return 0;
}
