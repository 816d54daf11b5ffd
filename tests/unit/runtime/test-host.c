// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's policy paths across runs (rt-host-links.c): the symlink an earlier sandbox could
 * have left in an rw tree, found on the way to a path, through links outside the rw trees and
 * "..", in a temp dir. No root needed.
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
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
	return tap_done();
}
