// SPDX-License-Identifier: Apache-2.0
/*
 * Capabilities: our own name table (libcap's depends on the version it was built with),
 * dropping the bounding set, setting effective/permitted/inheritable through libcap, the
 * ambient set, and no_new_privs.
 */
#include "ns-internal.h"
#include "hutch-ids.h"

#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#define CAP_LAST_KNOWN HUTCH_CAP_LAST_KNOWN

int ns_cap_from_name(const char *name)
{
	return hutch_cap_from_name(name);
}

const char *ns_cap_name(int cap)
{
	return hutch_cap_name(cap);
}

static int read_cap_last(void)
{
	char buf[16];
	_cleanup_close_ int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CAP_LAST_KNOWN;
	ssize_t n = hutch_read_all(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return CAP_LAST_KNOWN;
	buf[n] = '\0';
	int64_t v;
	buf[strcspn(buf, "\n")] = '\0';
	if (hutch_parse_i64(buf, &v) < 0 || v < 0 || v > 63)
		return CAP_LAST_KNOWN;
	return (int)v;
}

/* Read once per process (a child inherits it): the init drops its capabilities after joining
 * a tiny memory cgroup, where a procfs open (a file, a seq_file page) is charged to it. */
int ns_cap_last(void)
{
	static int last = -1;
	if (last < 0)
		last = read_cap_last();
	return last;
}

static void cap_freep(cap_t *c)
{
	if (*c)
		cap_free(*c);
}

/* Capabilities set in mask that this kernel knows, as a libcap value list. */
static int mask_to_list(uint64_t mask, int last, cap_value_t *list)
{
	int n = 0;
	for (int i = 0; i <= last && i < 64; i++)
		if (mask & (1ULL << i))
			list[n++] = i;
	return n;
}

static int set_flag(cap_t c, cap_flag_t flag, uint64_t mask, int last)
{
	cap_value_t list[64];
	int n = mask_to_list(mask, last, list);
	if (n > 0 && cap_set_flag(c, flag, n, list, CAP_SET) < 0)
		return -errno;
	return 0;
}

static void raise_effective(int last);

/* After a switch to a non-root uid the effective set is empty: raise it to the permitted
 * set so CAP_SETPCAP is available for the bounding set drop. Best effort. */
void ns_raise_effective(void)
{
	raise_effective(ns_cap_last());
}

static void raise_effective(int last)
{
	_cleanup_(cap_freep) cap_t c = cap_get_proc();
	if (!c)
		return;
	for (cap_value_t i = 0; i <= last; i++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (cap_get_flag(c, i, CAP_PERMITTED, &v) == 0 && v == CAP_SET)
			cap_set_flag(c, CAP_EFFECTIVE, 1, &i, CAP_SET);
	}
	cap_set_proc(c);
}

static int drop_bounding(uint64_t keep, int last, struct hutch_err *err)
{
	for (int i = 0; i <= last; i++) {
		if (i < 64 && (keep & (1ULL << i)))
			continue;
		if (prctl(PR_CAPBSET_DROP, i, 0, 0, 0) < 0 && errno != EINVAL)
			return hutch_fail_errno(err, errno, "drop %s from the bounding set",
						ns_cap_name(i) ? ns_cap_name(i) : "capability");
	}
	return 0;
}

static int set_ambient(uint64_t ambient, int last, struct hutch_err *err)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return hutch_fail_errno(err, errno, "clear ambient capabilities");
	for (int i = 0; i <= last && i < 64; i++) {
		if (!(ambient & (1ULL << i)))
			continue;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, i, 0, 0) < 0)
			return hutch_fail_errno(err, errno, "raise ambient %s",
						ns_cap_name(i) ? ns_cap_name(i) : "capability");
	}
	return 0;
}

int ns_apply_caps(const struct ns_caps *caps, struct hutch_err *err)
{
	/* Capabilities above cap_last_cap do not exist on this kernel and are skipped. */
	int last = ns_cap_last();
	raise_effective(last);
	int r = drop_bounding(caps->bounding, last, err);
	if (r < 0)
		return r;
	_cleanup_(cap_freep) cap_t c = cap_init();
	if (!c)
		return hutch_fail_errno(err, errno, "cap_init");
	if ((r = set_flag(c, CAP_EFFECTIVE, caps->effective, last)) < 0 ||
	    (r = set_flag(c, CAP_PERMITTED, caps->permitted, last)) < 0 ||
	    (r = set_flag(c, CAP_INHERITABLE, caps->inheritable, last)) < 0)
		return hutch_fail_errno(err, r, "cap_set_flag");
	if (cap_set_proc(c) < 0)
		return hutch_fail_errno(err, errno, "set capabilities");
	/* Ambient capabilities must be in both permitted and inheritable: after cap_set_proc. */
	return set_ambient(caps->ambient, last, err);
}

int ns_set_no_new_privs(struct hutch_err *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return hutch_fail_errno(err, errno, "set no_new_privs");
	return 0;
}
