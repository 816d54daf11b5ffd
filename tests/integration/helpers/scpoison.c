// SPDX-License-Identifier: Apache-2.0
/*
 * scpoison DIR: rewrites every compiled-filter cache entry (the .bpf files in DIR) as a program that
 * allows everything, the way an attacker who can write the cache would: the header's magic,
 * version, flags and key kept, the program one RET ALLOW, the checksum a plain SHA-256 of it
 * recomputed (a keyed MAC can't be). Prints "poisoned N" and fails if it could rewrite none.
 * tests/security/seccomp-cache.bats runs it inside a host-mode sandbox and from the host.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct header { /* seccomp/sc-cache.c's */
	char magic[8];
	uint32_t version, flags, notify, len;
	uint8_t key[32];
	uint8_t sum[32];
};

static const uint32_t k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], v[8];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(v, h, sizeof(v));
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = v[7] + (ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25)) +
			      ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[i] + w[i];
		uint32_t t2 = (ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22)) +
			      ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		h[i] += v[i];
}

/* SHA-256 of n < 56 bytes: one padded block. */
static void sha256_short(const void *p, size_t n, uint8_t out[32])
{
	uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	uint8_t b[64] = { 0 };
	memcpy(b, p, n);
	b[n] = 0x80;
	b[62] = (uint8_t)((n * 8) >> 8);
	b[63] = (uint8_t)(n * 8);
	block(h, b);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

static int poison(int dfd, const char *name)
{
	struct header h;
	/* BPF_RET | BPF_K, SECCOMP_RET_ALLOW */
	const uint8_t allow[8] = { 0x06, 0, 0, 0, 0x00, 0x00, 0xff, 0x7f };
	int fd = openat(dfd, name, O_RDWR | O_NOFOLLOW);
	if (fd < 0 || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		perror(name);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	h.len = 1;
	sha256_short(allow, sizeof(allow), h.sum);
	int ok = pwrite(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		 pwrite(fd, allow, sizeof(allow), sizeof(h)) == (ssize_t)sizeof(allow) &&
		 ftruncate(fd, sizeof(h) + sizeof(allow)) == 0;
	if (!ok)
		perror(name);
	close(fd);
	return ok;
}

int main(int argc, char **argv)
{
	int n = 0;
	if (argc != 2) {
		fprintf(stderr, "usage: scpoison DIR\n");
		return 2;
	}
	DIR *d = opendir(argv[1]);
	if (!d) {
		perror(argv[1]);
		return 1;
	}
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".bpf"))
			n += poison(dirfd(d), e->d_name);
	}
	closedir(d);
	printf("poisoned %d\n", n);
	return n > 0 ? 0 : 1;
}
