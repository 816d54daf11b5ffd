// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's policy paths across runs. A path the policy names is resolved when a run
 * starts, and a symlink that an earlier sandbox left inside an rw tree would point it
 * elsewhere: a deny at a decoy while the denied file sits at its old place, an allow at what
 * was never allowed. This finds such a link on the way to a path.
 */
#include "rt-host.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_HOPS 40 /* the kernel's own limit: past it the path doesn't resolve at all */

/* Splits the next component off *rest into name: false at the end, or when too long (the
 * path then fails to resolve anyway). */
static bool next_name(char **rest, char name[NAME_MAX + 1])
{
	*rest += strspn(*rest, "/");
	size_t len = strcspn(*rest, "/");
	if (!len || len > NAME_MAX)
		return false;
	memcpy(name, *rest, len);
	name[len] = '\0';
	*rest += len;
	return true;
}

/*
 * Walks path as the kernel resolves it (a ".." after a link is the parent of where the link
 * led), by name: this is an audit of what an earlier run left, made before this run's
 * sandbox exists, not the resolution the run uses. A missing component ends it: nothing
 * beyond exists, so no link is on the way.
 */
char *rt_host_planted_link(const char *path, const struct rt_host_paths *rw)
{
	char cur[PATH_MAX] = ""; /* resolved so far: "" is / (the options take absolute paths) */
	_cleanup_free_ char *todo = hutch_xstrdup(path);
	char *rest = todo, name[NAME_MAX + 1];
	unsigned hops = 0;
	while (next_name(&rest, name)) {
		char next[PATH_MAX], target[PATH_MAX];
		struct stat st;
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			*(strrchr(cur, '/') ?: cur) = '\0';
			continue;
		}
		if (snprintf(next, sizeof(next), "%s/%s", cur, name) >= (int)sizeof(next) ||
		    lstat(next, &st) < 0)
			return NULL;
		if (!S_ISLNK(st.st_mode)) {
			memcpy(cur, next, sizeof(cur));
			continue;
		}
		if (rt_host_under_any(next, rw))
			return hutch_xstrdup(next);
		ssize_t n = readlink(next, target, sizeof(target) - 1);
		if (n <= 0 || ++hops > MAX_HOPS)
			return NULL;
		target[n] = '\0';
		char *more = hutch_xasprintf("%s/%s", target, rest);
		free(todo);
		todo = rest = more;
		if (target[0] == '/')
			cur[0] = '\0';
	}
	return NULL;
}
