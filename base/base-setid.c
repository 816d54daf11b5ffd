// SPDX-License-Identifier: Apache-2.0
/*
 * The setid walk (hutch-setid.h). Directories are read whole with getdents64, whose d_type
 * spares a stat of everything but regular files (and of entries a filesystem leaves untyped).
 * Each regular file costs one statx by name relative to its directory's fd; that is nearly the
 * whole cost (~1 us a file in the page cache here: dentry and inode cache misses), so batches
 * of names go to a few worker threads while the main thread goes on reading directories.
 */
#include "hutch-setid.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#define CAPS_XATTR "security.capability"
#define SETID (S_ISUID | S_ISGID)
#define MASK (STATX_TYPE | STATX_MODE | STATX_CTIME | STATX_INO | STATX_MNT_ID)
/* No automount is triggered by a look at a name: an autofs point beneath is not ours. */
#define BY_NAME (AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT)
#define HELD_MAX 64	  /* directory fds held down the path; deeper, ".." reopens them */
#define BATCH_BYTES 16384 /* names of one batch (~1000 short ones) */
#define BATCH_DIRS 16	  /* directories one batch may name files of */
#define QUEUE_MAX 8	  /* batches waiting; beyond that the main thread runs one itself */
#define WORKERS_MAX 3	  /* beside the main thread */
#define DENTS_BYTES 65536

/* A directory fd that batches share: closed with the last of them. */
struct dir {
	int fd;
	int refs;
};

/* Names of regular files to check: a byte indexing dirs[], then the name and its NUL. */
struct batch {
	struct batch *next;
	struct dir *dirs[BATCH_DIRS];
	size_t n_dirs, used;
	char names[BATCH_BYTES];
};

/* What a file is checked against: read-only while workers run. */
struct rules {
	struct timespec since;
	uint64_t mnt; /* the top's stx_mnt_id: nothing on another mount is touched */
	bool setid;   /* regular files are looked at (not on a nosuid mount) */
};

/* One directory on the path from the top. Its subdirectories are read whole before the walk
 * goes into the first, so that its fd may be closed meanwhile (dir NULL) and found again. */
struct frame {
	struct dir *dir;
	uint64_t ino;
	uint32_t dev_major, dev_minor;
	char *subdirs; /* NUL-separated */
	size_t len, cap, off;
	bool read;
};

struct walk {
	struct rules rules;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *head, **tail;
	size_t queued, submitted;
	bool done;
	pthread_t workers[WORKERS_MAX];
	size_t n_workers, max_workers;
	struct hutch_setid_walk total; /* the workers' counts, added as each ends */
	struct batch *cur;	       /* being filled by the main thread */
	struct frame *fr;
	size_t depth, fr_cap;
	char dents[DENTS_BYTES];
};

void hutch_setid_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME_COARSE, ts);
}

static void dir_unref(struct dir *d)
{
	if (d && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		close(d->fd);
		free(d);
	}
}

static struct dir *dir_new(int fd)
{
	struct dir *d = hutch_xmalloc(sizeof(*d));
	*d = (struct dir){ .fd = fd, .refs = 1 };
	return d;
}

static void count_failure(struct hutch_setid_walk *c, int e)
{
	c->failed++;
	if (!c->error)
		c->error = e;
}

static bool changed_since(const struct statx *sx, const struct timespec *t)
{
	return sx->stx_ctime.tv_sec > t->tv_sec ||
	       (sx->stx_ctime.tv_sec == t->tv_sec && sx->stx_ctime.tv_nsec >= (uint32_t)t->tv_nsec);
}

/*
 * The bits are cleared through an O_PATH fd of the file, checked once it is open: whatever has
 * been renamed over the name since it was read (a named sandbox runs on during the walk after
 * an exec), the inode changed is the one checked, a regular file on the top's mount. chmod(2)
 * of /proc/self/fd/N reaches that very inode (fchmod refuses O_PATH fds; glibc's fchmodat with
 * AT_SYMLINK_NOFOLLOW does this same thing), and the file itself is never opened, which a
 * FIFO or a device swapped in would make block or act.
 */
static void strip_fd(const struct rules *ru, int fd, struct hutch_setid_walk *c)
{
	struct statx sx;
	char path[HUTCH_FD_PATH_MAX];
	bool did = false;
	int e = 0;
	if (statx(fd, "", AT_EMPTY_PATH, MASK, &sx) < 0 || !S_ISREG(sx.stx_mode) ||
	    sx.stx_mnt_id != ru->mnt || !changed_since(&sx, &ru->since))
		return; /* replaced by something that is not ours to change */
	hutch_fd_path(fd, path);
	if (sx.stx_mode & SETID) {
		if (chmod(path, sx.stx_mode & 07777 & ~SETID) == 0)
			did = true;
		else
			e = errno;
	}
	/* Looked for first: removing a security.* name needs privilege even where it is absent. */
	if (getxattr(path, CAPS_XATTR, NULL, 0) >= 0) {
		if (removexattr(path, CAPS_XATTR) == 0)
			did = true;
		else if (errno != ENODATA && !e)
			e = errno;
	}
	if (e)
		count_failure(c, e);
	else if (did)
		c->cleared++;
}

#ifndef SYS_getxattrat
#define SYS_getxattrat 464 /* Linux 6.13; the same number on every architecture */
#endif
static bool no_getxattrat; /* the kernel said ENOSYS once */

/* Whether name in dirfd (not followed) has a file capability, without opening it:
 * getxattrat(2), else the same lookup through /proc (~4x the cost here). */
static bool may_have_caps(int dirfd, const char *name)
{
	char path[HUTCH_FD_PATH_MAX + NAME_MAX + 2];
	if (!__atomic_load_n(&no_getxattrat, __ATOMIC_RELAXED)) {
		struct {
			uint64_t value;
			uint32_t size, flags;
		} args = { 0 };
		if (syscall(SYS_getxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, CAPS_XATTR, &args,
			    sizeof(args)) >= 0)
			return true;
		if (errno != ENOSYS)
			return errno != ENODATA && errno != EOPNOTSUPP; /* unsure: look closer */
		__atomic_store_n(&no_getxattrat, true, __ATOMIC_RELAXED);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	return lgetxattr(path, CAPS_XATTR, NULL, 0) >= 0 ||
	       (errno != ENODATA && errno != EOPNOTSUPP);
}

static void check_name(const struct rules *ru, int dirfd, const char *name,
		       struct hutch_setid_walk *c)
{
	struct statx sx;
	if (statx(dirfd, name, BY_NAME, MASK, &sx) < 0 || !S_ISREG(sx.stx_mode))
		return; /* gone, or no longer a regular file */
	c->files++;
	if (sx.stx_mnt_id != ru->mnt) { /* a file bind-mounted over this one */
		c->mounts++;
		return;
	}
	if (!changed_since(&sx, &ru->since))
		return;
	if (!(sx.stx_mode & SETID) && !may_have_caps(dirfd, name))
		return;
	_cleanup_close_ int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		strip_fd(ru, fd, c);
}

/*
 * A device node the run made or changed: whoever on the host can open it gets the device, so
 * it is removed (rare: done here, not batched). A 0:0 character node is an overlayfs whiteout,
 * which an overlay's upper layer kept in a workspace needs, and which no open can use (no
 * driver has 0:0). unlinkat removes whatever the name is by then: a directory is refused (no
 * AT_REMOVEDIR), a mount point is busy, and anything else renamed over it is something the
 * sandbox could remove itself (it can write the directory).
 */
static void check_device(const struct rules *ru, int dirfd, const char *name,
			 struct hutch_setid_walk *c)
{
	struct statx sx;
	if (statx(dirfd, name, BY_NAME, MASK, &sx) < 0 ||
	    !(S_ISCHR(sx.stx_mode) || S_ISBLK(sx.stx_mode)))
		return;
	if (sx.stx_mnt_id != ru->mnt) {
		c->mounts++;
		return;
	}
	if (!changed_since(&sx, &ru->since) ||
	    (S_ISCHR(sx.stx_mode) && !sx.stx_rdev_major && !sx.stx_rdev_minor))
		return;
	if (unlinkat(dirfd, name, 0) == 0)
		c->devices++;
	else if (errno != ENOENT)
		count_failure(c, errno);
}

static void run_batch(const struct rules *ru, struct batch *b, struct hutch_setid_walk *c)
{
	for (size_t p = 0; p < b->used;) {
		const char *name = &b->names[p + 1];
		check_name(ru, b->dirs[(unsigned char)b->names[p]]->fd, name, c);
		p += strlen(name) + 2;
	}
	for (size_t i = 0; i < b->n_dirs; i++)
		dir_unref(b->dirs[i]);
	free(b);
}

static void add_counts(struct hutch_setid_walk *to, const struct hutch_setid_walk *c)
{
	to->files += c->files;
	to->cleared += c->cleared;
	to->devices += c->devices;
	to->failed += c->failed;
	to->mounts += c->mounts;
	to->dirs += c->dirs;
	if (!to->error)
		to->error = c->error;
}

/* ---- the workers ---- */

static struct batch *take(struct walk *w)
{
	pthread_mutex_lock(&w->mu);
	while (!w->head && !w->done)
		pthread_cond_wait(&w->cv, &w->mu);
	struct batch *b = w->head;
	if (b) {
		w->head = b->next;
		if (!w->head)
			w->tail = &w->head;
		w->queued--;
	}
	pthread_mutex_unlock(&w->mu);
	return b;
}

static void *worker(void *arg)
{
	struct walk *w = arg;
	struct hutch_setid_walk c = { 0 };
	for (struct batch *b; (b = take(w));)
		run_batch(&w->rules, b, &c);
	pthread_mutex_lock(&w->mu);
	add_counts(&w->total, &c);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* With every signal blocked, so that hutch's handlers run in the thread that expects them. */
static void spawn_worker(struct walk *w)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&w->workers[w->n_workers], NULL, worker, w) == 0)
		w->n_workers++;
	else
		w->max_workers = w->n_workers; /* none more: the main thread does the rest */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A full batch to a worker, or run here: the first (a small tree needs no thread), and any
 * while the queue is long. */
static void submit(struct walk *w, struct batch *b, struct hutch_setid_walk *c)
{
	bool here = w->submitted++ == 0;
	pthread_mutex_lock(&w->mu);
	if (!here && w->n_workers < w->max_workers && w->queued >= w->n_workers)
		spawn_worker(w); /* it waits for the lock, then for this batch */
	here = here || w->n_workers == 0 || w->queued >= QUEUE_MAX;
	if (!here) {
		b->next = NULL;
		*w->tail = b;
		w->tail = &b->next;
		w->queued++;
		pthread_cond_signal(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	if (here)
		run_batch(&w->rules, b, c);
}

static void flush(struct walk *w, struct hutch_setid_walk *c)
{
	if (w->cur)
		submit(w, steal_ptr(w->cur), c);
}

static void end_workers(struct walk *w)
{
	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (size_t i = 0; i < w->n_workers; i++)
		pthread_join(w->workers[i], NULL);
}

static void add_name(struct walk *w, struct dir *d, const char *name, struct hutch_setid_walk *c)
{
	size_t len = strlen(name) + 2;
	struct batch *b = w->cur;
	bool known = b && b->n_dirs && b->dirs[b->n_dirs - 1] == d;
	if (b && (b->used + len > BATCH_BYTES || (!known && b->n_dirs == BATCH_DIRS))) {
		flush(w, c);
		b = NULL;
	}
	if (!b) {
		b = w->cur = hutch_xmalloc(sizeof(*b));
		b->n_dirs = b->used = 0;
		known = false;
	}
	if (!known) {
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
		b->dirs[b->n_dirs++] = d;
	}
	b->names[b->used] = (char)(b->n_dirs - 1);
	memcpy(&b->names[b->used + 1], name, len - 1);
	b->used += len;
}

/* ---- the directories ---- */

static bool dot_or_dotdot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* An entry's type where the directory gave none (DT_UNKNOWN: some filesystems never do). */
static unsigned char type_of(int dirfd, const char *name)
{
	struct statx sx;
	if (statx(dirfd, name, BY_NAME, STATX_TYPE, &sx) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(sx.stx_mode)   ? DT_DIR
	       : S_ISREG(sx.stx_mode) ? DT_REG
	       : S_ISCHR(sx.stx_mode) ? DT_CHR
	       : S_ISBLK(sx.stx_mode) ? DT_BLK
				      : DT_UNKNOWN;
}

static void add_subdir(struct frame *f, const char *name)
{
	size_t len = strlen(name) + 1;
	if (f->len + len > f->cap) {
		f->cap = (f->len + len) * 2;
		f->subdirs = hutch_xrealloc(f->subdirs, f->cap);
	}
	memcpy(f->subdirs + f->len, name, len);
	f->len += len;
}

/* Regular files go into batches, subdirectories into the frame, device nodes to check_device.
 * A directory keeps its setgid bit: there it only gives new files the directory's group, and
 * grants nothing to whoever runs them. Symlinks, FIFOs and sockets are skipped unlooked at:
 * no bit on them grants anything either. */
static int read_dir(struct walk *w, struct frame *f, struct hutch_setid_walk *c)
{
	for (;;) {
		ssize_t n = getdents64(f->dir->fd, w->dents, sizeof(w->dents));
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t p = 0; p < n;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(w->dents + p);
			unsigned char type = d->d_type;
			p += d->d_reclen;
			if (dot_or_dotdot(d->d_name))
				continue;
			if (type == DT_UNKNOWN)
				type = type_of(f->dir->fd, d->d_name);
			if (type == DT_DIR)
				add_subdir(f, d->d_name);
			else if (type == DT_REG && w->rules.setid)
				add_name(w, f->dir, d->d_name, c);
			else if (type == DT_CHR || type == DT_BLK)
				check_device(&w->rules, f->dir->fd, d->d_name, c);
		}
	}
}

static bool same_dir(const struct statx *sx, const struct frame *f, uint64_t mnt)
{
	return sx->stx_ino == f->ino && sx->stx_dev_major == f->dev_major &&
	       sx->stx_dev_minor == f->dev_minor && sx->stx_mnt_id == mnt;
}

static void push(struct walk *w, int fd, const struct statx *sx)
{
	if (w->depth == w->fr_cap) {
		w->fr_cap = w->fr_cap ? w->fr_cap * 2 : 16;
		w->fr = hutch_xrealloc(w->fr, w->fr_cap * sizeof(*w->fr));
	}
	w->fr[w->depth++] = (struct frame){ .dir = dir_new(fd),
					    .ino = sx->stx_ino,
					    .dev_major = sx->stx_dev_major,
					    .dev_minor = sx->stx_dev_minor };
	if (w->depth > HELD_MAX) { /* a deep tree: not an fd per level */
		struct frame *far = &w->fr[w->depth - 1 - HELD_MAX];
		dir_unref(steal_ptr(far->dir));
	}
}

/* Into subdirectory name of the current frame, unless it is a mount point (or gone). */
static void descend(struct walk *w, const char *name, struct hutch_setid_walk *c)
{
	struct statx sx;
	int fd = openat(w->fr[w->depth - 1].dir->fd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
			count_failure(c, errno); /* unreadable: what is beneath keeps its bits */
		return;
	}
	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &sx) < 0 ||
	    sx.stx_mnt_id != w->rules.mnt) {
		c->mounts++;
		close(fd);
		return;
	}
	push(w, fd, &sx);
}

/* Back up to the parent frame; its fd, closed for depth, is found again through "..", which
 * must be the directory that was left: if the tree was moved meanwhile, the walk stops. */
static int ascend(struct walk *w)
{
	struct frame *f = &w->fr[w->depth - 1], *parent = w->depth > 1 ? f - 1 : NULL;
	int r = 0;
	if (parent && !parent->dir) {
		struct statx sx;
		int fd = openat(f->dir->fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &sx) == 0 &&
		    same_dir(&sx, parent, w->rules.mnt))
			parent->dir = dir_new(steal_fd(fd));
		else
			r = -ESTALE;
		if (fd >= 0)
			close(fd);
	}
	dir_unref(f->dir);
	free(f->subdirs);
	w->depth--;
	return r;
}

static int walk_tree(struct walk *w, int fd, const struct statx *top, struct hutch_setid_walk *c)
{
	int r = 0;
	push(w, fd, top);
	while (w->depth > 0 && r == 0) {
		struct frame *f = &w->fr[w->depth - 1];
		if (!f->read) {
			f->read = true;
			c->dirs++;
			int e = read_dir(w, f, c);
			if (e < 0)
				count_failure(c, -e);
		}
		if (f->off < f->len) {
			const char *name = f->subdirs + f->off;
			f->off += strlen(name) + 1;
			descend(w, name, c);
		} else {
			r = ascend(w);
		}
	}
	while (w->depth > 0) /* stopped: let go of what is still held */
		ascend(w);
	return r;
}

/* ---- the entry points ---- */

/* The top: its identity, and whether its mount honours the bits at all. */
static int look_at_top(int fd, mode_t type, struct statx *sx, struct hutch_setid_walk *out,
		       struct hutch_err *err)
{
	struct statvfs vfs;
	*out = (struct hutch_setid_walk){ 0 };
	if (statx(fd, "", AT_EMPTY_PATH, MASK, sx) < 0)
		return hutch_fail_errno(err, errno, "statx");
	if ((sx->stx_mode & S_IFMT) != type)
		return hutch_fail(err, EINVAL, "not a %s",
				  type == S_IFDIR ? "directory" : "regular file");
	if (!(sx->stx_mask & STATX_MNT_ID))
		return hutch_fail(err, ENOTSUP, "statx: no mount id (Linux 5.8 has it)");
	if (fstatvfs(fd, &vfs) < 0)
		return hutch_fail_errno(err, errno, "statvfs");
	out->nosuid = (vfs.f_flag & ST_NOSUID) != 0;
	return 0;
}

static size_t usable_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	return (size_t)CPU_COUNT(&set);
}

int hutch_setid_clear_tree(int dirfd, const struct timespec *since, struct hutch_setid_walk *out,
			   struct hutch_err *err)
{
	struct statx sx;
	struct hutch_setid_walk c = { 0 };
	int r = look_at_top(dirfd, S_IFDIR, &sx, out, err);
	if (r < 0)
		return r;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "open");
	struct walk *w = hutch_xcalloc(1, sizeof(*w));
	w->rules = (struct rules){ .since = *since, .mnt = sx.stx_mnt_id, .setid = !out->nosuid };
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->tail = &w->head;
	size_t cpus = usable_cpus();
	w->max_workers = cpus > WORKERS_MAX ? WORKERS_MAX : cpus - 1;
	r = walk_tree(w, fd, &sx, &c);
	flush(w, &c);
	end_workers(w);
	add_counts(out, &c);
	add_counts(out, &w->total);
	out->incomplete = r == -ESTALE;
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w->fr);
	free(w);
	return 0;
}

int hutch_setid_clear_file(int fd, const struct timespec *since, struct hutch_setid_walk *out,
			   struct hutch_err *err)
{
	struct statx sx;
	int r = look_at_top(fd, S_IFREG, &sx, out, err);
	if (r < 0 || out->nosuid)
		return r;
	struct rules ru = { .since = *since, .mnt = sx.stx_mnt_id };
	out->files = 1;
	if (changed_since(&sx, since))
		strip_fd(&ru, fd, out);
	return 0;
}
