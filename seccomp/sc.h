/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp/: kernel-enforced syscall filters. The OCI linux.seccomp profile is compiled in the
 * parent (libseccomp, or the compiled-filter cache) into a BPF program before clone, so the
 * child only has to load it: one syscall, after which nothing but the final execve (and the
 * clone, execve and wait4 of startContainer hooks, which run under the filter) has to be
 * allowed.
 */
#ifndef HUTCH_SC_H
#define HUTCH_SC_H

#include "hutch-base.h"
#include "sc-config.h"

#include <stdint.h>

struct sc_filter; /* a compiled BPF program, with its load flags */
/*
 * Compiles through the cache in $HUTCH_SECCOMP_CACHE (default /var/cache/hutch/seccomp;
 * "off" disables it): a hit skips libseccomp. Unknown syscall names are skipped in rules
 * that allow (or log), but fail in rules that deny while the default action allows. When the
 * default action denies, syscall numbers above the profile's highest get ENOSYS.
 */
int sc_compile(const struct sc_config *cfg, struct sc_filter **out, struct hutch_err *err);
/* The same with an explicit cache dir (NULL: none); *ret_hit (may be NULL) says if it hit. */
int sc_compile_cached(const struct sc_config *cfg, const char *cache_dir, struct sc_filter **out,
		      bool *ret_hit, struct hutch_err *err);
/*
 * linux.seccomp as its JSON text (the bytes config.json carried): the cache is also keyed on
 * the text itself, so a hit parses and hashes no rules at all, which is most of seccomp's
 * cost at start. *cfg gets the parsed config whenever it was parsed (a miss, or a filter with
 * NOTIFY rules, whose listenerPath the caller needs) and is zeroed otherwise; the caller frees
 * it. Errors name fields under prefix, as sc_config_parse.
 */
int sc_compile_json(const char *json, const char *prefix, struct sc_config *cfg,
		    struct sc_filter **out, struct hutch_err *err);
/* sc_default_config(caps) compiled, keyed on the embedded profile and caps in the same way. */
int sc_compile_default(uint64_t caps, unsigned extras, struct sc_filter **out,
		       struct hutch_err *err);
/* $HUTCH_SECCOMP_CACHE or the default; NULL when disabled. */
const char *sc_cache_dir(void);
/* The default alone, whatever the environment says: /var/cache/hutch/seccomp, or a rootless
 * caller's $XDG_CACHE_HOME/hutch/seccomp (~/.cache/...; NULL without either). */
const char *sc_cache_default_dir(void);
/* SHA-256 of the canonical form of cfg plus libseccomp's and the kernel's versions. */
void sc_config_hash(const struct sc_config *cfg, uint8_t out[32]);

size_t sc_filter_len(const struct sc_filter *f); /* in instructions */
bool sc_filter_needs_listener(const struct sc_filter *f);
/* Would the filter allow syscall nr with these arguments from this process (the native
 * arch): ALLOW or LOG? It runs the program as the kernel would, in user space. */
bool sc_filter_allows(const struct sc_filter *f, long nr, const uint64_t args[6]);
void sc_filter_free(struct sc_filter *f);
/* A copy of f that also allows execveat(fd, path, any, any, AT_EMPTY_PATH), with exactly these
 * fd and path pointer, from the native arch: for a profile that allows execve but not
 * execveat, the exec trampoline's own call (see runtime/oci/rt-trampoline.c). */
int sc_filter_allow_fd_exec(const struct sc_filter *f, int fd, const char *path,
			    struct sc_filter **out, struct hutch_err *err);
/* A filter as one block of bytes for another process (at most sc_filter_max_bytes()), and
 * back: sc_filter_unpack checks the block (malloc'd, size bytes) and on success makes it
 * *out, to be freed with sc_filter_free; on failure the caller still owns it. */
const void *sc_filter_bytes(const struct sc_filter *f, size_t *size);
size_t sc_filter_max_bytes(void);
int sc_filter_unpack(void *p, size_t size, struct sc_filter **out, struct hutch_err *err);

/* In the child: seccomp(SECCOMP_SET_MODE_FILTER) with the compiled program. Needs
 * no_new_privs or CAP_SYS_ADMIN; every syscall the caller makes afterwards (up to and
 * including execve) must be allowed by the profile. Fails for a filter with NOTIFY rules:
 * those need sc_load_listener. */
int sc_load(const struct sc_filter *f, struct hutch_err *err);
/* Loads and returns the notify fd in *notify_fd (-1 when the filter has no NOTIFY rule). */
int sc_load_listener(const struct sc_filter *f, int *notify_fd, struct hutch_err *err);

/*
 * The seccomp listener protocol (OCI runtime-spec, "seccomp state"): connects to the unix
 * socket listener_path and sends notify_fd with SCM_RIGHTS and the container process state
 * {ociVersion, fds: ["seccompFd"], pid, metadata, state}. state_json is the container state
 * document; pid is the filtered process's (0: the state's, the init). sc_listener_connect +
 * sc_listener_send split it for a caller that must connect while the host path is reachable.
 */
int sc_send_to_listener(const char *listener_path, int notify_fd, pid_t process,
			const char *state_json, const char *metadata, struct hutch_err *err);
int sc_listener_connect(const char *listener_path, struct hutch_err *err);
int sc_listener_send(int sock, int notify_fd, pid_t process, const char *state_json,
		     const char *metadata, struct hutch_err *err);

#endif
