/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one header every module may include: errors, cleanup attributes, logging, and the
 * small fd/path helpers that all setup code shares. Library code never prints; it fills a
 * struct hutch_err and returns -errno. Only main prints. Who the caller is (rootless,
 * capabilities) is in hutch-ids.h.
 */
#ifndef HUTCH_BASE_H
#define HUTCH_BASE_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Fixed-size so it survives clone and crosses the sync socket in one write. */
struct hutch_err {
	int code;   /* positive errno, 0 when unset */
	int status; /* exit status hint for callers (126/127), 0 when none */
	char msg[512];
};

/* Sets err (replacing it) and returns -code. code may be given as errno or -errno. */
int hutch_fail(struct hutch_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Like hutch_fail, and appends ": strerror(code)". */
int hutch_fail_errno(struct hutch_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prepends context ("mount /proc: ") to the message already in err; returns -err->code. */
int hutch_err_prefix(struct hutch_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void hutch_err_clear(struct hutch_err *err);

#define TRY(expr)                                                                                  \
	do {                                                                                       \
		int r_ = (expr);                                                                   \
		if (r_ < 0)                                                                        \
			return r_;                                                                 \
	} while (0)

/* Cleanup attributes (systemd style). Destructors accept NULL / -1. */
#define _cleanup_(f) __attribute__((cleanup(f)))
/* A variable that is there for its cleanup alone (clang calls it unused; gcc does not). */
#define _unused_ __attribute__((unused))
#define _cleanup_free_ _cleanup_(hutch_freep)
#define _cleanup_close_ _cleanup_(hutch_closep)
#define _cleanup_fclose_ _cleanup_(hutch_fclosep)
#define _cleanup_strv_ _cleanup_(hutch_strv_freep)

void hutch_freep(void *p);
void hutch_closep(int *fd);
void hutch_fclosep(void *f);
void hutch_strv_freep(char ***v);
void hutch_closedirp(DIR **d);
void hutch_strv_free(char **v);
/* Appends a copy of s to the NULL-terminated *v (of *n strings). */
void hutch_strv_push(char ***v, size_t *n, const char *s);
size_t hutch_strv_len(const char *const *v); /* v may be NULL */
char **hutch_strv_dup(const char *const *v); /* a NULL-terminated copy, never NULL */

#define steal_ptr(p)                                                                               \
	({                                                                                         \
		__typeof__(p) t_ = (p);                                                            \
		(p) = NULL;                                                                        \
		t_;                                                                                \
	})
#define steal_fd(fd)                                                                               \
	({                                                                                         \
		int t_ = (fd);                                                                     \
		(fd) = -1;                                                                         \
		t_;                                                                                \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation that cannot fail quietly: out of memory aborts (as crun and systemd's xmalloc). */
void *hutch_xmalloc(size_t n);
void *hutch_xcalloc(size_t n, size_t size);
void *hutch_xrealloc(void *p, size_t n);
char *hutch_xstrdup(const char *s);
char *hutch_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logging: only main decides where it goes. Warnings print as "hutch: warning: ...". */
enum hutch_log_level { HUTCH_LOG_ERROR, HUTCH_LOG_WARN, HUTCH_LOG_DEBUG };
void hutch_log_setup(int fd, bool json, bool debug);
void hutch_log(enum hutch_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define hutch_warn(...) hutch_log(HUTCH_LOG_WARN, __VA_ARGS__)
#define hutch_debug(...) hutch_log(HUTCH_LOG_DEBUG, __VA_ARGS__)

/* Files, relative to a directory fd (AT_FDCWD for the host). */
int hutch_write_file_at(int dirfd, const char *path, const void *buf, size_t len,
			struct hutch_err *err);
int hutch_write_str_at(int dirfd, const char *path, const char *s, struct hutch_err *err);
/* Reads at most max bytes into a NUL-terminated malloc'd buffer. */
int hutch_read_file_at(int dirfd, const char *path, size_t max, char **out, size_t *len,
		       struct hutch_err *err);
/* Writes dir/name atomically (temp file + rename). */
int hutch_write_atomic_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
			  struct hutch_err *err);
/* The same for a path (relative to the cwd, or absolute); errors name the path. */
int hutch_write_atomic(const char *path, const void *buf, size_t len, mode_t mode,
		       struct hutch_err *err);
int hutch_write_all(int fd, const void *buf, size_t len);
ssize_t hutch_read_all(int fd, void *buf, size_t len);

/*
 * Resolve path inside the tree rooted at rootfd, never escaping it (openat2 RESOLVE_IN_ROOT,
 * symlinks resolved as if rootfd were /). flags are open(2) flags.
 */
int hutch_open_in_root(int rootfd, const char *path, int flags, mode_t mode, struct hutch_err *err);
/* mkdir -p inside rootfd, each component resolved in the root; returns an O_PATH fd to it. */
int hutch_mkdir_in_root(int rootfd, const char *path, mode_t mode, struct hutch_err *err);
/* "/proc/self/fd/N" for mount(2) calls that must act on an fd we resolved ourselves. */
#define HUTCH_FD_PATH_MAX 32
const char *hutch_fd_path(int fd, char buf[HUTCH_FD_PATH_MAX]);

/* Milliseconds on the monotonic clock, for timeouts and durations. */
double hutch_now_ms(void);

/* Strings. */
bool hutch_str_has_prefix(const char *s, const char *prefix);
int hutch_parse_u64(const char *s, uint64_t *out);
int hutch_parse_i64(const char *s, int64_t *out);

/* UTC time as RFC 3339 ("2026-12-01T18:21:33Z", or with nanos ".123456789Z"), without
 * strftime, which reads /etc/localtime (twice per create) for a zone it never prints. */
#define HUTCH_UTC_MAX 40
void hutch_utc_stamp(const struct timespec *ts, bool nanos, char out[HUTCH_UTC_MAX]);

#include "hutch-proc.h"
#include "hutch-phase.h"

#endif
