// SPDX-License-Identifier: Apache-2.0
/* What both sides of host mode (rt-host.c, rt-host-view.c) share: a guarantee weakened, and
 * paths compared by name. */
#include "rt-host.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void rt_host_note(struct rt_sb_host *h, const char *msg)
{
	if (h->n_weakened >= RT_SB_WEAK_MAX)
		return;
	char *dst = h->weakened[h->n_weakened++];
	size_t len = strnlen(msg, sizeof(h->weakened[0]) - 1); /* truncated to fit */
	memcpy(dst, msg, len);
	dst[len] = '\0';
}

int rt_host_weaken(struct rt_host *hs, struct hutch_err *err, const char *fmt, ...)
{
	char msg[sizeof(hs->h->weakened[0])];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!hs->o->best_effort)
		return hutch_fail(err, EOPNOTSUPP,
				  "sandbox: %s (refused; --best-effort runs anyway)", msg);
	hutch_warn("%s (--best-effort)", msg); /* the report lists it too */
	rt_host_note(hs->h, msg);
	return 0;
}

bool rt_host_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1)
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

bool rt_host_under_any(const char *path, const struct rt_host_paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (rt_host_under(path, p->v[i]))
			return true;
	return false;
}
