// SPDX-License-Identifier: Apache-2.0
/*
 * Unpacking limits. Image content is hostile, and a layer of one megabyte can expand to fill
 * the disk: zeros compress a thousandfold with gzip, far more with zstd and xz. An import is
 * charged what it allocates, the entries it makes and how far its tar stream expands, and it
 * stops at the first limit it passes, or before the store's filesystem falls below a reserve.
 */
#include "img-internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

/* The free space is looked at every 64 MiB written and every 4096 entries, and more often as
 * it nears the reserve: a statvfs per write would cost more than the write. */
#define CHECK_BYTES_MAX (64ULL << 20)
#define CHECK_BYTES_MIN (1ULL << 20)
#define CHECK_ENTRIES 4096

/* Binary units, as the flags read them (64m is 64MiB). */
static void human(uint64_t b, char out[32])
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)b;
	size_t i = 0;
	while (v >= 1024 && i + 1 < ARRAY_SIZE(u)) {
		v /= 1024;
		i++;
	}
	snprintf(out, 32, v == (double)(uint64_t)v ? "%.0f%s" : "%.1f%s", v, u[i]);
}

static int fs_room(int fd, uint64_t *avail, uint64_t *total, struct hutch_err *err)
{
	struct statvfs v;
	if (fstatvfs(fd, &v) < 0)
		return hutch_fail_errno(err, errno, "store: statvfs");
	/* f_bavail, not f_bfree: root may eat into ext4's reserved blocks, which are there
	 * for the rest of the system, not for an image. */
	*avail = (uint64_t)v.f_bavail * v.f_frsize;
	*total = (uint64_t)v.f_blocks * v.f_frsize;
	return 0;
}

/* 1 GiB keeps a large disk usable (logs, journals, the next package upgrade); on a small one
 * (a 4 GiB VM image, a tmpfs store) 5% of it leaves an import most of the space. */
static uint64_t reserve_of(uint64_t total)
{
	return total / 20 < IMG_RESERVE_MAX ? total / 20 : IMG_RESERVE_MAX;
}

int img_budget_init(struct img_budget *b, const struct img_limits *lim, int fsfd,
		    struct hutch_err *err)
{
	static const struct img_limits defaults = { 0 };
	uint64_t avail = 0, total = 0;
	memset(b, 0, sizeof(*b));
	b->fsfd = -1;
	b->size_is = "unpacked size";
	b->fs_is = "the store's filesystem";
	b->elsewhere = "use a --store on another filesystem";
	b->max_size = b->max_entries = b->max_ratio = IMG_NO_LIMIT;
	if (fsfd < 0)
		return 0;
	lim = lim ? lim : &defaults;
	b->max_size = lim->max_size ? lim->max_size : IMG_MAX_SIZE_CAP;
	b->max_entries = lim->max_entries ? lim->max_entries : IMG_MAX_ENTRIES_DEFAULT;
	b->max_ratio = lim->max_ratio ? lim->max_ratio : IMG_MAX_RATIO_DEFAULT;
	int r = fs_room(fsfd, &avail, &total, err);
	if (r < 0 || total == 0) /* a filesystem that does not say (some FUSE ones): the caps */
		return r;
	b->fsfd = fsfd;
	b->reserve = reserve_of(total);
	if (!lim->max_size && avail / 2 < b->max_size) {
		b->max_size = avail / 2;
		b->half_free = true;
	}
	return 0;
}

/* Fails below the reserve; else says when to look again: after half the room left. */
static int check_room(struct img_budget *b, uint64_t cur, struct hutch_err *err)
{
	uint64_t avail = 0, total = 0;
	char a[32], res[32];
	int r = fs_room(b->fsfd, &avail, &total, err);
	if (r < 0)
		return r;
	if (avail < b->reserve) {
		human(avail, a);
		human(b->reserve, res);
		return hutch_fail(err, ENOSPC,
				  "%s is down to %s free, below the %s hutch keeps free (free some "
				  "space, or %s)",
				  b->fs_is, a, res, b->elsewhere);
	}
	uint64_t step = (avail - b->reserve) / 2;
	step = step < CHECK_BYTES_MIN ? CHECK_BYTES_MIN : step;
	b->next_bytes = cur + (step > CHECK_BYTES_MAX ? CHECK_BYTES_MAX : step);
	b->next_entries = b->entries + CHECK_ENTRIES;
	return 0;
}

int img_budget_check_bytes(struct img_budget *b, uint64_t pending, struct hutch_err *err)
{
	uint64_t cur = b->bytes + pending;
	char lim[32];
	if (cur > b->max_size) {
		human(b->max_size, lim);
		return hutch_fail(err, EFBIG, "%s passed %s%s%s%s (--max-size raises the limit)",
				  b->size_is, lim, b->half_free ? ", half the free space of " : "",
				  b->half_free ? b->fs_is : "",
				  b->half_free ? " at the start" : "");
	}
	return b->fsfd >= 0 && cur >= b->next_bytes ? check_room(b, cur, err) : 0;
}

void img_budget_charge(struct img_budget *b, uint64_t allocated)
{
	b->bytes += allocated;
}

int img_budget_add_entries(struct img_budget *b, uint64_t n, struct hutch_err *err)
{
	b->entries += n;
	if (b->entries > b->max_entries)
		return hutch_fail(err, E2BIG,
				  "more than %" PRIu64 " entries (--max-entries raises "
				  "the limit)",
				  b->max_entries);
	return b->fsfd >= 0 && b->entries >= b->next_entries ? check_room(b, b->bytes, err) : 0;
}

/*
 * 100: real layers expand 2-5 times (binaries, text), rarely past 10-20 (a compressible
 * dataset); past 100 is zeros or a repeated pattern, a bomb or a file that should have been
 * sparse. Only past IMG_RATIO_FROM of stream, so that a small image of zeros (a disk
 * image's header, an empty database) still imports.
 */
int img_budget_check_ratio(struct img_budget *b, struct hutch_err *err)
{
	char s[32], c[32];
	if (b->stream <= IMG_RATIO_FROM || b->max_ratio == IMG_NO_LIMIT ||
	    b->stream / b->max_ratio <= b->compressed)
		return 0;
	human(b->stream, s);
	human(b->compressed, c);
	return hutch_fail(err, EFBIG,
			  "expands more than %" PRIu64 " times (%s of tar from %s; --max-ratio "
			  "raises the limit)",
			  b->max_ratio, s, c);
}

int img_store_check_room(struct img_store *s, struct hutch_err *err)
{
	struct img_budget b;
	int r = img_budget_init(&b, NULL, s->dirfd, err);
	if (r < 0)
		return r;
	return b.fsfd >= 0 ? check_room(&b, 0, err) : 0;
}
