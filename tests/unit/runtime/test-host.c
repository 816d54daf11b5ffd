// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's policy paths across runs (rt-host-links.c): the symlink an earlier sandbox could
 * have left in an rw tree, found on the way to a path, through links outside the rw trees and
 * "..", and by what the rw root is; the names allowed paths were given; the other names of
 * denied paths in the trees. In a temp dir; no root needed.
 */
#include "tap.h"
#include "rt-host.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[PATH_MAX / 2]; /* a temp dir's: short */

static const char *at(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", root, rel);
	return buf[i];
}

/* The planted link found on the way to rel, relative to root ("" when none). */
static const char *planted(const char *rel, const struct rt_host_paths *rw)
{
	static char buf[PATH_MAX];
	char *link = rt_host_planted_link(at(rel), rw);
	size_t n = strlen(root);
	snprintf(buf, sizeof(buf), "%s",
		 link ? (strncmp(link, root, n) ? link : link + n + 1) : "");
	free(link);
	return buf;
}

static void test_names(void)
{
	char *n = rt_host_given_name(at("ext"));
	is_str(n ? n + strlen(root) + 1 : "", "ext", "a symlink's name: given, not its target");
	free(n);
	char given[PATH_MAX];
	snprintf(given, sizeof(given), "/%s//./ext2/", at(""));
	n = rt_host_given_name(given);
	is_str(n ? n + strlen(root) + 1 : "", "ext2", "the name cleaned of //, /. and a last /");
	free(n);
	ok(!rt_host_given_name(at("w/d")), "a real path has no other name");
	ok(!rt_host_given_name(at("ext/../ext")), "\"..\": none (only the kernel can follow it)");
	ok(!rt_host_given_name(at("nope")), "a missing path: none");
}

/* Each alias as "rel" (relative to root), joined by spaces. */
static const char *aliases(char *const *deny, size_t n_deny, char *const *trees, size_t n)
{
	static char buf[PATH_MAX];
	struct rt_host_paths out = { NULL, 0 };
	rt_host_deny_aliases(deny, n_deny, trees, n, &out);
	buf[0] = '\0';
	for (size_t i = 0; i < out.n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "",
			 out.v[i] + strlen(root) + 1);
	hutch_strv_free(out.v);
	return buf;
}

static void test_aliases(const char *wl)
{
	char d[PATH_MAX], t1[PATH_MAX], t2[PATH_MAX], t3[PATH_MAX];
	snprintf(d, sizeof(d), "%s", at("w/d"));
	snprintf(t1, sizeof(t1), "%s", at("w"));
	snprintf(t2, sizeof(t2), "%s", at("ext")); /* -> w/d */
	snprintf(t3, sizeof(t3), "%s", at("w2"));
	ok(mkdir(at("w/d/in"), 0755) == 0 && symlink("w/d/in", t3) == 0, "w2 -> w/d/in");
	char *deny[] = { d }, *trees[] = { t1, (char *)wl, t2, t3 };
	is_str(aliases(deny, 1, trees, 1), "",
	       "a tree by the denied path's own name: nothing more");
	is_str(aliases(deny, 1, trees, 2), "wl/d",
	       "a tree above it by another name: covered there");
	is_str(aliases(deny, 1, trees + 2, 1), "ext",
	       "a tree that is it by another name: all of it");
	is_str(aliases(deny, 1, trees + 3, 1), "w2",
	       "a tree beneath it by another name: the name that is the denied directory");
	char *both[] = { d, (char *)at("wl/d") };
	is_str(aliases(both, 2, trees, 2), "", "an alias already denied is not added twice");
}

int main(void)
{
	char tmpl[] = "/tmp/hutch-test-host.XXXXXX";
	char *dir = mkdtemp(tmpl), real[PATH_MAX];
	if (!dir || !realpath(dir, real) || strlen(real) >= sizeof(root))
		return 1;
	memcpy(root, real, strlen(real) + 1);
	static const char *const dirs[] = { "w", "w/d", "out", "loops" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		mkdir(at(dirs[i]), 0755);
	int r = symlink("../out", at("w/link")) | symlink("w/d", at("ext")) |
		symlink("w/link", at("ext2")) | symlink("l2", at("loops/l1")) |
		symlink("l1", at("loops/l2")) | symlink(root, at("abs"));
	ok(r == 0, "host links: the tree made");
	char w[PATH_MAX], *v[] = { w, NULL };
	snprintf(w, sizeof(w), "%s", at("w"));
	struct rt_host_paths rw = { v, 1 };
	is_str(planted("w/d/x", &rw), "", "a path without links: none");
	is_str(planted("w/link/x", &rw), "w/link", "a link inside the rw tree: found");
	is_str(planted("w/link", &rw), "w/link", "the link as the last name: found");
	is_str(planted("ext/x", &rw), "", "a link outside the rw tree, into it: followed");
	is_str(planted("ext/../link/x", &rw), "w/link", "\"..\" after a link: where it led");
	is_str(planted("ext2/x", &rw), "w/link", "a link outside leading to one inside: found");
	is_str(planted("abs/w/link", &rw), "w/link", "an absolute link: from /");
	is_str(planted("w/nope/link", &rw), "", "a missing name ends the walk");
	is_str(planted("loops/l1/x", &rw), "", "a loop outside the rw trees: given up, not found");
	struct rt_host_paths none = { NULL, 0 };
	is_str(planted("w/link/x", &none), "", "no rw tree: nothing a sandbox could have planted");
	/* An rw root named otherwise (here through a link; on a case-insensitive file system,
	 * spelt otherwise): the link in it is found by what the directory is. */
	snprintf(w, sizeof(w), "%s", at("wl"));
	ok(symlink("w", w) == 0, "host links: wl -> w");
	is_str(planted("w/link/x", &rw), "w/link",
	       "an rw root by another name: found all the same");
	test_names();
	test_aliases(w);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
	return tap_done();
}
