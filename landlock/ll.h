/* SPDX-License-Identifier: Apache-2.0 */
/*
 * landlock/: the kernel's Landlock LSM for hutch's host mode: a ruleset over file, TCP and
 * scope rights, built for the ABI the kernel has, then enforced on the calling thread.
 */
#ifndef HUTCH_LL_H
#define HUTCH_LL_H

#include "hutch-base.h"

#include <stdint.h>

/*
 * Landlock (ll-ruleset.c): unprivileged file-access, TCP and scope rules, the second layer of
 * host-mode sandboxes. Rights are the kernel's bit values under hutch names. A ruleset handles
 * every file right the ABI knows, so anything no rule grants is denied. Landlock can only
 * allow: a deny beneath an allowed tree needs a mount on top (runtime/host/rt-host.c).
 */
#define LL_ABI_MAX 9 /* the newest ABI hutch knows (9: pathname unix sockets) */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_TRUNCATE (1ULL << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)	/* ABI 5 */
#define LL_FS_RESOLVE_UNIX (1ULL << 16) /* ABI 9: connect/sendto a pathname unix socket */
#define LL_FS_READ (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_FS_ALL ((1ULL << 17) - 1) /* masked by what the ABI handles */
#define LL_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_rule {
	const char *path; /* opened O_PATH; a missing path is skipped (see n_skipped) */
	uint64_t access;  /* LL_FS_*; directory-only rights are dropped for other files */
};

/* What a ruleset handles, after the ABI probe and any fallback. */
struct ll_ruleset {
	int kernel_abi; /* what the kernel reports, 0 when Landlock is off or missing */
	int abi;	/* what the ruleset was built for */
	uint64_t handled_fs, handled_net, scoped;
	size_t n_rules, n_skipped;
};

/* The kernel's ABI, capped by $HUTCH_LANDLOCK_ABI_MAX (a test knob that simulates an older
 * kernel); 0 when Landlock is unavailable. *kernel_abi (may be NULL) gets the uncapped one. */
int ll_abi(int *kernel_abi);
/* Every file right ABI abi handles (0 for abi < 1). */
uint64_t ll_fs_rights(int abi);
/* A ruleset fd for abi (clamped to ll_abi()) with the rules added; deny_tcp handles
 * TCP bind and connect with no rule allowing them (ABI >= 4), scope adds the ABI 6 scopes.
 * When the kernel refuses rights with EINVAL it drops the newest ABI's and retries. */
int ll_create(int abi, const struct ll_rule *rules, size_t n, bool deny_tcp, bool scope,
	      struct ll_ruleset *out, struct hutch_err *err);
/* landlock_restrict_self: needs no_new_privs (or CAP_SYS_ADMIN). Closes nothing. */
int ll_restrict(int ruleset_fd, struct hutch_err *err);
/* Names of the rights in a mask, NULL-terminated into names (at most max - 1 of them): kind
 * 'f' file rights ("execute", "write_file", ...), 'n' TCP ("bind_tcp"), 's' scopes. */
size_t ll_names(uint64_t rights, char kind, const char **names, size_t max);

#endif
