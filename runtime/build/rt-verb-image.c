// SPDX-License-Identifier: Apache-2.0
/*
 * `hutch image SUBCOMMAND`: import, ls, inspect, rm, prune, build and status over the
 * store in images/. Each subcommand is a row of one table (name, usage, flags, function);
 * this file only parses, calls images/ and prints.
 */
#include "rt.h"
#include "rt-image.h"
#include "rt-sandbox-opts.h"
#include "img.h"
#include "hutch-json.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A subcommand: argv[0] is its name, flags its struct (struct image_flags, or struct
 * rt_build for build and status). */
struct sub {
	const char *name, *usage, *summary;
	const struct rt_flags *flags;
	size_t flags_size;
	bool own_help; /* its usage lists the flags; any --help or -h asks for help */
	int (*run)(struct rt_global *g, int argc, char **argv, int first, void *flags,
		   struct hutch_err *err);
};

struct image_flags {
	const char *name, *store, *format, *platform, *progress;
	bool quiet;
	struct img_limits limits; /* import's; 0: the default */
};

static void human(uint64_t b, char out[32])
{
	static const char *const u[] = { "B", "KB", "MB", "GB", "TB" };
	double v = (double)b;
	size_t i = 0;
	while (v >= 1000 && i + 1 < ARRAY_SIZE(u)) {
		v /= 1000;
		i++;
	}
	snprintf(out, 32, i ? "%.1f%s" : "%.0f%s", v, u[i]);
}

static int open_store(const char *store, bool create, bool excl, struct img_store **s,
		      struct hutch_err *err)
{
	return img_store_open(img_store_default(store), create, excl, s, err);
}

static int one_arg(int argc, char **argv, int first, struct hutch_err *err)
{
	if (argc - first != 1)
		return hutch_fail(err, EINVAL, "%s: expected exactly one argument", argv[0]);
	return 0;
}

/* The import limits (img_limits): 0 lifts one, leaving the store's reserve of free space. */
int rt_image_set_max_size(void *field, const char *v, struct hutch_err *err)
{
	uint64_t n;
	int r = rt_sb_parse_size(v, &n);
	if (r < 0)
		return rt_sb_size_error("--max-size", v, r, err);
	*(uint64_t *)field = n ? n : IMG_NO_LIMIT;
	return 0;
}

static int set_count(const char *flag, void *field, const char *v, struct hutch_err *err)
{
	uint64_t n;
	if (hutch_parse_u64(v, &n) < 0)
		return hutch_fail(err, EINVAL, "%s %s: expected a whole number (0: no limit)", flag,
				  v);
	*(uint64_t *)field = n ? n : IMG_NO_LIMIT;
	return 0;
}

int rt_image_set_max_entries(void *field, const char *v, struct hutch_err *err)
{
	return set_count("--max-entries", field, v, err);
}

static int set_max_ratio(void *field, const char *v, struct hutch_err *err)
{
	return set_count("--max-ratio", field, v, err);
}

#define STORE_HELP "image store (default $HUTCH_STORE or " IMG_STORE_DEFAULT ")"
#define LIMIT(f) offsetof(struct image_flags, limits.f)
static const struct rt_flag import_flags[] = {
	{ "name", 'n', RT_FLAG_STR,
	  "store it as NAME[:TAG] (default: the archive's, or the file name)",
	  offsetof(struct image_flags, name), NULL },
	{ "store", 0, RT_FLAG_STR, STORE_HELP, offsetof(struct image_flags, store), NULL },
	{ "max-size", 0, RT_FLAG_FN,
	  "disk the new layers may take unpacked (default: half the store's free space, at "
	  "most 64g; 0: no limit)",
	  LIMIT(max_size), rt_image_set_max_size },
	{ "max-entries", 0, RT_FLAG_FN,
	  "entries the new layers may hold (default 2000000; 0: no limit)", LIMIT(max_entries),
	  rt_image_set_max_entries },
	{ "max-ratio", 0, RT_FLAG_FN,
	  "how many times the layers' tar may outgrow their compressed size once past 1g "
	  "(default 100; 0: no limit)",
	  LIMIT(max_ratio), set_max_ratio },
	{ "progress", 0, RT_FLAG_STR,
	  "auto (the default: tty on a terminal, else none), tty (a line redrawn), plain (a "
	  "line a layer) or none",
	  offsetof(struct image_flags, progress), NULL },
	{ "platform", 0, RT_FLAG_STR,
	  "OS/ARCH[/VARIANT]: the image of an index to take, and what the image must be "
	  "(default: this host's)",
	  offsetof(struct image_flags, platform), NULL },
};
/* Flags may follow the positionals: `image import FILE --name N` reads naturally. */
static const struct rt_flags import_def = RT_FLAGS(import_flags, RT_PARSE_ANYWHERE);
static const struct rt_flag store_flags[] = {
	{ "store", 0, RT_FLAG_STR, STORE_HELP, offsetof(struct image_flags, store), NULL },
};
static const struct rt_flags store_def = RT_FLAGS(store_flags, RT_PARSE_ANYWHERE);
static const struct rt_flag ls_flags[] = {
	{ "format", 0, RT_FLAG_STR, "table (the default) or json",
	  offsetof(struct image_flags, format), NULL },
	{ "quiet", 'q', RT_FLAG_BOOL, "only the digests, one per line",
	  offsetof(struct image_flags, quiet), NULL },
	{ "store", 0, RT_FLAG_STR, STORE_HELP, offsetof(struct image_flags, store), NULL },
};
static const struct rt_flags ls_def = RT_FLAGS(ls_flags, RT_PARSE_ANYWHERE);

/* stdin into a file of the store's own temp dir: import reads files, and a tar from a pipe
 * is one. The temp dir goes with tmp_remove (prune takes what a killed import left). */
static int stdin_file(struct img_store *s, const struct img_limits *lim, char **tmp, int *lockfd,
		      char **path, struct hutch_err *err)
{
	TRY(img_tmp_create(s, "import", tmp, lockfd, err));
	*path = hutch_xasprintf("%s/%s/stdin", img_store_path(s), *tmp);
	_cleanup_close_ int fd = open(*path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "import -: %s", *path);
	return img_tmp_fill(s, 0, fd, lim, "import -", err);
}

enum progress { PROGRESS_NONE, PROGRESS_PLAIN, PROGRESS_TTY };

/* --progress: auto is tty on a terminal and none in a script, as docker's and buildah's
 * progress bars stay out of a pipe's way. */
static int progress_mode(const char *v, enum progress *out, struct hutch_err *err)
{
	if (!v || !strcmp(v, "auto"))
		*out = isatty(2) ? PROGRESS_TTY : PROGRESS_NONE;
	else if (!strcmp(v, "tty"))
		*out = PROGRESS_TTY;
	else if (!strcmp(v, "plain"))
		*out = PROGRESS_PLAIN;
	else if (!strcmp(v, "none"))
		*out = PROGRESS_NONE;
	else
		return hutch_fail(err, EINVAL, "--progress %s: expected auto, tty, plain or none",
				  v);
	return 0;
}

struct import_progress {
	enum progress mode;
	const char *what;
	struct timespec last;
	bool drawn;
};

/* tty: one line, redrawn at most ten times a second; plain: a line for each layer done. */
static void import_progress(void *arg, size_t layer, size_t layers, uint64_t bytes, bool done,
			    const char *digest)
{
	struct import_progress *p = arg;
	struct timespec now;
	char size[32];
	human(bytes, size);
	if (p->mode == PROGRESS_PLAIN) {
		if (done)
			fprintf(stderr, "import: layer %zu/%zu %.19s %s\n", layer, layers, digest,
				bytes ? size : "(in the store already)");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long ms =
		(now.tv_sec - p->last.tv_sec) * 1000LL + (now.tv_nsec - p->last.tv_nsec) / 1000000;
	if (!done && p->drawn && ms < 100)
		return;
	p->last = now;
	p->drawn = true;
	fprintf(stderr, "\r\033[Kimport %s: layer %zu/%zu, %s", p->what, layer, layers, size);
}

static int do_import(struct rt_global *g, int argc, char **argv, int first, void *flags,
		     struct hutch_err *err)
{
	const char *store = ((const struct image_flags *)flags)->store;
	_cleanup_(img_store_freep) struct img_store *s = NULL;
	struct img_import_result res = { 0 };
	char size[32];
	(void)g;
	const char *name = ((const struct image_flags *)flags)->name;
	_cleanup_free_ char *tmp = NULL, *path = NULL;
	int lockfd = -1, r = 0;
	TRY(one_arg(argc, argv, first, err));
	struct import_progress prog = { .what = argv[first] };
	TRY(progress_mode(((const struct image_flags *)flags)->progress, &prog.mode, err));
	const struct img_progress hook = { import_progress, &prog };
	if (prog.mode != PROGRESS_NONE)
		img_import_set_progress(&hook);
	const char *pf = ((const struct image_flags *)flags)->platform;
	struct img_platform platform, host;
	char ps[96], hs[96];
	if (pf) {
		TRY(img_parse_platform(pf, &platform, err));
		img_host_platform(&host);
		if (!img_platform_matches(&host, &platform))
			hutch_warn("--platform %s: this host is %s; the image will not run here "
				   "without an emulator (binfmt_misc)",
				   img_platform_str(&platform, ps), img_platform_str(&host, hs));
	}
	bool from_stdin = !strcmp(argv[first], "-");
	if (from_stdin && !name) /* a pipe has no file name to name it after */
		return hutch_fail(err, EINVAL, "import -: needs --name NAME[:TAG]");
	TRY(open_store(store, true, false, &s, err));
	if (from_stdin)
		r = stdin_file(s, &((const struct image_flags *)flags)->limits, &tmp, &lockfd,
			       &path, err);
	if (r >= 0)
		r = img_import(s, from_stdin ? path : argv[first], name,
			       &((const struct image_flags *)flags)->limits, pf ? &platform : NULL,
			       &res, err);
	if (tmp)
		img_tmp_remove(s, tmp, lockfd);
	img_import_set_progress(NULL);
	if (prog.drawn)
		fputs("\r\033[K", stderr);
	if (r >= 0) {
		if (res.skipped_devices)
			hutch_warn("%zu device node(s) of the image not created (a sandbox's /dev "
				   "is its own), ignoring",
				   res.skipped_devices);
		human(res.bytes, size);
		printf("%s %s (%s: %zu layers, %zu new, %s unpacked)\n", res.name, res.digest,
		       res.kind, res.n_layers, res.n_new_layers, size);
	}
	img_import_result_clear(&res);
	return r;
}

/* A shell pattern, against the short and the full name (image ls bbdock: every tag of
 * docker.io/library/bbdock), or a digest's start (sha256:...). */
static bool ls_match(const struct img_info *i, const char *filter)
{
	if (!filter)
		return true;
	if (!strncmp(filter, "sha256:", 7))
		return !strncmp(i->digest, filter, strlen(filter)) ||
		       !fnmatch(filter, i->digest, 0);
	return img_name_matches(filter, i->name);
}

static void ls_json(const struct img_info *v, size_t n, const char *filter)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		if (!ls_match(&v[i], filter))
			continue;
		_cleanup_free_ char *shown = img_display_name(v[i].name), *n = NULL, *t = NULL,
				    *full = NULL;
		struct hutch_err ignored = { 0 };
		yajl_gen_map_open(g);
		hutch_json_gen_kv(g, "name", shown);
		if (img_parse_ref(v[i].name, &n, &t, &ignored) == 0) {
			full = img_full_name(n);
			hutch_json_gen_str(g, "full_name");
			hutch_json_gen_str(g, full);
		}
		hutch_json_gen_kv(g, "digest", v[i].digest);
		hutch_json_gen_u64(g, "size", v[i].size);
		hutch_json_gen_kv(g, "created", v[i].created);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	_cleanup_free_ char *text = hutch_json_gen_finish(g, NULL);
	printf("%s\n", text);
}

static void ls_print(const struct img_info *v, size_t n, const struct image_flags *f,
		     const char *filter)
{
	for (size_t i = 0; i < n; i++) {
		if (!ls_match(&v[i], filter))
			continue;
		bool seen = false; /* -q: each image once, however many names it has */
		for (size_t k = 0; f->quiet && k < i; k++)
			seen |= ls_match(&v[k], filter) && !strcmp(v[k].digest, v[i].digest);
		_cleanup_free_ char *shown = img_display_name(v[i].name);
		char size[32];
		human(v[i].size, size);
		if (f->quiet && !seen)
			printf("%s\n", v[i].digest);
		else if (!f->quiet)
			printf("%-40s %.19s %8s %s\n", shown, v[i].digest, size,
			       v[i].created ? v[i].created : "-");
	}
}

static int do_ls(struct rt_global *g, int argc, char **argv, int first, void *flags,
		 struct hutch_err *err)
{
	const struct image_flags *f = flags;
	_cleanup_(img_store_freep) struct img_store *s = NULL;
	struct img_info *v = NULL;
	size_t n = 0;
	(void)g;
	if (argc - first > 1)
		return hutch_fail(err, EINVAL, "ls: takes at most one NAME[:TAG]");
	bool json = f->format && !strcmp(f->format, "json");
	if (f->format && !json && strcmp(f->format, "table"))
		return hutch_fail(err, EINVAL, "ls: --format %s: expected table or json",
				  f->format);
	if (json && f->quiet)
		return hutch_fail(err, EINVAL, "ls: --quiet and --format json do not go together");
	const char *filter = argc > first ? argv[first] : NULL;
	TRY(open_store(f->store, true, false, &s, err));
	TRY(img_list(s, &v, &n, err));
	if (json)
		ls_json(v, n, filter);
	else
		ls_print(v, n, f, filter);
	for (size_t i = 0; i < n; i++)
		img_info_clear(&v[i]);
	free(v);
	return 0;
}

static int do_tag(struct rt_global *g, int argc, char **argv, int first, void *flags,
		  struct hutch_err *err)
{
	_cleanup_(img_store_freep) struct img_store *s = NULL;
	char digest[IMG_DIGEST_MAX];
	(void)g;
	if (argc - first != 2)
		return hutch_fail(err, EINVAL, "tag: expected SOURCE NAME[:TAG]");
	TRY(open_store(((const struct image_flags *)flags)->store, false, false, &s, err));
	TRY(img_resolve(s, argv[first], NULL, digest, err));
	return img_tag(s, argv[first + 1], digest, err);
}

/* A JSON string: names and digests are plain, but a config's "created" is the image's. */
static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int do_inspect(struct rt_global *g, int argc, char **argv, int first, void *flags,
		      struct hutch_err *err)
{
	const char *store = ((const struct image_flags *)flags)->store;
	_cleanup_(img_store_freep) struct img_store *s = NULL;
	struct img_info i;
	(void)g;
	TRY(one_arg(argc, argv, first, err));
	TRY(open_store(store, false, false, &s, err));
	TRY(img_inspect(s, argv[first], &i, err));
	_cleanup_free_ char *shown = i.name ? img_display_name(i.name) : NULL;
	printf("{\"name\":");
	json_str(shown);
	printf(",\"digest\":\"%s\",\"created\":", i.digest);
	json_str(i.created);
	printf(",\"architecture\":");
	json_str(i.arch);
	printf(",\"os\":");
	json_str(i.os);
	printf(",\"size\":%" PRIu64 ",\"layers\":[", i.size);
	for (size_t k = 0; k < i.n_layers; k++)
		printf("%s\"%s\"", k ? "," : "", i.diff_ids[k]);
	/* manifest and config are the stored blobs, valid JSON by construction */
	printf("],\"manifest\":%s,\"config\":%s}\n", i.manifest, i.config);
	img_info_clear(&i);
	return 0;
}

/* NAME:* and other shell patterns: every name that matches, and at least one. */
static int rm_matching(struct img_store *s, const char *pattern, struct hutch_err *err)
{
	struct img_info *v = NULL;
	size_t n = 0, removed = 0;
	TRY(img_list(s, &v, &n, err));
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		if (r >= 0 && img_name_matches(pattern, v[i].name)) {
			r = img_remove(s, v[i].name, err);
			removed++;
		}
		img_info_clear(&v[i]);
	}
	free(v);
	if (r >= 0 && !removed)
		return hutch_fail(err, ENOENT, "rm %s: no image name matches", pattern);
	return r;
}

static int do_rm(struct rt_global *g, int argc, char **argv, int first, void *flags,
		 struct hutch_err *err)
{
	const char *store = ((const struct image_flags *)flags)->store;
	_cleanup_(img_store_freep) struct img_store *s = NULL;
	(void)g;
	if (argc - first < 1)
		return hutch_fail(err, EINVAL, "rm: expected NAME[:TAG]...");
	TRY(open_store(store, false, false, &s, err));
	for (int i = first; i < argc; i++)
		TRY(strpbrk(argv[i], "*?[") ? rm_matching(s, argv[i], err)
					    : img_remove(s, argv[i], err));
	return 0;
}

static int do_prune(struct rt_global *g, int argc, char **argv, int first, void *flags,
		    struct hutch_err *err)
{
	const char *store = ((const struct image_flags *)flags)->store;
	_cleanup_(img_store_freep) struct img_store *s = NULL;
	struct img_prune_result res;
	char size[32];
	(void)g, (void)argv;
	if (argc - first != 0)
		return hutch_fail(err, EINVAL, "prune: takes no arguments");
	TRY(open_store(store, false, true, &s, err));
	TRY(img_prune(s, &res, err));
	human(res.bytes, size);
	printf("removed %zu blobs, %zu layers, %zu download caches, %zu leftovers (%s)\n",
	       res.blobs, res.layers, res.caches, res.tmp, size);
	return 0;
}

static void plan_clearp(struct rt_build_plan *p)
{
	rt_build_plan_clear(p);
}

/* build and status share their flags: status says whether build would be a cache hit. */
static int build_or_status(struct rt_global *g, int argc, char **argv, int first,
			   const struct rt_build *b, bool build, struct hutch_err *err)
{
	_cleanup_(img_store_freep) struct img_store *s = NULL;
	_cleanup_(plan_clearp) struct rt_build_plan p = { .stdin_fd = -1 };
	char digest[IMG_DIGEST_MAX];
	struct img_info i;
	TRY(rt_build_check(argc, argv, first, b, err));
	enum progress mode;
	TRY(progress_mode(b->progress, &mode, err));
	TRY(open_store(b->store, build, false, &s, err));
	TRY(rt_build_target(s, b, build, &p, err));
	p.progress = mode != PROGRESS_NONE;
	/* Identical builds at once: the first builds, the others wait and find its image
	 * (one digest behind the tag, one install). */
	_cleanup_close_ int lock = -1;
	if (build && (lock = img_lock_key(s, p.name_tag, false, err)) == -EWOULDBLOCK) {
		fprintf(stderr, "build: %s: waiting for an identical build to finish\n",
			p.name_tag);
		lock = img_lock_key(s, p.name_tag, true, err);
	}
	if (build && lock < 0)
		return lock;
	struct hutch_err e = { 0 };
	bool exists = img_inspect(s, p.name_tag, &i, &e) >= 0;
	if (exists) {
		snprintf(digest, sizeof(digest), "%s", i.digest);
		img_info_clear(&i);
	}
	if (!build) {
		printf("%s %s\n", p.name_tag, exists ? "built" : "not built");
		return exists ? 0 : 1;
	}
	/* stdout has the result alone, so that TAG=$(hutch image build ...) works; the steps,
	 * the package manager's output and how it went are on stderr. */
	if (exists && !b->no_cache) {
		fprintf(stderr, "build: %s (cached)\n", p.name_tag);
	} else {
		fprintf(stderr, "build: building %s from %s\n", p.name_tag, b->from);
		TRY(rt_build_run(g, s, b, &p, digest, err));
		fprintf(stderr, "build: built %s %s\n", p.name_tag, digest);
	}
	/* --tag NAME: NAME:latest is the build that finished last, as docker build -t NAME. */
	if (b->tag) {
		_cleanup_free_ char *latest = hutch_xasprintf("%s:latest", b->tag);
		TRY(img_tag(s, latest, digest, err));
	}
	printf("%s\n", p.name_tag);
	return 0;
}

static int do_build(struct rt_global *g, int argc, char **argv, int first, void *flags,
		    struct hutch_err *err)
{
	return build_or_status(g, argc, argv, first, flags, true, err);
}

static int do_status(struct rt_global *g, int argc, char **argv, int first, void *flags,
		     struct hutch_err *err)
{
	return build_or_status(g, argc, argv, first, flags, false, err);
}

#define IMAGE_FLAGS(def) &def, sizeof(struct image_flags), false
static const struct sub subs[] = {
	{ "import",
	  "[--name NAME[:TAG]] [--platform OS/ARCH[/VARIANT]] [--max-size SIZE] [--max-entries N] "
	  "[--max-ratio R] FILE|DIR|-",
	  "import an OCI layout (dir or tar), a docker-archive, a rootfs tar (-: from stdin, "
	  "with --name) or a rootfs directory (as tar --numeric-owner --xattrs makes it)",
	  IMAGE_FLAGS(import_def), do_import },
	{ "ls", "[--format table|json] [-q] [PATTERN]",
	  "list images: NAME:TAG, digest, size, creation time; PATTERN is a shell pattern of the "
	  "short or full name (bbdock, docker.io/library/bbdock), a tag only if it has one",
	  IMAGE_FLAGS(ls_def), do_ls },
	{ "tag", "SOURCE NAME[:TAG]", "give an image another name", IMAGE_FLAGS(store_def),
	  do_tag },
	{ "inspect", "NAME[:TAG]", "print an image's metadata as JSON", IMAGE_FLAGS(store_def),
	  do_inspect },
	{ "rm", "NAME[:TAG|:*]...",
	  "remove names, or the names a pattern matches (prune frees the space)",
	  IMAGE_FLAGS(store_def), do_rm },
	{ "prune", "", "remove the blobs, layers and download caches no name uses, and leftovers",
	  IMAGE_FLAGS(store_def), do_prune },
	{ "build",
	  "--from BASE [--package P]... [--copy SRC:DST]... [--run CMD]... [--env K=V]... "
	  "[--workdir DIR] [--entrypoint CMD] [--cmd CMD] [--user USER[:GROUP]] [--tag NAME] "
	  "[--network bridge|none|host] [--no-cache]",
	  "build NAME:<inputs-hash> from a base, packages, copies and steps", &rt_build_flags,
	  sizeof(struct rt_build), true, do_build },
	{ "status", "(the flags of build)",
	  "whether the image for these inputs is built (exit 0) or not (exit 1)", &rt_build_flags,
	  sizeof(struct rt_build), true, do_status },
};

void rt_image_print_help(int fd)
{
	dprintf(fd, "usage: hutch image SUBCOMMAND [OPTIONS] [ARGS]\n\n"
		    "Images without a daemon: a content-addressed store (--store, $HUTCH_STORE, "
		    "default " IMG_STORE_DEFAULT "),\nused by `hutch sandbox --image NAME`. Names "
		    "are Docker's: busybox is docker.io/library/busybox,\na name without a tag "
		    "is NAME:latest, and NAME@sha256:... is that manifest (docs/images.md).\n\n"
		    "subcommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		dprintf(fd, "  %-8s %s\n           %s\n", subs[i].name, subs[i].usage,
			subs[i].summary);
	dprintf(fd,
		"\nbuild: packages are installed first, then each --copy, then each --run step.\n"
		"  --copy SRC:DST   a host file or directory into the image; DST is absolute (no\n"
		"                   '..', no ':'). A directory's contents go into DST; a file "
		"goes\n"
		"                   into DST when DST ends in / or is a directory, else becomes "
		"DST.\n"
		"                   Owned by root, modes and symlinks kept (links are not "
		"followed);\n"
		"                   devices, FIFOs and sockets are refused. The tree is an input.\n"
		"  stdin            read to its end before the build and hashed into the tag; the\n"
		"                   steps read it. A tty, /dev/null or an empty stdin adds "
		"nothing.\n"
		"  --env K=V        for the steps, and into the image's Env (replacing the base's "
		"K)\n"
		"  --workdir DIR    the image's WorkingDir (made when missing; the steps run in "
		"/)\n"
		"  --user USER[:GROUP]   the image's User\n"
		"  --entrypoint CMD, --cmd CMD          the image's Entrypoint and Cmd: a JSON "
		"array\n"
		"                   ([\"a\",\"b\"]) or a string, meaning "
		"[\"/bin/sh\",\"-c\",CMD];\n"
		"                   --entrypoint without --cmd clears the base's Cmd\n"
		"  Each of these is an input of the tag; the rest of the base's config is kept.\n"
		"  --network bridge|none|host   the steps' network (not an input): bridge by "
		"default,\n"
		"                   the internet but not the host's 127.0.0.1, abstract sockets "
		"or\n"
		"                   private ranges; host only when asked for, with a warning\n"
		"\nbuild and status also take --store DIR, --timeout SECONDS (default 3600) "
		"and --memory SIZE (default 2g).\n"
		"build --progress auto|tty|plain|none: a line as each phase starts (packages, "
		"copies, steps)\n  with tty or plain; auto (the default) is tty on a terminal, "
		"else none.\n"
		"Registry pulls stay outside hutch: skopeo copy docker://IMAGE oci:DIR:TAG, "
		"then hutch image import DIR.\n");
}

static void sub_help(const struct sub *sub)
{
	dprintf(1, "usage: hutch image %s %s\n\n%s\n", sub->name, sub->usage, sub->summary);
	if (!sub->own_help)
		rt_flags_help(1, sub->flags, 14, 0);
}

/* The subcommand's flags into its struct, then the subcommand (argv[0] is its name). */
static int run_sub(const struct sub *sub, struct rt_global *g, int argc, char **argv,
		   struct hutch_err *err)
{
	_cleanup_free_ void *flags = hutch_xcalloc(1, sub->flags_size);
	bool help = false;
	for (int i = 1; i < argc && sub->own_help; i++)
		help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
	int r = help ? 0 : rt_parse_flags(sub->flags, argc, argv, flags, &help, err);
	if (r >= 0 && help)
		sub_help(sub);
	else if (r >= 0)
		r = sub->run(g, argc, argv, r, flags, err);
	rt_flags_free(sub->flags, flags);
	return help && r >= 0 ? 0 : r;
}

static RT_VERB_RUN(verb_image)
{
	(void)first, (void)flags;
	if (argc < 2)
		return hutch_fail(err, EINVAL, "image: expected a subcommand (hutch image --help)");
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		if (!strcmp(subs[i].name, argv[1]))
			return run_sub(&subs[i], g, argc - 1, argv + 1, err);
	return hutch_fail(err, EINVAL, "image: unknown subcommand %s", argv[1]);
}

const struct rt_verb rt_image_verb = {
	.name = "image",
	.summary = "import, list, build and remove images (hutch image --help)",
	.usage = "SUBCOMMAND [OPTIONS] [ARGS]",
	.run = verb_image,
	.raw_args = true,
	.help = rt_image_print_help,
};
