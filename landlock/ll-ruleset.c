// SPDX-License-Identifier: Apache-2.0
/*
 * Landlock: probing the ABI, building a ruleset that handles every right the ABI knows (so
 * what no rule grants is denied), and restricting the calling thread. The kernel's uapi header
 * is older than the ABIs used here, so the structures and values are defined below, from
 * Documentation/userspace-api/landlock.rst; they are append-only, like the ABI itself.
 */
#include "ll.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

/* struct landlock_ruleset_attr as of ABI 6; older kernels take a prefix of it. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* The file rights each ABI added; index = ABI. */
static const uint64_t fs_added[LL_ABI_MAX + 1] = {
	[1] = (1ULL << 13) - 1, /* execute ... make_sym */
	[2] = 1ULL << 13,	/* refer */
	[3] = LL_FS_TRUNCATE,	  [5] = LL_FS_IOCTL_DEV,
	[9] = LL_FS_RESOLVE_UNIX, /* 7 added audit flags, 8 a restrict_self flag: no right */
};

/* Rights that only mean something on a directory: the kernel refuses them on a file rule. */
#define FS_FILE_RIGHTS                                                                             \
	(LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV |   \
	 LL_FS_RESOLVE_UNIX)

static const char *const fs_names[] = {
	"execute",   "write_file", "read_file", "read_dir",  "remove_dir",   "remove_file",
	"make_char", "make_dir",   "make_reg",	"make_sock", "make_fifo",    "make_block",
	"make_sym",  "refer",	   "truncate",	"ioctl_dev", "resolve_unix",
};
static const char *const net_names[] = { "bind_tcp", "connect_tcp" };
static const char *const scope_names[] = { "abstract_unix_socket", "signal" };

int ll_abi(int *kernel_abi)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	if (abi < 0) /* EOPNOTSUPP: built in but disabled at boot; ENOSYS: not built */
		abi = 0;
	if (kernel_abi)
		*kernel_abi = (int)abi;
	const char *cap = getenv("HUTCH_LANDLOCK_ABI_MAX");
	uint64_t max;
	if (cap && hutch_parse_u64(cap, &max) == 0 && max < (uint64_t)abi)
		abi = (long)max;
	return (int)abi;
}

uint64_t ll_fs_rights(int abi)
{
	uint64_t r = 0;
	for (int i = 1; i <= abi && i <= LL_ABI_MAX; i++)
		r |= fs_added[i];
	return r;
}

static void handled_for(int abi, bool deny_tcp, bool scope, struct ll_ruleset *out)
{
	out->abi = abi;
	out->handled_fs = ll_fs_rights(abi);
	out->handled_net = deny_tcp && abi >= 4 ? LL_NET_BIND_TCP | LL_NET_CONNECT_TCP : 0;
	out->scoped = scope && abi >= 6 ? LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL : 0;
}

/* The ruleset for the newest ABI the kernel accepts, from abi down. */
static int create_ruleset(int abi, bool deny_tcp, bool scope, struct ll_ruleset *out,
			  struct hutch_err *err)
{
	for (; abi >= 1; abi--) {
		handled_for(abi, deny_tcp, scope, out);
		struct ll_ruleset_attr attr = { out->handled_fs, out->handled_net, out->scoped };
		/* Pass only the fields this ABI has: an older kernel refuses a longer struct. */
		size_t size = abi >= 6	 ? sizeof(attr)
			      : abi >= 4 ? 2 * sizeof(uint64_t)
					 : sizeof(uint64_t);
		long fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
		if (fd >= 0)
			return (int)fd;
		if (errno != EINVAL && errno != E2BIG)
			return hutch_fail_errno(err, errno, "landlock: create ruleset (ABI %d)",
						abi);
	}
	return hutch_fail(err, EINVAL, "landlock: the kernel refused every ABI's rights");
}

static int add_rule(int ruleset, const struct ll_rule *rule, struct ll_ruleset *ll,
		    struct hutch_err *err)
{
	_cleanup_close_ int fd = open(rule->path, O_PATH | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		ll->n_skipped++;
		return 0;
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return hutch_fail_errno(err, errno, "landlock: %s", rule->path);
	uint64_t access = rule->access & ll->handled_fs;
	if (!S_ISDIR(st.st_mode))
		access &= FS_FILE_RIGHTS;
	if (!access)
		return 0;
	struct ll_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		return hutch_fail_errno(err, errno, "landlock: rule for %s", rule->path);
	ll->n_rules++;
	return 0;
}

int ll_create(int abi, const struct ll_rule *rules, size_t n, bool deny_tcp, bool scope,
	      struct ll_ruleset *out, struct hutch_err *err)
{
	memset(out, 0, sizeof(*out));
	int have = ll_abi(&out->kernel_abi);
	if (have < 1)
		return hutch_fail(err, EOPNOTSUPP, "landlock: not supported by this kernel%s",
				  out->kernel_abi > 0 ? " (capped by HUTCH_LANDLOCK_ABI_MAX)" : "");
	if (abi > have)
		abi = have;
	if (abi > LL_ABI_MAX)
		abi = LL_ABI_MAX;
	_cleanup_close_ int ruleset = create_ruleset(abi, deny_tcp, scope, out, err);
	if (ruleset < 0)
		return ruleset;
	for (size_t i = 0; i < n; i++) {
		int r = add_rule(ruleset, &rules[i], out, err);
		if (r < 0)
			return r;
	}
	return steal_fd(ruleset);
}

int ll_restrict(int ruleset_fd, struct hutch_err *err)
{
	if (syscall(SYS_landlock_restrict_self, ruleset_fd, 0) < 0)
		return hutch_fail_errno(err, errno, "landlock: restrict_self");
	return 0;
}

size_t ll_names(uint64_t rights, char kind, const char **names, size_t max)
{
	const char *const *table = kind == 'n' ? net_names : kind == 's' ? scope_names : fs_names;
	size_t len = kind == 'n'   ? ARRAY_SIZE(net_names)
		     : kind == 's' ? ARRAY_SIZE(scope_names)
				   : ARRAY_SIZE(fs_names);
	size_t k = 0;
	for (size_t i = 0; i < len && k + 1 < max; i++)
		if (rights & (1ULL << i))
			names[k++] = table[i];
	if (max)
		names[k] = NULL;
	return k;
}
