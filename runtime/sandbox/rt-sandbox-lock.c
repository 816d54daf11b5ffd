// SPDX-License-Identifier: Apache-2.0
/*
 * --lock NAME: a queue per name, served in the order its waiters took their tickets, with
 * kernel locks alone, so that a holder or a waiter that dies never blocks the line and no
 * pid is trusted. locks/NAME/ holds "counter" (the last number given, flocked while one is
 * taken) and a ticket per waiter, named by its zero-padded number and flocked (LOCK_EX) by
 * its waiter for its whole life. A waiter is served once no lower ticket is live; until then
 * it sleeps in flock(LOCK_SH) on the next lower live one, which the kernel ends when that
 * one's process lets go or dies. A lower ticket that can be flocked is a dead waiter's, and
 * is removed; the last one out removes the queue.
 */
#include "rt-sandbox.h"
#include "rt-sandbox-lock.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#define COUNTER "counter"
#define TICKET_DIGITS 20

/* The one place that names the directory of the queues. */
static int locks_dir(bool make, struct hutch_err *err)
{
	return rt_sb_subdir("locks", make, err);
}

/* Still the file name in dir? A name removed (its queue emptied) may be made anew. */
static bool still_there(int fd, int dir, const char *name)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static bool is_ticket(const char *name)
{
	return strlen(name) == TICKET_DIGITS && strspn(name, "0123456789") == TICKET_DIGITS;
}

/* A stream of dir's entries, dir itself kept open (NULL with errno set). */
static DIR *entries(int dir)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d && fd >= 0) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return d;
}

/* A file of the queue, never a wait in open (O_NONBLOCK: a FIFO planted there) nor a symlink
 * followed; only a regular file is a counter or a ticket. */
static int open_file(int q, const char *lock, const char *name, int flags, struct hutch_err *err)
{
	int fd = openat(q, name, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return hutch_fail_errno(err, errno, "--lock %s: %s/%s/%s", lock, RT_SB_LOCKS, lock,
					name);
	if (!rt_regular(fd)) {
		close(fd);
		return hutch_fail(err, EINVAL, "--lock %s: %s/%s/%s is not a regular file", lock,
				  RT_SB_LOCKS, lock, name);
	}
	return fd;
}

static bool try_lock(int fd, int op)
{
	int r;
	while ((r = flock(fd, op | LOCK_NB)) < 0 && errno == EINTR)
		;
	return r == 0;
}

/* A lock file of hutch before the queues (locks/NAME) that nobody holds is removed; anything
 * else there is refused (a FIFO planted is opened without a wait, never locked). */
static int reclaim_old(int locks, const char *lock, struct hutch_err *err)
{
	_cleanup_close_ int fd =
		openat(locks, lock, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !rt_regular(fd))
		return hutch_fail(err, ENOTDIR, "--lock %s: %s/%s is not a directory", lock,
				  RT_SB_LOCKS, lock);
	if (!try_lock(fd, LOCK_EX))
		return hutch_fail(err, EWOULDBLOCK, "--lock %s: held by an older hutch", lock);
	if (still_there(fd, locks, lock))
		unlinkat(locks, lock, 0);
	return 0;
}

/* The queue's directory, made when missing (again when its last user removed it between the
 * mkdir and the open). */
static int open_queue(int locks, const char *lock, struct hutch_err *err)
{
	for (int tries = 0; tries < 100; tries++) {
		if (mkdirat(locks, lock, 0700) < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "--lock %s: mkdir %s/%s", lock,
						RT_SB_LOCKS, lock);
		int q = openat(locks, lock,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (q >= 0)
			return q;
		if (errno == ENOENT)
			continue;
		if (errno != ENOTDIR && errno != ELOOP)
			return hutch_fail_errno(err, errno, "--lock %s: %s/%s", lock, RT_SB_LOCKS,
						lock);
		int r = reclaim_old(locks, lock, err);
		if (r < 0)
			return r;
	}
	return hutch_fail(err, EAGAIN, "--lock %s: %s/%s keeps changing", lock, RT_SB_LOCKS, lock);
}

/* Who waits or holds, for messages: the ticket's process (a --detach supervisor writes its
 * own over its caller's). */
static void write_pid(int fd)
{
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, pid, (size_t)n, 0);
}

/* A number as hutch writes it (a counter or a ticket's name): digits alone, within 64 bits. */
static bool parse_number(const char *s, uint64_t *v)
{
	size_t len = strspn(s, "0123456789");
	if (len == 0 || len > TICKET_DIGITS || (s[len] && strcmp(s + len, "\n")))
		return false;
	errno = 0;
	*v = strtoull(s, NULL, 10);
	return errno == 0;
}

/* The last number given: the counter's, or the highest ticket's when higher (a counter
 * written over with a lower one must not hand out a number a live waiter holds, which would
 * let both in). Refused when the counter or a ticket's name is no number hutch writes. */
static int last_number(int q, int c, const char *lock, uint64_t *seq, struct hutch_err *err)
{
	char buf[TICKET_DIGITS + 3] = "";
	ssize_t n = pread(c, buf, sizeof(buf) - 1, 0);
	*seq = 0;
	if (n > 0 && !parse_number(buf, seq))
		return hutch_fail(err, EINVAL, "--lock %s: %s/%s/" COUNTER " is not a number", lock,
				  RT_SB_LOCKS, lock);
	DIR *d = entries(q);
	if (!d)
		return hutch_fail_errno(err, errno, "--lock %s: %s/%s", lock, RT_SB_LOCKS, lock);
	int r = 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d))) {
		uint64_t v;
		if (!is_ticket(e->d_name))
			continue;
		if (!parse_number(e->d_name, &v))
			r = hutch_fail(err, EOVERFLOW, "--lock %s: ticket %s is beyond 64 bits",
				       lock, e->d_name);
		else if (v > *seq)
			*seq = v;
	}
	closedir(d);
	return r;
}

/* The next number, under the counter's lock, and its ticket made and flocked before that
 * lock goes: a ticket another hutch sees is live or dead, never about to be locked. -EAGAIN
 * when the queue was removed meanwhile (emptied by its last user): start again. */
static int take_number(int q, const char *lock, struct rt_sb_ticket *t, struct hutch_err *err)
{
	_cleanup_close_ int c =
		openat(q, COUNTER, O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (c < 0 && errno == ENOENT)
		return -EAGAIN;
	if (c >= 0 && !rt_regular(c))
		return hutch_fail(err, EINVAL, "--lock %s: %s/%s/" COUNTER " is not a regular file",
				  lock, RT_SB_LOCKS, lock);
	while (c >= 0 && flock(c, LOCK_EX) < 0)
		if (errno != EINTR)
			return hutch_fail_errno(err, errno, "--lock %s: " COUNTER, lock);
	if (c < 0 || !still_there(c, q, COUNTER))
		return c < 0 ? hutch_fail_errno(err, errno, "--lock %s: " COUNTER, lock) : -EAGAIN;
	uint64_t seq;
	int r = last_number(q, c, lock, &seq, err);
	if (r < 0)
		return r;
	int fd = -1;
	/* A number taken twice (a counter written over) is skipped, never shared. */
	for (int tries = 0; fd < 0 && tries < 1000; tries++) {
		if (seq == UINT64_MAX)
			return hutch_fail(err, EOVERFLOW, "--lock %s: the numbers are used up",
					  lock);
		snprintf(t->name, sizeof(t->name), "%0*" PRIu64, TICKET_DIGITS, ++seq);
		fd = openat(q, t->name,
			    O_RDWR | O_CREAT | O_EXCL | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return hutch_fail_errno(err, errno, "--lock %s: ticket %s", lock, t->name);
	}
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (fd >= 0) {
			unlinkat(q, t->name, 0);
			close(fd);
		}
		return hutch_fail(err, EBUSY, "--lock %s: no ticket", lock);
	}
	write_pid(fd);
	(void)!pwrite(c, t->name, TICKET_DIGITS, 0);
	t->fd = fd;
	return 0;
}

int rt_sb_lock_enter(const struct rt_sb_opts *o, struct rt_sb_ticket *t, struct hutch_err *err)
{
	if (!o->lock || t->fd >= 0)
		return 0;
	_cleanup_close_ int locks = locks_dir(true, err);
	if (locks < 0)
		return hutch_err_prefix(err, "--lock: ");
	for (int tries = 0; tries < 100; tries++) {
		_cleanup_close_ int q = open_queue(locks, o->lock, err);
		if (q < 0)
			return q;
		int r = take_number(q, o->lock, t, err);
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		t->dir = steal_fd(q);
		return 0;
	}
	return hutch_fail(err, EAGAIN, "--lock %s: the queue keeps being removed", o->lock);
}

/* Who is ahead: the next lower live ticket (its fd, -1 when none: served), how many are live,
 * and the pid of the lowest, which holds the lock. */
struct line {
	int next;
	char next_name[TICKET_DIGITS + 1], first_name[TICKET_DIGITS + 1];
	int ahead;
	int holder;
};

static void line_clear(struct line *l)
{
	if (l->next >= 0)
		close(l->next);
}

/* One ticket below ours: a dead one removed, a live one counted. */
static int look_at(const struct rt_sb_ticket *t, const char *lock, const char *name, struct line *l,
		   struct hutch_err *err)
{
	int fd = open_file(t->dir, lock, name, O_RDONLY, err);
	if (fd == -ENOENT)
		return 0; /* removed meanwhile */
	if (fd < 0)
		return fd;
	if (try_lock(fd, LOCK_EX)) { /* nobody holds it: its waiter is gone */
		if (still_there(fd, t->dir, name))
			unlinkat(t->dir, name, 0);
		close(fd);
		return 0;
	}
	l->ahead++;
	if (!l->first_name[0] || strcmp(name, l->first_name) < 0) {
		char buf[32] = "";
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		l->holder = n > 0 ? atoi(buf) : 0;
		snprintf(l->first_name, sizeof(l->first_name), "%s", name);
	}
	if (l->next >= 0 && strcmp(name, l->next_name) < 0) {
		close(fd);
		return 0;
	}
	if (l->next >= 0)
		close(l->next);
	l->next = fd;
	snprintf(l->next_name, sizeof(l->next_name), "%s", name);
	return 0;
}

static int scan(const struct rt_sb_ticket *t, const char *lock, struct line *l,
		struct hutch_err *err)
{
	*l = (struct line){ .next = -1 };
	DIR *d = entries(t->dir);
	if (!d)
		return hutch_fail_errno(err, errno, "--lock %s: %s/%s", lock, RT_SB_LOCKS, lock);
	int r = 0;
	struct dirent *e;
	while (r >= 0 && (e = readdir(d)))
		if (is_ticket(e->d_name) && strcmp(e->d_name, t->name) < 0)
			r = look_at(t, lock, e->d_name, l, err);
	closedir(d);
	if (r < 0)
		line_clear(l);
	return r;
}

/* Until fd's holder lets go (the kernel wakes us when it does or dies), or the deadline. */
static int wait_for(int fd, double deadline)
{
	if (deadline < 0) {
		while (flock(fd, LOCK_SH) < 0)
			if (errno != EINTR)
				return -errno;
		return 0;
	}
	while (!try_lock(fd, LOCK_SH)) {
		if (errno != EWOULDBLOCK)
			return -errno;
		if (hutch_now_ms() >= deadline)
			return -ETIMEDOUT;
		usleep(10000);
	}
	return 0;
}

int rt_sb_lock_wait(const struct rt_sb_opts *o, struct rt_sb_ticket *t, struct hutch_err *err)
{
	if (!o->lock)
		return 0;
	double deadline = o->lock_timeout >= 0 ? hutch_now_ms() + o->lock_timeout * 1e3 : -1;
	write_pid(t->fd);
	for (;;) {
		struct line l;
		int r = scan(t, o->lock, &l, err);
		if (r < 0)
			return r;
		if (l.next < 0)
			return 0; /* no live ticket below ours */
		r = o->no_wait ? -ETIMEDOUT : wait_for(l.next, deadline);
		line_clear(&l);
		if (r == -ETIMEDOUT)
			return hutch_fail(err, EWOULDBLOCK, "--lock %s: held by pid %d%s", o->lock,
					  l.holder,
					  l.ahead > 1 ? ", with others waiting ahead" : "");
		if (r < 0)
			return hutch_fail_errno(err, -r, "--lock %s", o->lock);
	}
}

/* Nothing in q but the counter, whose lock we hold. */
static bool only_counter(int q)
{
	DIR *d = entries(q);
	if (!d)
		return false;
	bool only = true;
	struct dirent *e;
	while (only && (e = readdir(d)))
		only = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		       !strcmp(e->d_name, COUNTER);
	closedir(d);
	return only;
}

/* The queue NAME in locks, once its dead tickets are gone and nobody is in it: under the
 * counter's lock, so that a waiter taking a number then finds its counter gone and makes the
 * queue anew (and a ticket is locked before that lock goes, so one that can be locked under
 * it is a dead waiter's, even the newest). */
static void remove_queue(int locks, const char *lock)
{
	struct hutch_err e = { 0 };
	_cleanup_close_ int q =
		openat(locks, lock, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_close_ int c = q < 0 ? -1 : open_file(q, lock, COUNTER, O_RDONLY, &e);
	if (c < 0 || !try_lock(c, LOCK_EX) || !still_there(c, q, COUNTER))
		return; /* a waiter is taking a number: it will see to it */
	struct rt_sb_ticket all = { .fd = -1, .dir = q, .name = "99999999999999999999" };
	struct line l;
	if (scan(&all, lock, &l, &e) < 0)
		return;
	line_clear(&l);
	if (!only_counter(q))
		return;
	unlinkat(q, COUNTER, 0);
	unlinkat(locks, lock, AT_REMOVEDIR);
}

void rt_sb_unlock(const struct rt_sb_opts *o, struct rt_sb_ticket *t)
{
	struct hutch_err e = { 0 };
	if (t->fd < 0)
		return;
	/* Removed before its lock goes: the next waiter then finds no ticket ahead. */
	if (still_there(t->fd, t->dir, t->name))
		unlinkat(t->dir, t->name, 0);
	rt_sb_ticket_forget(t);
	_cleanup_close_ int locks = locks_dir(false, &e);
	if (locks >= 0)
		remove_queue(locks, o->lock);
}

void rt_sb_ticket_forget(struct rt_sb_ticket *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (t->dir >= 0)
		close(t->dir);
	t->fd = t->dir = -1;
}

void rt_sb_locks_sweep(void)
{
	struct hutch_err e = { 0 };
	_cleanup_close_ int locks = locks_dir(false, &e);
	DIR *d = locks < 0 ? NULL : entries(locks);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			remove_queue(locks, de->d_name);
	closedir(d);
}
