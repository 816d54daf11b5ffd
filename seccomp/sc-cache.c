// SPDX-License-Identifier: Apache-2.0
/*
 * The compiled-filter cache: <dir>/<sha256>.bpf holds the BPF program that libseccomp (plus
 * the ENOSYS prologue) made for one canonical config, so a hit skips libseccomp, which costs
 * milliseconds for Docker's profile. Entries are only trusted in a directory that no one but
 * us can write, and each one carries its key and an HMAC of itself under a secret of the
 * directory's (<dir>/key, made once): anything odd is a miss, and the caller compiles and
 * rewrites the entry. Owning the file proves nothing: a host-mode sandbox of root's is root,
 * so every entry it could write had to carry a MAC it cannot make. (hutch also keeps its own
 * directories out of every sandbox's reach: docs/landlock.md, docs/sandbox-ids.md.)
 */
#include "sc-internal.h"
#include "hutch-ids.h"

/* The low-level SHA-256 (deprecated in OpenSSL 3 but kept): the EVP interface loads the
 * provider machinery on first use, 1.5 ms here, five times the start-up budget for seccomp. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <fcntl.h>
#include <openssl/sha.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#define DEFAULT_DIR "/var/cache/hutch/seccomp"
#define FORMAT_VERSION 8  /* bump when the program layout or the key changes */
#define SECRET_NAME "key" /* no entry's name: those are 64 hex digits and ".bpf" */
#define SECRET_LEN 32
static const char magic[8] = "HUTCHBPF";

struct header {
	char magic[8];
	uint32_t version, flags, notify, len; /* len in instructions */
	uint8_t key[32];
	uint8_t mac[32]; /* HMAC-SHA256 under the secret of this header (mac zeroed), then the
			  * instructions */
};

const char *sc_cache_default_dir(void)
{
	static const char *own;
	if (!hutch_rootless())
		return DEFAULT_DIR;
	if (!own) /* the caller's own: root's is not theirs to trust */
		own = hutch_rootless_dir("XDG_CACHE_HOME", ".cache", "hutch/seccomp");
	return own;
}

const char *sc_cache_dir(void)
{
	const char *d = getenv("HUTCH_SECCOMP_CACHE");
	if (!d)
		return sc_cache_default_dir();
	if (!*d || strcmp(d, "off") == 0)
		return NULL;
	return d;
}

static void put(SHA256_CTX *c, const void *p, size_t n)
{
	SHA256_Update(c, p, n);
}

static void put_u64(SHA256_CTX *c, uint64_t v)
{
	put(c, &v, sizeof(v));
}

/* Length-prefixed, so that ("ab", "c") and ("a", "bc") differ. */
static void put_str(SHA256_CTX *c, const char *s)
{
	put_u64(c, strlen(s));
	put(c, s, strlen(s));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void put_rule(SHA256_CTX *c, const struct sc_rule *r)
{
	put_u64(c, r->action);
	put_u64(c, r->n_names);
	for (size_t i = 0; i < r->n_names; i++)
		put_str(c, r->names[i]);
	put_u64(c, r->n_args);
	for (size_t i = 0; i < r->n_args; i++) {
		put_u64(c, r->args[i].index);
		put_u64(c, (uint64_t)r->args[i].op);
		put_u64(c, r->args[i].value);
		put_u64(c, r->args[i].value_two);
	}
}

/* What every key starts with: which kind of key, our format, libseccomp's version (its output
 * may change) and the kernel (libseccomp probes it). */
static void put_context(SHA256_CTX *c, const char *kind)
{
#ifdef HUTCH_LIBSECCOMP_LINKED_IN
	const struct scmp_version ver = { SCMP_VER_MAJOR, SCMP_VER_MINOR, SCMP_VER_MICRO },
				  *v = &ver;
#else
	const struct scmp_version *v = seccomp_version();
#endif
	struct utsname u = { 0 };

	uname(&u);
	SHA256_Init(c);
	put_str(c, kind);
	put_u64(c, FORMAT_VERSION);
	put_u64(c, ((uint64_t)v->major << 32) | (v->minor << 16) | v->micro);
	put_str(c, u.release);
	put_str(c, u.machine);
}

/*
 * Everything the program depends on, in a fixed order: the context, then the config with its
 * architectures sorted (their order changes nothing) and its rules in order (it matters).
 */
void sc_config_hash(const struct sc_config *cfg, uint8_t out[32])
{
	SHA256_CTX c;

	put_context(&c, "hutch seccomp");
	put_u64(&c, cfg->default_action);
	_cleanup_free_ char **archs = hutch_xcalloc(cfg->n_archs + 1, sizeof(char *));
	if (cfg->n_archs) { /* archs may be NULL then, which memcpy and qsort must not see */
		memcpy(archs, cfg->archs, cfg->n_archs * sizeof(char *));
		qsort(archs, cfg->n_archs, sizeof(char *), cmp_str);
	}
	put_u64(&c, cfg->n_archs);
	for (size_t i = 0; i < cfg->n_archs; i++)
		put_str(&c, archs[i]);
	put_u64(&c, sc_load_flags(cfg));
	put_u64(&c, sc_config_notifies(cfg));
	put_u64(&c, cfg->listener_path != NULL);
	put_u64(&c, cfg->n_rules);
	for (size_t i = 0; i < cfg->n_rules; i++)
		put_rule(&c, &cfg->rules[i]);
	SHA256_Final(out, &c);
}

/* A key on input bytes that determine the config (a profile's JSON text, and a number such
 * as the capabilities the default profile was resolved against). */
void sc_text_hash(const char *kind, const void *text, size_t len, uint64_t extra, uint8_t out[32])
{
	SHA256_CTX c;

	put_context(&c, kind);
	put_u64(&c, extra);
	put_u64(&c, len);
	put(&c, text, len);
	SHA256_Final(out, &c);
}

static void entry_name(const uint8_t key[32], char name[70])
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		name[2 * i] = hex[key[i] >> 4];
		name[2 * i + 1] = hex[key[i] & 15];
	}
	memcpy(name + 64, ".bpf", 5);
}

/* Ours alone: owned by our euid and writable by nobody else. */
static bool trusted_stat(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static bool trusted(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && trusted_stat(&st);
}

static int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && !trusted(fd)) {
		close(fd);
		return -EPERM;
	}
	return fd < 0 ? -errno : fd;
}

/* The directory's secret: ours, readable by no one else, one name only (another link could
 * be elsewhere, where the cover hutch puts on the cache in host mode is not). */
static bool read_secret(int dfd, uint8_t secret[SECRET_LEN])
{
	_cleanup_close_ int fd = openat(dfd, SECRET_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 077) && st.st_nlink == 1 && st.st_size == SECRET_LEN &&
	       read(fd, secret, SECRET_LEN) == SECRET_LEN;
}

/*
 * The secret, made when there is none (or one not to trust): written whole under a temp name,
 * then linked to its name, which fails if another hutch got there first: every writer ends
 * up with the one secret on disk. A bad one is renamed over (entries under it only miss).
 */
static bool make_secret(int dfd, uint8_t secret[SECRET_LEN])
{
	struct hutch_err ignored = { 0 };
	char tmp[32];
	if (read_secret(dfd, secret))
		return true;
	bool missing =
		faccessat(dfd, SECRET_NAME, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	if (getrandom(secret, SECRET_LEN, 0) != SECRET_LEN)
		return false;
	snprintf(tmp, sizeof(tmp), "%s.new.%d", SECRET_NAME, (int)getpid());
	if (hutch_write_atomic_at(dfd, tmp, secret, SECRET_LEN, 0600, &ignored) < 0)
		return false;
	/* renamed when bad, or on a filesystem without hard links */
	if (!missing || (linkat(dfd, tmp, dfd, SECRET_NAME, 0) < 0 && errno != EEXIST))
		(void)!renameat(dfd, tmp, dfd, SECRET_NAME);
	unlinkat(dfd, tmp, 0);
	return read_secret(dfd, secret);
}

/* HMAC-SHA256 (RFC 2104) by hand on the low-level SHA-256: OpenSSL's HMAC() goes through EVP
 * (see above). The header is taken with its mac zeroed. */
static void entry_mac(const uint8_t secret[SECRET_LEN], const struct header *h, const void *insns,
		      size_t bytes, uint8_t out[32])
{
	struct header copy = *h;
	uint8_t pad[64], inner[32];
	SHA256_CTX c;

	memset(copy.mac, 0, sizeof(copy.mac));
	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = (uint8_t)((i < SECRET_LEN ? secret[i] : 0) ^ 0x36);
	SHA256_Init(&c);
	SHA256_Update(&c, pad, sizeof(pad));
	SHA256_Update(&c, &copy, sizeof(copy));
	SHA256_Update(&c, insns, bytes);
	SHA256_Final(inner, &c);
	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] ^= 0x36 ^ 0x5c;
	SHA256_Init(&c);
	SHA256_Update(&c, pad, sizeof(pad));
	SHA256_Update(&c, inner, sizeof(inner));
	SHA256_Final(out, &c);
}

static bool same_mac(const uint8_t a[32], const uint8_t b[32])
{
	uint8_t d = 0;
	for (int i = 0; i < 32; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* The entry's size, when it can be one: a header and 1 to SC_MAX_INSNS instructions. */
static bool entry_size_ok(const struct stat *st)
{
	return (size_t)st->st_size > sizeof(struct header) &&
	       (size_t)st->st_size <=
		       sizeof(struct header) + SC_MAX_INSNS * sizeof(struct sock_filter) &&
	       (st->st_size - sizeof(struct header)) % sizeof(struct sock_filter) == 0;
}

/* One fstat and one readv (header, then the program into f), the secret, and the MAC over
 * the whole entry: a hit is on every start. */
int sc_cache_lookup(const char *dir, const uint8_t key[32], const struct sc_config *cfg,
		    struct sc_filter **out)
{
	_cleanup_close_ int dfd = open_dir(dir), fd = -1;
	_cleanup_free_ struct sc_filter *f = NULL;
	struct header h;
	struct stat st;
	char name[70];
	uint8_t secret[SECRET_LEN], mac[32];

	*out = NULL;
	if (dfd < 0)
		return 0;
	entry_name(key, name);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !trusted_stat(&st) || !S_ISREG(st.st_mode) ||
	    !entry_size_ok(&st))
		return 0;
	size_t bytes = (size_t)st.st_size - sizeof(h);
	f = hutch_xmalloc(sizeof(*f) + bytes);
	struct iovec iov[2] = { { &h, sizeof(h) }, { f->insns, bytes } };
	if (readv(fd, iov, 2) != st.st_size)
		return 0;
	if (memcmp(h.magic, magic, sizeof(magic)) != 0 || h.version != FORMAT_VERSION ||
	    memcmp(h.key, key, 32) != 0 || h.len * sizeof(struct sock_filter) != bytes ||
	    (cfg && (h.flags != sc_load_flags(cfg) || h.notify != sc_config_notifies(cfg))))
		return 0;
	if (!read_secret(dfd, secret))
		return 0;
	entry_mac(secret, &h, f->insns, bytes, mac);
	explicit_bzero(secret, sizeof(secret));
	if (!same_mac(mac, h.mac))
		return 0;
	f->len = h.len;
	f->flags = h.flags;
	f->notify = h.notify;
	*out = steal_ptr(f);
	return 0;
}

/* mkdir -p: the parents 0755 (as /var/cache is), the cache itself 0700. */
static void make_dir(const char *dir)
{
	_cleanup_free_ char *p = hutch_xstrdup(dir);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0700);
}

/* Best effort: a cache that cannot be written only costs the next start a compile. */
void sc_cache_store(const char *dir, const uint8_t key[32], const struct sc_filter *f)
{
	struct hutch_err ignored = { 0 };
	uint8_t secret[SECRET_LEN];
	char name[70];

	make_dir(dir);
	_cleanup_close_ int dfd = open_dir(dir);
	if (dfd < 0 || !make_secret(dfd, secret))
		return;
	size_t bytes = f->len * sizeof(struct sock_filter);
	_cleanup_free_ uint8_t *buf = hutch_xmalloc(sizeof(struct header) + bytes);
	struct header h = { .version = FORMAT_VERSION,
			    .flags = f->flags,
			    .notify = f->notify,
			    .len = (uint32_t)f->len };
	memcpy(h.magic, magic, sizeof(magic));
	memcpy(h.key, key, 32);
	entry_mac(secret, &h, f->insns, bytes, h.mac);
	explicit_bzero(secret, sizeof(secret));
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), f->insns, bytes);
	entry_name(key, name);
	/* A temp file per process, renamed over: readers see the old entry or the new one. */
	hutch_write_atomic_at(dfd, name, buf, sizeof(h) + bytes, 0600, &ignored);
}
