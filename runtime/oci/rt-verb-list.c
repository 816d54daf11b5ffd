// SPDX-License-Identifier: Apache-2.0
/*
 * `list`: every container under --root, as runc's table (ID PID STATUS BUNDLE CREATED
 * OWNER), as JSON (an array of state objects), or just the ids with -q.
 */
#include "rt.h"
#include "rt-json.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct entry {
	struct rt_state st;
	enum rt_status status;
};

static int load_all(struct rt_global *g, struct entry **out, struct hutch_err *err)
{
	_cleanup_strv_ char **ids = NULL;
	int n = rt_state_list_ids(g->root, &ids, err);
	if (n < 0)
		return n;
	struct entry *v = hutch_xcalloc((size_t)n + 1, sizeof(*v));
	int got = 0;
	for (int i = 0; i < n; i++) {
		struct hutch_err e = { 0 };
		int dfd = -1;
		bool locked = false;
		/* No lock is waited for: a create's or a start's hooks may take long. A container
		 * deleted meanwhile, or whose create has not saved a state yet, is skipped. */
		if (rt_state_peek(g->root, ids[i], &dfd, &locked, &e) < 0)
			continue;
		if (rt_state_load(dfd, ids[i], &v[got].st, &e) == 0) {
			v[got].status = rt_state_status(dfd, &v[got].st);
			/* Still locked by its create, which may not have cloned the init yet. */
			if (!locked && v[got].st.creating)
				v[got].status = RT_CREATING;
			if (v[got].status == RT_STOPPED)
				v[got].st.pid = 0;
			got++;
		}
		close(dfd);
	}
	*out = v;
	return got;
}

static void print_json(struct entry *v, int n)
{
	printf("[");
	for (int i = 0; i < n; i++) {
		size_t len;
		_cleanup_free_ char *j = rt_state_json(&v[i].st, v[i].status, &len);
		printf("%s%s", i ? "," : "", j);
	}
	printf("]\n");
}

struct list_flags {
	const char *format;
	bool quiet;
};

static RT_VERB_RUN(verb_list)
{
	const struct list_flags *f = flags;
	const char *format = f->format;
	bool quiet = f->quiet;
	(void)argv;
	if (argc - first != 0)
		return hutch_fail(err, EINVAL, "list: takes no arguments");
	if (format && strcmp(format, "table") && strcmp(format, "json"))
		return hutch_fail(err, EINVAL, "--format: expected table or json, got %s", format);
	struct entry *v = NULL;
	int n = load_all(g, &v, err);
	if (n < 0)
		return n;
	if (quiet) {
		for (int i = 0; i < n; i++)
			printf("%s\n", v[i].st.id);
	} else if (format && !strcmp(format, "json")) {
		print_json(v, n);
	} else {
		printf("%-12s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE",
		       "CREATED", "OWNER");
		for (int i = 0; i < n; i++)
			printf("%-12s %-8d %-10s %-40s %-30s %s\n", v[i].st.id, (int)v[i].st.pid,
			       rt_status_name(v[i].status), v[i].st.bundle, v[i].st.created,
			       v[i].st.owner && *v[i].st.owner ? v[i].st.owner : "root");
	}
	for (int i = 0; i < n; i++)
		rt_state_clear(&v[i].st);
	free(v);
	return 0;
}

static const struct rt_flag list_flags[] = {
	{ "format", 'f', RT_FLAG_STR, "table or json", offsetof(struct list_flags, format), NULL },
	{ "quiet", 'q', RT_FLAG_BOOL, "print only the ids", offsetof(struct list_flags, quiet),
	  NULL },
};

const struct rt_verb rt_list_verb = {
	.name = "list",
	.summary = "list containers",
	.usage = "[--format table|json] [-q]",
	.flags = RT_FLAGS(list_flags, 0),
	.flags_size = sizeof(struct list_flags),
	.run = verb_list,
};
