// SPDX-License-Identifier: Apache-2.0
/*
 * The compiled-filter cache (seccomp/sc-cache.c, sc_compile_json, sc_compile_default): hits
 * and misses, corrupt and untrusted entries, a concurrent fill, and the key on a profile's
 * own bytes. No root needed.
 */
#include "sc-internal.h"
#include "tap.h"

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/test-sc-cache.XXXXXX";

#define HITS 2000 /* timed, for the record */

static char cachedir[128];

static bool same_program(const struct sc_filter *a, const struct sc_filter *b)
{
	return a && b && a->len == b->len && a->flags == b->flags &&
	       memcmp(a->insns, b->insns, a->len * sizeof(a->insns[0])) == 0;
}

static int compile_at(const struct sc_config *cfg, struct sc_filter **f, bool *hit)
{
	struct hutch_err err = { 0 };
	sc_filter_free(*f);
	*f = NULL;
	return sc_compile_cached(cfg, cachedir, f, hit, &err);
}

/* The cache entry of cfg, opened for corrupting. */
static int open_entry(const struct sc_config *cfg, int flags)
{
	uint8_t key[32];
	char path[256];
	int n = snprintf(path, sizeof(path), "%s/", cachedir);
	sc_config_hash(cfg, key);
	for (int i = 0; i < 32; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", key[i]);
	snprintf(path + n, sizeof(path) - (size_t)n, ".bpf");
	return open(path, flags | O_CLOEXEC);
}

static void test_cache_basic(struct sc_config *cfg)
{
	struct sc_filter *ref = NULL, *f = NULL;
	bool hit = true;

	int r = compile_at(cfg, &ref, &hit);
	ok(r == 0 && !hit, "first compile is a miss");
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && hit && same_program(f, ref), "second is a hit with the same program");
	int fd = open_entry(cfg, O_RDWR);
	struct stat st;
	ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600, "entry is a 0600 file");
	/* Flip one byte of the program: the checksum catches it, the entry is rewritten. */
	char b = 0;
	if (fd >= 0 && pread(fd, &b, 1, st.st_size - 3) == 1) {
		b ^= 0x5a;
		(void)!pwrite(fd, &b, 1, st.st_size - 3);
	}
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && !hit && same_program(f, ref), "corrupt entry: miss, compiled again");
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && hit && same_program(f, ref), "and rewritten: hit");
	if (fd >= 0)
		close(fd);
	fd = open_entry(cfg, O_RDWR);
	if (fd >= 0) {
		(void)!ftruncate(fd, 20);
		close(fd);
	}
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && !hit && same_program(f, ref), "short entry: miss");
	/* Bytes after the program: a whole instruction (the header's length disagrees), then
	 * a part of one (not a whole number of instructions). */
	static const char extra[8] = { 0 };
	static const size_t appended[] = { 8, 3 };
	for (size_t i = 0; i < ARRAY_SIZE(appended); i++) {
		fd = open_entry(cfg, O_WRONLY | O_APPEND);
		(void)!write(fd, extra, appended[i]);
		close(fd);
		r = compile_at(cfg, &f, &hit);
		ok(r == 0 && !hit && same_program(f, ref), "%zu bytes appended: miss", appended[i]);
	}
	/* A directory others can write is not trusted (nor written). */
	chmod(cachedir, 0777);
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && !hit && same_program(f, ref), "group/world-writable cache dir: not used");
	chmod(cachedir, 0700);
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && hit, "0700 again: hit");
	if (geteuid() == 0) {
		fd = open_entry(cfg, O_RDONLY);
		(void)!fchown(fd, 65534, 65534);
		close(fd);
		r = compile_at(cfg, &f, &hit);
		ok(r == 0 && !hit, "entry owned by another user: not used");
	} else {
		ok(1, "# SKIP foreign-owner check needs root");
	}
	sc_filter_free(f);
	sc_filter_free(ref);
}

/* sc-cache.c's entry header. */
struct entry_header {
	char magic[8];
	uint32_t version, flags, notify, len;
	uint8_t key[32];
	uint8_t mac[32];
};

static int secret_fd(int flags)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/key", cachedir);
	return open(path, flags | O_CLOEXEC, 0600);
}

/* The entry's MAC is HMAC-SHA256 (OpenSSL's own, here) under <dir>/key of its header with the
 * mac zeroed and its program. */
static bool mac_checks(const struct sc_config *cfg)
{
	uint8_t secret[64], buf[65536], mac[32];
	unsigned int mac_len = 0;
	struct entry_header h;
	int kfd = secret_fd(O_RDONLY), efd = open_entry(cfg, O_RDONLY);
	ssize_t ks = kfd >= 0 ? read(kfd, secret, sizeof(secret)) : -1;
	ssize_t n = efd >= 0 ? read(efd, buf, sizeof(buf)) : -1;
	if (kfd >= 0)
		close(kfd);
	if (efd >= 0)
		close(efd);
	if (ks != 32 || n <= (ssize_t)sizeof(h))
		return false;
	memcpy(&h, buf, sizeof(h));
	memset(buf + offsetof(struct entry_header, mac), 0, 32);
	HMAC(EVP_sha256(), secret, 32, buf, (size_t)n, mac, &mac_len);
	return mac_len == 32 && memcmp(mac, h.mac, 32) == 0;
}

/* What an attacker who can write the entry but not read the secret does (and what
 * tests/integration/helpers/scpoison.c does): the program one RET ALLOW, a SHA-256 of it where
 * the MAC goes. */
static void poison_entry(const struct sc_config *cfg)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct entry_header h;
	int fd = open_entry(cfg, O_RDWR);
	if (fd < 0 || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	h.len = 1;
	SHA256((const unsigned char *)&allow, sizeof(allow), h.mac);
	(void)!pwrite(fd, &h, sizeof(h), 0);
	(void)!pwrite(fd, &allow, sizeof(allow), sizeof(h));
	(void)!ftruncate(fd, sizeof(h) + sizeof(allow));
	close(fd);
}

static void test_cache_secret(struct sc_config *cfg)
{
	struct sc_filter *ref = NULL, *f = NULL;
	struct stat st;
	bool hit = false;
	char key[256], link2[256];

	compile_at(cfg, &ref, &hit);
	compile_at(cfg, &f, &hit);
	snprintf(key, sizeof(key), "%s/key", cachedir);
	ok(hit && stat(key, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600 &&
		   st.st_size == 32 && st.st_uid == geteuid(),
	   "the cache's secret: a 0600 file of 32 bytes, ours");
	ok(mac_checks(cfg), "an entry carries HMAC-SHA256 of itself under the secret");

	poison_entry(cfg);
	int r = compile_at(cfg, &f, &hit);
	ok(r == 0 && !hit && same_program(f, ref),
	   "an entry rewritten to allow everything, with a SHA-256 of it: not used");
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && hit && mac_checks(cfg), "and rewritten with a MAC: hit");

	/* Another secret: every entry made under the old one misses, and is made again. */
	int fd = secret_fd(O_WRONLY);
	(void)!pwrite(fd, "0123456789abcdef0123456789abcdef", 32, 0);
	close(fd);
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && !hit && same_program(f, ref), "another secret: the entry misses");
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && hit && mac_checks(cfg), "and is made again under it");

	/* A secret others may read, or with a second name, is not one: a miss, and a new one. */
	chmod(key, 0640);
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && !hit && stat(key, &st) == 0 && (st.st_mode & 0777) == 0600,
	   "a group-readable secret: not used, replaced by a 0600 one");
	snprintf(link2, sizeof(link2), "%s/../key2", cachedir);
	(void)!link(key, link2);
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && !hit && stat(key, &st) == 0 && st.st_nlink == 1,
	   "a secret with another link: not used, replaced");
	unlink(link2);
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && hit && mac_checks(cfg), "hit again");

	unlink(key); /* gone: entries miss; the next store makes a new one */
	r = compile_at(cfg, &f, &hit);
	ok(r == 0 && !hit && stat(key, &st) == 0, "no secret: a miss, and a new secret");
	sc_filter_free(f);
	sc_filter_free(ref);
}

/* Four processes fill the same missing entry at once; all succeed, one valid entry stays. */
static void test_cache_concurrent(struct sc_config *cfg)
{
	int go[2];
	pid_t pids[4];
	bool all = true;

	if (pipe(go) < 0) {
		ok(0, "pipe");
		return;
	}
	fflush(stdout);
	for (size_t i = 0; i < ARRAY_SIZE(pids); i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct sc_filter *f = NULL;
			bool hit;
			char c;
			close(go[1]);
			(void)!read(go[0], &c, 1); /* all start when the pipe closes */
			_exit(compile_at(cfg, &f, &hit) == 0 && f ? 0 : 1);
		}
	}
	close(go[0]);
	close(go[1]);
	for (size_t i = 0; i < ARRAY_SIZE(pids); i++) {
		int st = -1;
		waitpid(pids[i], &st, 0);
		all = all && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	struct sc_filter *f = NULL, *ref = NULL;
	bool hit = false;
	int r = compile_at(cfg, &f, &hit);
	struct hutch_err err = { 0 };
	sc_compile_cached(cfg, NULL, &ref, NULL, &err);
	ok(all && r == 0 && hit && same_program(f, ref),
	   "concurrent fill: 4 writers succeed, the entry is valid");
	/* No temp files left behind. */
	DIR *d = opendir(cachedir);
	struct dirent *e;
	int tmp = 0;
	while (d && (e = readdir(d)))
		tmp += strstr(e->d_name, ".tmp.") != NULL;
	if (d)
		closedir(d);
	ok(tmp == 0, "no temp files left (%d)", tmp);
	sc_filter_free(f);
	sc_filter_free(ref);
}

/* The key on a profile's own bytes: a hit parses nothing, unless the filter notifies, whose
 * listenerPath the caller needs; then the parse comes with the cached program. */
static void test_cache_json(void)
{
	static const char plain[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
				    "[{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
	static const char notify[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":"
				     "\"/run/l.sock\",\"syscalls\":[{\"names\":[\"getppid\"],"
				     "\"action\":\"SCMP_ACT_NOTIFY\"}]}";
	struct hutch_err err = { 0 };
	struct sc_config cfg = { 0 };
	struct sc_filter *f = NULL;

	setenv("HUTCH_SECCOMP_CACHE", cachedir, 1);
	int r = sc_compile_json(plain, "linux.seccomp", &cfg, &f, &err);
	ok(r == 0 && f && cfg.n_rules == 1, "json, first time: parsed and compiled (%s)", err.msg);
	sc_config_free(&cfg);
	sc_filter_free(f);
	r = sc_compile_json(plain, "linux.seccomp", &cfg, &f, &err);
	ok(r == 0 && f && cfg.n_rules == 0, "json, again: a hit, nothing parsed");
	sc_config_free(&cfg);
	sc_filter_free(f);
	for (int i = 0; i < 2; i++) {
		r = sc_compile_json(notify, "linux.seccomp", &cfg, &f, &err);
		ok(r == 0 && sc_filter_needs_listener(f) && cfg.listener_path &&
			   !strcmp(cfg.listener_path, "/run/l.sock"),
		   "json with NOTIFY, %s: the listenerPath comes with it (%s)",
		   i ? "a hit" : "a miss", err.msg);
		sc_config_free(&cfg);
		sc_filter_free(f);
	}
	r = sc_compile_json("{\"defaultAction\":\"SCMP_ACT_NOPE\"}", "linux.seccomp", &cfg, &f,
			    &err);
	ok(r < 0 && strstr(err.msg, "linux.seccomp.defaultAction"),
	   "json, a bad profile: the field is named: %s", err.msg);
	sc_config_free(&cfg);
	setenv("HUTCH_SECCOMP_CACHE", "off", 1);
}

static void test_cache(void)
{
	struct hutch_err err = { 0 };
	struct sc_config cfg = { 0 };
	struct timespec t0, t1, t2;

	snprintf(cachedir, sizeof(cachedir), "%s/cache/seccomp", tmpdir);
	setenv("HUTCH_SECCOMP_CACHE", "off", 1);
	ok(sc_cache_dir() == NULL, "HUTCH_SECCOMP_CACHE=off disables the cache");
	unsetenv("HUTCH_SECCOMP_CACHE");
	ok(strcmp(sc_cache_dir(), "/var/cache/hutch/seccomp") == 0, "default cache dir");
	setenv("HUTCH_SECCOMP_CACHE", cachedir, 1);
	ok(strcmp(sc_cache_dir(), cachedir) == 0, "HUTCH_SECCOMP_CACHE sets it");
	setenv("HUTCH_SECCOMP_CACHE", "off", 1);

	if (sc_default_config(0, 0, &cfg, &err) < 0) {
		ok(0, "default config: %s", err.msg);
		return;
	}
	test_cache_basic(&cfg);
	test_cache_secret(&cfg);
	struct stat st;
	ok(stat(cachedir, &st) == 0 && (st.st_mode & 0777) == 0700, "cache dir made 0700");

	/* Timing, for the record: a miss runs libseccomp, a hit reads one file. */
	struct sc_filter *f = NULL;
	bool hit;
	cfg.default_action = SCMP_ACT_ERRNO(EACCES);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	compile_at(&cfg, &f, &hit);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int i = 0; i < HITS; i++)
		compile_at(&cfg, &f, &hit);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	printf("# default profile: miss %.3f ms, hit %.1f us (mean of %d)\n",
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
	       ((t2.tv_sec - t1.tv_sec) * 1e9 + (t2.tv_nsec - t1.tv_nsec)) / 1e3 / HITS, HITS);
	sc_filter_free(f);

	cfg.default_action = SCMP_ACT_ERRNO(EIO); /* a key no one has filled */
	test_cache_concurrent(&cfg);
	sc_config_free(&cfg);
	test_cache_json();
}

/* The default profile's key uses the digest embed.sh took at build time: it must be the
 * embedded text's. */
static void test_default_digest(void)
{
	const char *json = sc_default_profile_json();
	uint8_t sum[32];
	SHA256((const unsigned char *)json, strlen(json), sum);
	ok(memcmp(sum, sc_default_profile_sha256(), 32) == 0,
	   "the default profile's build-time SHA-256 is its text's");
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_cache();
	test_default_digest();
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return tap_done();
}
