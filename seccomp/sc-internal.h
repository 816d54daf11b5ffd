/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between seccomp/'s own files: the JSON pieces the default profile reuses, and the
 * compiled filter's layout, which the compiler, the cache and the loader all fill or read. */
#ifndef HUTCH_SC_INTERNAL_H
#define HUTCH_SC_INTERNAL_H

#include "sc.h"

#include <linux/filter.h>
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
/* One element of "syscalls" (names, action, errnoRet, args); other keys are ignored. */
int sc_json_rule(yajl_val s, const char *prefix, struct sc_rule *out, struct hutch_err *err);

/* Load flags and the listener need of a config: the cache and the compiler agree on them. */
unsigned int sc_load_flags(const struct sc_config *cfg);
bool sc_config_notifies(const struct sc_config *cfg);

/* libseccomp's compile of cfg, with the ENOSYS prologue (sc-compile.c). */
int sc_compile_bpf(const struct sc_config *cfg, struct sc_filter **out, struct hutch_err *err);
/* The compiled-filter cache (sc-cache.c): a miss is 0 with *out NULL, never an error. */
int sc_cache_lookup(const char *dir, const uint8_t key[32], const struct sc_config *cfg,
		    struct sc_filter **out);
void sc_cache_store(const char *dir, const uint8_t key[32], const struct sc_filter *f);

#endif
