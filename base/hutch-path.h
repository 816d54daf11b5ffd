/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The paths a caller hands hutch (a workspace, a bind, a report, a profile, an env file, an
 * image directory, --root) are resolved once, here, into an fd that everything after uses:
 * a path is a name, and a name can be swapped under hutch between a check and a use.
 */
#ifndef HUTCH_PATH_H
#define HUTCH_PATH_H

#include "hutch-base.h"

#include <sys/stat.h>

/* The last component may not be a symlink (a workspace, a report, a state path). */
#define HUTCH_CHASE_NOFOLLOW 0x1u
/* Resolve all but the last component: the fd is its directory, *ret_name the last name
 * (never empty, "." or ".."), which need not exist. */
#define HUTCH_CHASE_PARENT 0x2u

/*
 * Opens path (absolute, or relative to the cwd) one component at a time with
 * O_PATH|O_NOFOLLOW, as systemd's chase() with CHASE_SAFE does. A symlink is followed only
 * where the directory holding it is owned by root or by the caller (the effective uid) and
 * writable by no one else (no group or other write bit): a link that another user, or a
 * sandbox writing as another id, could have planted is refused with ELOOP, naming the link.
 * what names the flag in errors ("--workspace"). Returns an O_PATH|O_CLOEXEC fd or -errno.
 */
int hutch_chase(const char *what, const char *path, unsigned flags, char **ret_name,
		struct hutch_err *err);

/* hutch_chase, then fstat: the fd only if it is of type (S_IFDIR, S_IFREG), else ENOTDIR or
 * EINVAL naming what and the resolved path. st may be NULL. */
int hutch_chase_type(const char *what, const char *path, unsigned flags, mode_t type,
		     struct stat *st, struct hutch_err *err);

/* Where fd points now (readlink of /proc/self/fd/N), for messages: malloc'd, never NULL. */
char *hutch_fd_realpath(int fd);

/*
 * Reads a file a caller named (a profile, an env file) whole, never waiting on it for long:
 * opened O_RDONLY|O_NONBLOCK|O_NOFOLLOW through hutch_chase, fstat'ed (a regular file, or a
 * pipe: "/dev/fd/N" and "/proc/self/fd/N" are the caller's own fd N, as bash's <(...) gives),
 * and read to EOF within timeout_ms. A pipe that gives nothing (no writer) is an error, as
 * is one still open at the deadline. At most max bytes; the buffer is NUL-terminated.
 */
int hutch_read_caller_file(const char *what, const char *path, size_t max, int timeout_ms,
			   char **ret_buf, size_t *ret_len, struct hutch_err *err);

#endif
