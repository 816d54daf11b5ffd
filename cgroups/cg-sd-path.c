// SPDX-License-Identifier: Apache-2.0
/* The systemd driver's names (cg-systemd.h): pure, tested without systemd. */
#include "cg-systemd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD "linux.cgroupsPath"

/* systemd's unit name characters (unit_name_is_valid), without the '@' of templates. */
static bool valid_part(const char *s)
{
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\",
			    *s))
			return false;
	return true;
}

int cg_sd_slice_path(const char *slice, char **out, struct hutch_err *err)
{
	size_t n = strlen(slice), sfx = strlen(".slice");
	if (!strcmp(slice, "-.slice")) {
		*out = hutch_xstrdup("");
		return 0;
	}
	if (n <= sfx || strcmp(slice + n - sfx, ".slice") || !valid_part(slice) ||
	    slice[0] == '-' || slice[n - sfx - 1] == '-' || strstr(slice, "--") || n > 255)
		return hutch_fail(err, EINVAL, FIELD ": %s is not a slice name (a-b.slice)", slice);
	/* Each dash closes one level: "a-b-c.slice" lives in a.slice/a-b.slice. */
	size_t size = (n / 2 + 1) * (n + sfx + 2) + 1, len = 0;
	char *p = hutch_xcalloc(1, size);
	for (size_t i = 0; i < n - sfx; i++)
		if (slice[i] == '-')
			len += (size_t)snprintf(p + len, size - len, "/%.*s.slice", (int)i, slice);
	snprintf(p + len, size - len, "/%s", slice);
	*out = p;
	return 0;
}

int cg_sd_parse(const char *cgroups_path, const char *id, struct cg_sd_unit *out,
		struct hutch_err *err)
{
	memset(out, 0, sizeof(*out));
	_cleanup_free_ char *copy = NULL;
	if (!cgroups_path || !*cgroups_path)
		copy = hutch_xasprintf("system.slice:hutch:%s", id);
	else
		copy = hutch_xstrdup(cgroups_path);
	char *prefix = strchr(copy, ':');
	char *name = prefix ? strchr(prefix + 1, ':') : NULL;
	if (!name || strchr(name + 1, ':'))
		return hutch_fail(err, EINVAL,
				  FIELD ": with --systemd-cgroup it is slice:prefix:name, not %s",
				  cgroups_path);
	*prefix++ = '\0';
	*name++ = '\0';
	const char *slice = *copy ? copy : "system.slice";
	if (!*name || !valid_part(prefix) || !valid_part(name))
		return hutch_fail(
			err, EINVAL,
			FIELD ": %s: the prefix and name are systemd unit name "
			      "characters (letters, digits, '-_.\\'), and the name is not empty",
			cgroups_path);
	size_t n = strlen(name);
	if (n > 6 && !strcmp(name + n - 6, ".slice"))
		return hutch_fail(err, ENOTSUP,
				  FIELD ": %s: a slice as the container's unit is not supported "
					"(a scope is: slice:prefix:name)",
				  cgroups_path);
	_cleanup_free_ char *dir = NULL;
	TRY(cg_sd_slice_path(slice, &dir, err));
	out->unit = *prefix ? hutch_xasprintf("%s-%s.scope", prefix, name)
			    : hutch_xasprintf("%s.scope", name);
	if (strlen(out->unit) > 255) {
		cg_sd_unit_clear(out);
		return hutch_fail(err, EINVAL, FIELD ": %s: the unit name is too long",
				  cgroups_path);
	}
	out->slice = hutch_xstrdup(slice);
	out->path = hutch_xasprintf("%s/%s", dir, out->unit);
	return 0;
}

void cg_sd_unit_clear(struct cg_sd_unit *u)
{
	free(u->unit);
	free(u->slice);
	free(u->path);
	memset(u, 0, sizeof(*u));
}
