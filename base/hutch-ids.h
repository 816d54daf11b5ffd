/* SPDX-License-Identifier: Apache-2.0 */
/* Who the caller is (base-ids.c, base-caps.c): host root or rootless, a rootless caller's own
 * places and login name, its capabilities and what they let it mount, and capability names. */
#ifndef HUTCH_IDS_H
#define HUTCH_IDS_H

#include <stdbool.h>
#include <sys/types.h>

/* Capability names: "CAP_SYS_ADMIN" (any case) <-> 21. */
#define HUTCH_CAP_LAST_KNOWN 40 /* CAP_CHECKPOINT_RESTORE, Linux 5.9 */
int hutch_cap_from_name(const char *name);
const char *hutch_cap_name(int cap);

/* Rootless: not host root (an ordinary user, or root only inside a user namespace). */
bool hutch_rootless(void);
/* A rootless caller's own place for leaf, by the XDG base directory rules: $xdg_var/leaf,
 * else $HOME/home_sub/leaf (allocated, kept by the caller); NULL without either. */
const char *hutch_rootless_dir(const char *xdg_var, const char *home_sub, const char *leaf);
/* uid's login name from /etc/passwd, allocated (NSS would need shared libraries); NULL when
 * it has none. */
char *hutch_user_name(uid_t uid);
/* cap (CAP_*) is in the effective set. */
bool hutch_has_cap(int cap);
/* The caller may mount in its mount namespace: host root, or rootless with CAP_SYS_ADMIN in
 * the user namespace that owns it (hutch's own, made by a rootless sandbox). */
bool hutch_may_mount(void);
/* A /proc/PID/uid_map's text is the initial user namespace's (every id onto itself). */
bool hutch_init_userns_map(const char *map);

#endif
