// SPDX-License-Identifier: Apache-2.0
/*
 * From config to a loaded filter: sc_compile (cache first, libseccomp on a miss) in the
 * parent, and sc_load / sc_load_listener in the child, which pass the program and its flags
 * to seccomp(2) directly, so that the child links no libseccomp state at all.
 */
#include "sc-internal.h"

#include <stddef.h>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <string.h>
#include <sys/syscall.h>

/*
 * libseccomp 2.5 has no attribute for WAIT_KILLABLE_RECV (Linux 6.0), so ask the kernel:
 * flags are checked before the program is read, so a NULL program gives EFAULT when the
 * flag is known and EINVAL when not, and installs nothing either way.
 */
static int check_kernel_flags(unsigned int flags, struct hutch_err *err)
{
	if (!(flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV))
		return 0;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			 SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			 NULL);
	if (r < 0 && errno == EFAULT)
		return 0;
	return hutch_fail(err, EOPNOTSUPP,
			  "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: not supported by this kernel");
}

int sc_compile_cached(const struct sc_config *cfg, const char *cache_dir, struct sc_filter **out,
		      bool *ret_hit, struct hutch_err *err)
{
	struct sc_filter *f = NULL;
	uint8_t key[32];
	int r;

	if (ret_hit)
		*ret_hit = false;
	r = sc_config_check(cfg, err);
	if (r < 0)
		return hutch_err_prefix(err, "seccomp: ");
	if (cache_dir) {
		sc_config_hash(cfg, key);
		sc_cache_lookup(cache_dir, key, cfg, &f);
		if (f) {
			if (ret_hit)
				*ret_hit = true;
			*out = f;
			return 0;
		}
	}
	r = check_kernel_flags(sc_load_flags(cfg), err);
	if (r >= 0)
		r = sc_compile_bpf(cfg, true, &f, err);
	if (r < 0)
		return hutch_err_prefix(err, "seccomp: ");
	if (cache_dir)
		sc_cache_store(cache_dir, key, f);
	*out = f;
	return 0;
}

int sc_compile_json(const char *json, const char *prefix, struct sc_config *cfg,
		    struct sc_filter **out, struct hutch_err *err)
{
	const char *dir = sc_cache_dir();
	struct sc_filter *f = NULL;
	uint8_t key[32];

	*cfg = (struct sc_config){ 0 };
	if (dir) {
		sc_text_hash("hutch seccomp json", json, strlen(json), 0, key);
		sc_cache_lookup(dir, key, NULL, &f);
		if (f && !f->notify) {
			*out = f;
			return 0;
		}
	}
	int r = sc_config_parse(json, prefix, cfg, err);
	if (r >= 0 && !f) {
		r = sc_compile_cached(cfg, dir, &f, NULL, err);
		if (r >= 0 && dir)
			sc_cache_store(dir, key, f);
	}
	if (r < 0) {
		sc_filter_free(f);
		return r;
	}
	*out = f;
	return 0;
}

int sc_compile_default(uint64_t caps, unsigned extras, struct sc_filter **out,
		       struct hutch_err *err)
{
	const char *dir = sc_cache_dir();
	struct sc_config cfg = { 0 };
	uint8_t key[32];

	if (dir) { /* the profile's own hash was taken at build time: 14 KB less to read */
		sc_text_hash(extras & SC_DEFAULT_NO_SETID ? SC_NO_SETID_KEY
							  : "hutch seccomp default digest",
			     sc_default_profile_sha256(), 32, caps, key);
		sc_cache_lookup(dir, key, NULL, out);
		if (*out)
			return 0;
	}
	int r = sc_default_config(caps, extras, &cfg, err);
	if (r >= 0)
		r = sc_compile_cached(&cfg, dir, out, NULL, err);
	if (r >= 0 && dir)
		sc_cache_store(dir, key, *out);
	sc_config_free(&cfg);
	return r;
}

int sc_compile(const struct sc_config *cfg, struct sc_filter **out, struct hutch_err *err)
{
	return sc_compile_cached(cfg, sc_cache_dir(), out, NULL, err);
}

size_t sc_filter_len(const struct sc_filter *f)
{
	return f ? f->len : 0;
}

bool sc_filter_needs_listener(const struct sc_filter *f)
{
	return f && f->notify;
}

void sc_filter_free(struct sc_filter *f)
{
	free(f);
}

/*
 * The prefix answers exactly one call with ALLOW: execveat(fd, path, *, *, AT_EMPTY_PATH) on
 * the native arch, with those very register values (path is compared as a pointer); anything
 * else goes on to f's own program, from its first instruction, unchanged.
 */
int sc_filter_allow_fd_exec(const struct sc_filter *f, int fd, const char *path,
			    struct sc_filter **out, struct hutch_err *err)
{
	uint64_t p = (uint64_t)(uintptr_t)path;
	const struct {
		uint32_t off, value;
	} checks[] = {
		{ offsetof(struct seccomp_data, arch), (uint32_t)seccomp_arch_native() },
		{ offsetof(struct seccomp_data, nr), SYS_execveat },
		{ offsetof(struct seccomp_data, args[0]), (uint32_t)fd },
		{ offsetof(struct seccomp_data, args[0]) + 4, 0 },
		{ offsetof(struct seccomp_data, args[1]), (uint32_t)p },
		{ offsetof(struct seccomp_data, args[1]) + 4, (uint32_t)(p >> 32) },
		{ offsetof(struct seccomp_data, args[4]), AT_EMPTY_PATH },
		{ offsetof(struct seccomp_data, args[4]) + 4, 0 },
	};
	size_t n = 2 * ARRAY_SIZE(checks) + 1;
	if (fd < 0 || f->len + n > SC_MAX_INSNS)
		return hutch_fail(err, E2BIG, "seccomp program: no room for the exec exception");
	struct sc_filter *g = hutch_xmalloc(offsetof(struct sc_filter, insns) +
					    (f->len + n) * sizeof(struct sock_filter));
	*g = *f;
	g->len = f->len + n;
	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		/* A mismatch jumps past the rest of the prefix, onto f's first instruction. */
		uint8_t to_f = (uint8_t)(n - 2 * i - 2);
		g->insns[2 * i] =
			(struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, checks[i].off);
		g->insns[2 * i + 1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								   checks[i].value, 0, to_f);
	}
	g->insns[n - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	memcpy(g->insns + n, f->insns, f->len * sizeof(struct sock_filter));
	*out = g;
	return 0;
}

/* The struct is flat: its bytes are the packed form. */
const void *sc_filter_bytes(const struct sc_filter *f, size_t *size)
{
	*size = offsetof(struct sc_filter, insns) + f->len * sizeof(f->insns[0]);
	return f;
}

size_t sc_filter_max_bytes(void)
{
	return offsetof(struct sc_filter, insns) + SC_MAX_INSNS * sizeof(struct sock_filter);
}

int sc_filter_unpack(void *p, size_t size, struct sc_filter **out, struct hutch_err *err)
{
	struct sc_filter *f = p; /* malloc'd, so aligned for it */

	if (size < offsetof(struct sc_filter, insns))
		return hutch_fail(err, EPROTO, "seccomp program: short message (%zu bytes)", size);
	if (f->len == 0 || f->len > SC_MAX_INSNS ||
	    size != offsetof(struct sc_filter, insns) + f->len * sizeof(struct sock_filter))
		return hutch_fail(err, EPROTO, "seccomp program: bad length (%zu bytes)", size);
	*out = f;
	return 0;
}

static long load(const struct sc_filter *f, unsigned int flags, struct hutch_err *err)
{
	struct sock_fprog prog = {
		.len = (unsigned short)f->len,
		.filter = (struct sock_filter *)f->insns,
	};
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (r < 0 && errno == EACCES)
		return hutch_fail(err, EACCES,
				  "load seccomp filter: %s (needs no_new_privs or CAP_SYS_ADMIN)",
				  strerror(EACCES));
	if (r < 0 && errno == ESRCH)
		return hutch_fail(err, ESRCH, "load seccomp filter: a thread cannot be synced");
	if (r < 0)
		return hutch_fail_errno(err, errno, "load seccomp filter");
	return r;
}

/*
 * Runs in the child. Without no_new_privs the kernel demands CAP_SYS_ADMIN, so the recipe
 * loads either before dropping capabilities or after setting no_new_privs.
 */
int sc_load(const struct sc_filter *f, struct hutch_err *err)
{
	if (f->notify)
		return hutch_fail(err, EINVAL,
				  "load seccomp filter: it has SCMP_ACT_NOTIFY rules, whose notify "
				  "fd must go to the listener (sc_load_listener)");
	long r = load(f, f->flags, err);
	if (r < 0)
		return (int)r;
	/* With TSYNC a positive result is the id of a thread that could not be synced. */
	if (r > 0)
		return hutch_fail(err, EAGAIN, "load seccomp filter: thread %ld cannot be synced",
				  r);
	return 0;
}

int sc_load_listener(const struct sc_filter *f, int *notify_fd, struct hutch_err *err)
{
	*notify_fd = -1;
	if (!f->notify)
		return sc_load(f, err);
	/* The result is the fd now, so a TSYNC failure must come as ESRCH instead of a tid. */
	unsigned int flags = f->flags | SECCOMP_FILTER_FLAG_NEW_LISTENER;
	if (flags & SECCOMP_FILTER_FLAG_TSYNC)
		flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
	long r = load(f, flags, err);
	if (r < 0)
		return (int)r;
	*notify_fd = (int)r;
	return 0;
}
