/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Setuid and setgid bits and file capabilities a sandbox left on the host: a walk of a host
 * directory that strips them from the regular files changed since a given time, by fd,
 * following no symlink and crossing no mount (base-setid.c).
 */
#ifndef HUTCH_SETID_H
#define HUTCH_SETID_H

#include "hutch-base.h"

/* What one walk saw and did. */
struct hutch_setid_walk {
	uint64_t files;	  /* regular files looked at */
	uint64_t cleared; /* of those, files whose bits or capability were removed */
	uint64_t devices; /* character and block device nodes made or changed since: removed */
	uint64_t failed;  /* ones that kept them (or a node that stayed): error has the first */
	uint64_t mounts;  /* mount points beneath the top, not entered */
	uint64_t dirs;	  /* directories read */
	bool nosuid;	 /* the top's mount is nosuid: no setid bit grants, only nodes looked for */
	bool incomplete; /* the tree moved under a walk deeper than it holds fds for: stopped */
	int error;	 /* errno of the first failure */
};

/* The time to pass as since, taken before anything that may set a bit runs. It reads the
 * coarse realtime clock, the one file timestamps are taken from: a precise clock may read
 * later than the ctime of a change made just after it. */
void hutch_setid_now(struct timespec *ts);

/*
 * Removes S_ISUID and S_ISGID from, and the security.capability xattr of, every regular file
 * beneath dirfd (a directory; O_PATH will do) whose ctime is at or after since: chmod and
 * setxattr both set the ctime, so an older file cannot have gained either since. Symlinks are
 * never followed and mount points never entered (by stx_mnt_id). Nothing is done when dirfd's
 * mount is nosuid. Character and block device nodes changed since are removed (but 0:0
 * character nodes, overlayfs whiteouts), nosuid or not: whoever opens one gets the device.
 * Counts in *w (zeroed first); fails only when dirfd cannot be walked at all.
 */
int hutch_setid_clear_tree(int dirfd, const struct timespec *since, struct hutch_setid_walk *w,
			   struct hutch_err *err);
/* The same for one regular file, fd (O_PATH will do): a bind of a file. */
int hutch_setid_clear_file(int fd, const struct timespec *since, struct hutch_setid_walk *w,
			   struct hutch_err *err);

#endif
