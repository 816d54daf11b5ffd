// SPDX-License-Identifier: Apache-2.0
/*
 * Host mode's mount view planned as data: the directories above each denied path pinned, every
 * tree the command may see (system, read, rw) cloned from the host, the host read-only, then a
 * new, empty root with only those trees, its links and the private tmpfs in it, shallow first,
 * and denied paths covered last, so that deny wins over rw, and rw over read. What the root
 * doesn't hold can't be reached at all: not read, and not connected to (a host service's unix
 * socket). Pure: what exists comes from the facts; what only the view can tell is a TEST op.
 */
#include "ns-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

struct vplan {
	struct ns_mount_plan *p;
	const struct ns_mount_facts *f;
	int slots;	  /* the next free slot */
	const char *root; /* where the new root is staged on the host */
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

/* p is in a tree (or in a private tmpfs too, when tmpfs counts): the root has it from there. */
static bool held(const struct ns_view *v, const char *p, bool tmpfs)
{
	for (size_t i = 0; tmpfs && i < v->n_tmpfs; i++)
		if (under(p, v->tmpfs[i].path))
			return true;
	return under_any(p, v->read, v->n_read) || under_any(p, v->rw, v->n_rw);
}

/* A tree or a private tmpfs lies in p: the root has p, to cover. */
static bool holds(const struct ns_view *v, const char *p)
{
	for (size_t i = 0; i < v->n_tmpfs; i++)
		if (under(v->tmpfs[i].path, p))
			return true;
	for (size_t i = 0; i < v->n_read + v->n_rw; i++)
		if (under(i < v->n_read ? v->read[i] : v->rw[i - v->n_read], p))
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

/* Where a mount is staged, on the host: a directory that no target is reached through. */
static const char *stage_spot(struct vplan *vp)
{
	static const char *const spots[] = { "/mnt", "/media", "/srv", "/tmp" };
	for (size_t i = 0; i < ARRAY_SIZE(spots); i++)
		if (kind(vp, spots[i]) == NS_SOURCE_DIR)
			return spots[i];
	return NULL;
}

/*
 * Denied files get a bind of one empty mode-000 file from a read-only tmpfs. Before Linux
 * 6.15 a detached mount can't be a bind source, so the tmpfs is attached briefly over a
 * directory that no target is reached through: the targets are held by fd.
 */
static void deny_files(struct vplan *vp, const struct ns_view *v)
{
	const char *spot = vp->root;
	size_t n = 0;
	for (size_t i = 0; i < v->n_deny; i++)
		n += kind(vp, v->deny[i]) == NS_SOURCE_FILE;
	if (!n || !spot)
		return;
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

/* What the new root holds, in the order to put it there. */
enum entry_kind { E_DIR, E_LINK, E_TMPFS, E_RO, E_RW };
struct entry {
	const char *path;
	enum entry_kind kind;
	int slot;	   /* a tree's clone */
	const char *extra; /* a link's target, a tmpfs's mount data */
	bool in_tree;	   /* a tmpfs: inside a tree */
};

/* Shallow first: a tree, or a tmpfs, beneath another goes on top of it. At one path a tmpfs
 * goes first (a tree allowed in it is put back), and rw after read (rw wins). */
static int shallow_first_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t dx = strcmp(x->path, "/") ? depth(x->path) : 0; /* --allow-read /: first */
	size_t dy = strcmp(y->path, "/") ? depth(y->path) : 0;
	if (dx != dy)
		return dx < dy ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->path, y->path);
}

static struct entry *push(struct entry **e, size_t *n, size_t *cap)
{
	if (*n == *cap)
		*e = hutch_xrealloc(*e, (*cap = *cap * 2 + 16) * sizeof(**e));
	return &(*e)[(*n)++];
}

/* Trees, cloned from the host while it is still writable: a read tree inside an rw tree is rw
 * (rw wins), so it is not cloned on its own. */
static void clone_trees(struct vplan *vp, const struct ns_view *v, struct entry **e, size_t *n,
			size_t *cap)
{
	for (size_t i = 0; i < v->n_read + v->n_rw; i++) {
		bool ro = i < v->n_read;
		const char *p = ro ? v->read[i] : v->rw[i - v->n_read];
		if (ro && under_any(p, v->rw, v->n_rw))
			continue;
		int slot = vp->slots++;
		add(vp, NS_OP_CLONE, p, fmt(vp, "view: clone %s", p))->slot = slot;
		if (ro)
			add(vp, NS_OP_SET_RDONLY, NULL, "view: read-only mount")->slot = slot;
		*push(e, n, cap) = (struct entry){ p, ro ? E_RO : E_RW, slot, NULL };
	}
}

/* The private tmpfs, the links the root has (/bin -> usr/bin, /dev/fd): a link only where no
 * tree has one already, so that nothing is ever made inside a tree; and the working directory,
 * empty (unlisted), where nothing else is: the command starts in it as on the host. */
static void add_others(struct vplan *vp, const struct ns_view *v, struct entry **e, size_t *n,
		       size_t *cap)
{
	for (size_t i = 0; i < v->n_tmpfs; i++) {
		char data[64];
		snprintf(data, sizeof(data), "mode=1777,size=%llu",
			 (unsigned long long)v->tmpfs[i].size);
		const char *p = v->tmpfs[i].path;
		*push(e, n, cap) =
			(struct entry){ p, E_TMPFS, -1, ns_plan_own(vp->p, hutch_xstrdup(data)),
					held(v, p, false) };
	}
	for (size_t i = 0; i < v->n_links; i++)
		if (!held(v, v->links[i].path, false))
			*push(e, n, cap) =
				(struct entry){ v->links[i].path, E_LINK, -1, v->links[i].target };
	if (v->cwd && !held(v, v->cwd, true))
		*push(e, n, cap) = (struct entry){ v->cwd, E_DIR, -1, NULL };
}

static const char *in_root(struct vplan *vp, const char *path)
{
	return ns_plan_own(vp->p, hutch_xasprintf("%s%s", vp->root, strcmp(path, "/") ? path : ""));
}

static void put(struct vplan *vp, const struct entry *e)
{
	const char *at = in_root(vp, e->path);
	struct ns_mount_op *op;
	if (e->kind == E_LINK) {
		char *dir = hutch_xstrdup(at);
		*strrchr(dir, '/') = '\0';
		if (strcmp(dir, vp->root))
			add(vp, NS_OP_MKPOINT, dir, "view");
		ns_plan_own(vp->p, dir);
		add(vp, NS_OP_SYMLINK, at, fmt(vp, "view: link %s", e->path))->source = e->extra;
		return;
	}
	/* A tmpfs in a tree goes on what the tree has: nothing is made in a tree (on the host). */
	if (e->kind != E_TMPFS || !e->in_tree)
		add(vp, NS_OP_MKPOINT, at, "view")->slot = e->slot;
	if (e->kind == E_DIR)
		return;
	if (e->kind == E_TMPFS) {
		op = add(vp, NS_OP_MOUNT_AT, at, fmt(vp, "view: tmpfs %s", e->path));
		op->source = op->fstype = "tmpfs";
		op->flags = MS_NOSUID | MS_NODEV;
		op->data = e->extra;
		return;
	}
	add(vp, NS_OP_MOVE, at, fmt(vp, "view: attach %s", e->path))->slot = e->slot;
}

/* Another denied path is p or above it (the first of equal ones): its cover hides p, and one
 * for p would be made through it. */
static bool covered_by_another(const struct ns_view *v, size_t i)
{
	for (size_t j = 0; j < v->n_deny; j++)
		if (j != i && under(v->deny[i], v->deny[j]) &&
		    (j < i || strcmp(v->deny[i], v->deny[j])))
			return true;
	return false;
}

/* Denied directories (and denied paths a private tmpfs hides): an empty read-only tmpfs with
 * mode 000 on top of everything, so that reading, listing and writing all fail. Only where the
 * root has them: in a tree or a tmpfs. Whether a path is hidden is known only once the view
 * is built: a TEST of it, then. */
static void deny_dirs(struct vplan *vp, const struct ns_view *v)
{
	for (size_t i = 0; i < v->n_deny; i++) {
		const char *p = v->deny[i];
		if (covered_by_another(v, i) || !(held(v, p, true) || holds(v, p)))
			continue; /* hidden already, or nowhere in the view: nothing to cover */
		const char *at = in_root(vp, p);
		add(vp, NS_OP_TEST, at, NULL); /* a file: bound by deny_files */
		add(vp, NS_OP_MKPOINT, at, "view")->branch = NS_BRANCH_MISSING;
		int slot = tmpfs(vp, "0", true, NS_BRANCH_DIR | NS_BRANCH_MISSING);
		struct ns_mount_op *op = add(vp, NS_OP_MOVE, at, fmt(vp, "view: deny %s", p));
		op->slot = slot;
		op->branch = NS_BRANCH_DIR | NS_BRANCH_MISSING;
		vp->slots--; /* each one's tmpfs reuses the slot */
	}
}

/* The new root: an empty tmpfs staged on the host, then every entry put in it. It turns
 * read-only once the denied paths are covered (that may make mount points in it), alone:
 * the trees attached to it keep their own flags. */
static void build_root(struct vplan *vp, const struct ns_view *v, struct entry *e, size_t n)
{
	int root = tmpfs(vp, "0755", false, 0);
	add(vp, NS_OP_MOVE, vp->root, fmt(vp, "view: stage the root on %s", vp->root))->slot = root;
	qsort(e, n, sizeof(*e), shallow_first_entry);
	for (size_t i = 0; i < n; i++)
		put(vp, &e[i]);
	deny_dirs(vp, v); /* last: deny wins over all beneath it */
	struct ns_mount_op *op = add(vp, NS_OP_SET_RDONLY, NULL, "view: read-only root");
	op->slot = root;
	op->flags = NS_RDONLY_ALONE;
}

void ns_mount_plan_view(const struct ns_view *v, const struct ns_mount_facts *f,
			struct ns_mount_plan *p)
{
	struct vplan vp = { .p = p, .f = f };
	vp.root = stage_spot(&vp);
	if (!vp.root) {
		struct ns_mount_op *op =
			add(&vp, NS_OP_FAIL, NULL, "view: no directory to stage the new root on");
		op->error = ENOENT;
		return;
	}
	p->view_root = vp.root;
	struct ns_mount_op *op = add(&vp, NS_OP_PROPAGATION, "/", "view: make / a slave");
	op->flags = MS_REC | MS_SLAVE;		  /* nothing leaks to the host */
	for (size_t i = 0; i < v->n_binds; i++) { /* the bridge's resolv.conf: cloned with /etc */
		add(&vp, NS_OP_MKFILE, v->binds[i].target, NULL);
		add(&vp, NS_OP_BIND, v->binds[i].target, NULL)->source = v->binds[i].source;
	}
	pin_ancestors(&vp, v); /* first: all the rest is mounted on top of the pins */
	deny_files(&vp, v);    /* the clones below carry the binds along */
	size_t n = 0, cap = 0;
	struct entry *e = NULL;
	clone_trees(&vp, v, &e, &n, &cap); /* while the trees are still writable */
	add(&vp, NS_OP_SET_RDONLY, "/", "view: read-only host"); /* every mount, recursively */
	add_others(&vp, v, &e, &n, &cap);
	build_root(&vp, v, e, n);
	free(e);
}
