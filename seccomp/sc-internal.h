/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between seccomp/'s own files: the JSON pieces the default profile reuses, and the
 * compiled filter's layout, which the compiler, the cache and the loader all fill or read.
 * The range-tree optimiser's own declarations are in sc-bpf.h. */
#ifndef HUTCH_SC_INTERNAL_H
#define HUTCH_SC_INTERNAL_H

#include "sc.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <yajl/yajl_tree.h>

/* The kernel's limit for one classic BPF program (BPF_MAXINSNS). */
#define SC_MAX_INSNS 4096

struct sc_filter {
	unsigned int flags; /* SECCOMP_FILTER_FLAG_* for the load, without NEW_LISTENER */
	bool notify;	    /* has NOTIFY rules: load with a listener */
	size_t len;
	struct sock_filter insns[];
};

/* "action" plus "errnoRet" (named by their own keys) of obj -> one action value. */
int sc_json_action(yajl_val obj, const char *action_key, const char *errno_key, const char *prefix,
		   uint32_t *out, struct hutch_err *err);
/* The cache key's label for the default profile with SC_DEFAULT_NO_SETID (sc-default.c's
 * add_no_setid): those rules are code, not the embedded profile's hashed bytes, so any change
 * to them must change this too, or stale programs are served from the cache. */
#define SC_NO_SETID_KEY "hutch seccomp default digest, no-setid rules 3"
/* SHA-256 of sc_default_profile_json(), computed at build time. */
const uint8_t *sc_default_profile_sha256(void);

/* One element of "syscalls" (names, action, errnoRet, args); other keys are ignored. */
int sc_json_rule(yajl_val s, const char *prefix, struct sc_rule *out, struct hutch_err *err);

/* Load flags and the listener need of a config: the cache and the compiler agree on them. */
unsigned int sc_load_flags(const struct sc_config *cfg);
bool sc_config_notifies(const struct sc_config *cfg);

/*
 * libseccomp's compile of cfg, with the ENOSYS prologue (sc-compile.c); with ranges, the
 * argument-free rules of the commonest action go into the allow ranges in front instead
 * (sc-ranges.c). Both programs decide every syscall alike: the unit tests compare them.
 */
int sc_compile_bpf(const struct sc_config *cfg, bool ranges, struct sc_filter **out,
		   struct hutch_err *err);

/* The compiled-filter cache (sc-cache.c): a miss is 0 with *out NULL, never an error. cfg
 * (NULL for a key on text, which covers them) must agree with the entry's flags. */
int sc_cache_lookup(const char *dir, const uint8_t key[32], const struct sc_config *cfg,
		    struct sc_filter **out);
void sc_cache_store(const char *dir, const uint8_t key[32], const struct sc_filter *f);
/* The key for a config known by the bytes it comes from (see sc_compile_json). */
void sc_text_hash(const char *kind, const void *text, size_t len, uint64_t extra, uint8_t out[32]);
/* sc-mux.c: i386's socketcall and ipc for calls whose rules test arguments (which they carry
 * behind a pointer), answered before libseccomp's program. Its length; written to p if not
 * NULL. */
struct sock_filter;
size_t sc_mux_guard(const struct sc_config *cfg, struct sock_filter *p);

#endif
