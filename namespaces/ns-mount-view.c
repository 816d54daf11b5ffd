// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's mount view planned as data: the directories above each denied path pinned, the
 * host read-only, rw trees (and read trees a private tmpfs would hide) cloned while still
 * writable and put back, private tmpfs, and denied paths covered last, so that deny wins over
 * rw, and rw over read. Pure: what exists comes from the facts; what only the view being
 * built can tell is a TEST op.
 */
#include "ns-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

struct vplan {
	struct ns_mount_plan *p;
	const struct ns_mount_facts *f;
	int slots; /* the next free slot */
};

static struct ns_mount_op *add(struct vplan *vp, enum ns_mount_op_kind kind, const char *target,
			       const char *label)
{
	struct ns_mount_op *op = ns_plan_add(vp->p, kind, target);
	op->label = label;
	return op;
}

static const char *fmt(struct vplan *vp, const char *f, const char *arg)
{
	return ns_plan_own(vp->p, hutch_xasprintf(f, arg));
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1)
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

static bool under_any(const char *path, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (under(path, v[i]))
			return true;
	return false;
}

static int kind(struct vplan *vp, const char *path)
{
	return vp->f->source_kind(vp->f->ctx, path, -1);
}

/* A detached tmpfs in a new slot, read-only from the start when ro. */
static int tmpfs(struct vplan *vp, const char *mode, bool ro, unsigned branch)
{
	struct ns_mount_op *op = add(vp, NS_OP_TMPFS, NULL, "view");
	op->source = mode;
	op->data = "64k";
	op->flags = ro ? MS_RDONLY : 0;
	op->branch = branch;
	return op->slot = vp->slots++;
}

/*
 * Denied files get a bind of one empty mode-000 file from a read-only tmpfs. Before Linux
 * 6.15 a detached mount can't be a bind source, so the tmpfs is attached briefly over a
 * directory that no target is reached through: the targets are held by fd.
 */
static void deny_files(struct vplan *vp, const struct ns_view *v)
{
	static const char *const spots[] = { "/mnt", "/media", "/srv", "/tmp" };
	const char *spot = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(spots) && !spot; i++)
		if (kind(vp, spots[i]) == NS_SOURCE_DIR)
			spot = spots[i];
	size_t n = 0;
	for (size_t i = 0; i < v->n_deny; i++)
		n += kind(vp, v->deny[i]) == NS_SOURCE_FILE;
	if (!n)
		return;
	if (!spot) {
		struct ns_mount_op *op = add(vp, NS_OP_FAIL, NULL,
					     "view: no directory to stage the denied files on");
		op->error = ENOENT;
		return;
	}
	int first = vp->slots;
	for (size_t i = 0; i < v->n_deny; i++) /* a missing one's slot stays -1 */
		if (kind(vp, v->deny[i]) != NS_SOURCE_DIR)
			add(vp, NS_OP_OPEN, v->deny[i], NULL)->slot = vp->slots++;
	int last = vp->slots;
	int mnt = tmpfs(vp, "0700", false, 0);
	/* Closed at once: a file open for writing keeps the mount from turning read-only. */
	struct ns_mount_op *op = add(vp, NS_OP_CREATE_IN, NULL, "view: denied file");
	op->source = "denied";
	op->slot2 = mnt;
	add(vp, NS_OP_SET_RDONLY, NULL, "view: read-only mount")->slot = mnt;
	add(vp, NS_OP_MOVE, spot, fmt(vp, "view: stage on %s", spot))->slot = mnt;
	op = add(vp, NS_OP_OPEN_AT, NULL, NULL);
	op->source = "denied";
	op->slot2 = mnt;
	int src = op->slot = vp->slots++;
	for (size_t i = 0, s = (size_t)first; i < v->n_deny; i++) {
		if (kind(vp, v->deny[i]) == NS_SOURCE_DIR)
			continue;
		op = add(vp, NS_OP_BIND_SLOTS, v->deny[i], fmt(vp, "view: deny %s", v->deny[i]));
		op->slot = (int)s++;
		op->slot2 = src;
	}
	add(vp, NS_OP_UMOUNT, spot, fmt(vp, "view: unstage %s", spot));
	for (int s = first; s < last; s++)
		add(vp, NS_OP_CLOSE, NULL, NULL)->slot = s;
}

static bool is_any(const char *path, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(path, v[i]))
			return true;
	return false;
}

static size_t depth(const char *p)
{
	size_t d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

static int shallow_first(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t dx = depth(x), dy = depth(y);
	return dx != dy ? (dx < dy ? -1 : 1) : strcmp(x, y);
}

/* The directories strictly between an rw root and a denied path beneath it, once each (an rw
 * root among them is attached as a mount point anyway), in the order to pin them. */
static char **pin_list(const struct ns_view *v, size_t *n)
{
	char **pins = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < v->n_deny; i++) {
		const char *d = v->deny[i];
		for (size_t j = 0; j < v->n_rw; j++) {
			size_t root = strlen(v->rw[j]);
			if (!under(d, v->rw[j]) || !d[root])
				continue;
			for (const char *s = strchr(d + (root > 1 ? root : 0) + 1, '/'); s;
			     s = strchr(s + 1, '/')) {
				char *a = hutch_xasprintf("%.*s", (int)(s - d), d);
				if (is_any(a, v->rw, v->n_rw) || is_any(a, pins, *n)) {
					free(a);
					continue;
				}
				if (*n == cap)
					pins = hutch_xrealloc(pins,
							      (cap = cap * 2 + 8) * sizeof(*pins));
				pins[(*n)++] = a;
			}
		}
	}
	if (*n)
		qsort(pins, *n, sizeof(*pins), shallow_first);
	return pins;
}

/*
 * A deny covers a name; renaming a directory above it would carry the cover along and leave
 * the name free, to be covered afresh (empty) by the next run while the denied file sits
 * elsewhere in the tree. So every directory between an rw root and a denied path is bound onto
 * itself: a mount point can't be renamed or removed (EBUSY), in any mount of its dentry in this
 * namespace. First, on the host's mounts, shallow first: everything mounted later (the rw
 * clones, which carry the pins along, and the denied paths' covers) lands on top of them.
 * Recursive, so that what the host mounts beneath stays.
 */
static void pin_ancestors(struct vplan *vp, const struct ns_view *v)
{
	size_t n = 0;
	char **pins = pin_list(v, &n);
	for (size_t i = 0; i < n; i++) {
		const char *a = ns_plan_own(vp->p, pins[i]);
		add(vp, NS_OP_CLONE, a, fmt(vp, "view: pin %s", a))->slot = vp->slots;
		add(vp, NS_OP_MOVE, a, fmt(vp, "view: pin %s", a))->slot = vp->slots;
	}
	if (n)
		vp->slots++; /* one slot, reused */
	free(pins);
}

struct clone {
	const char *path;
	int slot;
	bool ro;
};

static int by_order(const void *a, const void *b)
{
	const struct clone *x = a, *y = b;
	if (x->ro != y->ro)
		return x->ro ? -1 : 1; /* read trees first: rw wins inside them */
	return (int)depth(x->path) - (int)depth(y->path);
}

/* Trees that must survive what comes next: rw trees (before / turns read-only) and read
 * trees a private tmpfs would hide. A read tree inside an rw tree is rw: rw wins. Returns
 * them in the order to attach them. */
static struct clone *clone_trees(struct vplan *vp, const struct ns_view *v, size_t *n)
{
	struct clone *c = hutch_xcalloc(v->n_read + v->n_rw + 1, sizeof(*c));
	for (size_t i = 0; i < v->n_read + v->n_rw; i++) {
		bool ro = i < v->n_read;
		const char *p = ro ? v->read[i] : v->rw[i - v->n_read];
		if (ro && (under_any(p, v->rw, v->n_rw) || !under_any(p, v->hidden, v->n_hidden)))
			continue;
		int slot = vp->slots++;
		add(vp, NS_OP_CLONE, p, fmt(vp, "view: clone %s", p))->slot = slot;
		c[(*n)++] = (struct clone){ p, slot, ro };
		if (ro)
			add(vp, NS_OP_SET_RDONLY, NULL, "view: read-only mount")->slot = slot;
	}
	qsort(c, *n, sizeof(*c), by_order);
	return c;
}

/* Denied directories (and denied paths a private tmpfs hides): an empty read-only tmpfs with
 * mode 000 on top of everything, so that reading, listing and writing all fail. Whether a
 * path is hidden is known only once the view is built: a TEST of it, then. */
static void deny_dirs(struct vplan *vp, const struct ns_view *v)
{
	int slot = -1;
	for (size_t i = 0; i < v->n_deny; i++) {
		const char *p = v->deny[i];
		add(vp, NS_OP_TEST, p, NULL); /* a file: bound by deny_files */
		add(vp, NS_OP_MKPOINT, p, "view")->branch = NS_BRANCH_MISSING;
		slot = tmpfs(vp, "0", true, NS_BRANCH_DIR | NS_BRANCH_MISSING);
		struct ns_mount_op *op = add(vp, NS_OP_MOVE, p, fmt(vp, "view: deny %s", p));
		op->slot = slot;
		op->branch = NS_BRANCH_DIR | NS_BRANCH_MISSING;
		vp->slots--; /* each one's tmpfs reuses the slot */
	}
}

void ns_mount_plan_view(const struct ns_view *v, const struct ns_mount_facts *f,
			struct ns_mount_plan *p)
{
	struct vplan vp = { .p = p, .f = f };
	struct ns_mount_op *op = add(&vp, NS_OP_PROPAGATION, "/", "view: make / a slave");
	op->flags = MS_REC | MS_SLAVE; /* nothing leaks to the host */
	pin_ancestors(&vp, v);	       /* first: all the rest is mounted on top of the pins */
	deny_files(&vp, v);	       /* rw clones below carry the binds along */
	size_t n = 0;
	struct clone *c = clone_trees(&vp, v, &n); /* while the trees are still writable */
	add(&vp, NS_OP_SET_RDONLY, "/", "view: read-only /"); /* every mount, recursively */
	for (size_t i = 0; i < v->n_tmpfs; i++) {
		const struct ns_view_tmpfs *t = &v->tmpfs[i];
		char data[64];
		snprintf(data, sizeof(data), "mode=1777,size=%llu", (unsigned long long)t->size);
		op = add(&vp, NS_OP_MOUNT_AT, t->path, fmt(&vp, "view: tmpfs %s", t->path));
		op->source = op->fstype = "tmpfs";
		op->flags = MS_NOSUID | MS_NODEV;
		op->data = ns_plan_own(p, hutch_xstrdup(data));
	}
	for (size_t i = 0; i < n; i++) {
		add(&vp, NS_OP_MKPOINT, c[i].path, "view")->slot = c[i].slot;
		op = add(&vp, NS_OP_MOVE, c[i].path, fmt(&vp, "view: attach %s", c[i].path));
		op->slot = c[i].slot;
	}
	free(c);
	deny_dirs(&vp, v); /* last: deny wins over all beneath it */
}
