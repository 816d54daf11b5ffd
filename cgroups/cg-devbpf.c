// SPDX-License-Identifier: Apache-2.0
/*
 * Device access control on cgroup v2, which has no devices.allow file: a
 * BPF_PROG_TYPE_CGROUP_DEVICE program built from the OCI rules, loaded and attached to the
 * container's cgroup (BPF_F_ALLOW_MULTI, as crun and runc). The builder is pure and tested
 * without a kernel; the semantics are OCI's: the last matching rule wins, default deny.
 */
#include "cg-internal.h"

#include <string.h>

/* Registers after the prologue. */
enum { R_TMP = 1, R_TYPE = 2, R_ACCESS = 3, R_MAJOR = 4, R_MINOR = 5 };

struct prog {
	struct bpf_insn *v;
	size_t n;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	p->v[p->n++] = (struct bpf_insn){
		.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm
	};
}

static void prologue(struct prog *p)
{
	/* struct bpf_cgroup_dev_ctx: access_type = (ACC_* << 16) | DEV_*, major, minor. */
	emit(p, BPF_LDX | BPF_MEM | BPF_W, R_TYPE, 1, 0, 0);
	emit(p, BPF_ALU | BPF_AND | BPF_K, R_TYPE, 0, 0, 0xffff);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, R_ACCESS, 1, 0, 0);
	emit(p, BPF_ALU | BPF_RSH | BPF_K, R_ACCESS, 0, 0, 16);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, R_MAJOR, 1, 4, 0);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, R_MINOR, 1, 8, 0);
}

static int access_bits(const char *a)
{
	int bits = 0;
	if (!*a)
		a = "rwm";
	for (; *a; a++)
		bits |= *a == 'r'   ? BPF_DEVCG_ACC_READ
			: *a == 'w' ? BPF_DEVCG_ACC_WRITE
				    : BPF_DEVCG_ACC_MKNOD;
	return bits;
}

/* One rule: a run of "skip to the next rule unless ..." tests, then return allow/deny. */
static void rule_block(struct prog *p, const struct cg_device_rule *d)
{
	const int all = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
	int acc = access_bits(d->access);
	struct {
		uint8_t op, reg;
		int32_t imm;
	} tests[4];
	size_t nt = 0;
	bool acc_test = acc != all;

	if (d->type != 'a')
		tests[nt++] = (typeof(tests[0])){ BPF_JNE, R_TYPE,
						  d->type == 'b' ? BPF_DEVCG_DEV_BLOCK
								 : BPF_DEVCG_DEV_CHAR };
	if (d->major >= 0)
		tests[nt++] = (typeof(tests[0])){ BPF_JNE, R_MAJOR, (int32_t)(uint32_t)d->major };
	if (d->minor >= 0)
		tests[nt++] = (typeof(tests[0])){ BPF_JNE, R_MINOR, (int32_t)(uint32_t)d->minor };

	/* Instructions left after each test: the access test (2 + 1), then mov + exit. */
	int remaining = (int)nt + (acc_test ? 3 : 0) + 2;
	for (size_t i = 0; i < nt; i++) {
		remaining--;
		emit(p, BPF_JMP32 | tests[i].op | BPF_K, tests[i].reg, 0, (int16_t)remaining,
		     tests[i].imm);
	}
	if (acc_test) {
		/* An allow rule covers a request only if it grants every bit asked for; a deny
		 * rule applies as soon as it denies any of them. */
		emit(p, BPF_ALU | BPF_MOV | BPF_X, R_TMP, R_ACCESS, 0, 0);
		emit(p, BPF_ALU | BPF_AND | BPF_K, R_TMP, 0, 0, d->allow ? (all & ~acc) : acc);
		emit(p, BPF_JMP32 | (d->allow ? BPF_JNE : BPF_JEQ) | BPF_K, R_TMP, 0, 2, 0);
	}
	emit(p, BPF_ALU | BPF_MOV | BPF_K, 0, 0, 0, d->allow ? 1 : 0);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

int cg_devbpf_build(const struct cg_device_rule *rules, size_t n, struct bpf_insn **out,
		    size_t *n_insns, struct hutch_err *err)
{
	if (n > 10000)
		return hutch_fail(err, E2BIG, "too many device rules (%zu)", n);
	struct prog p = { hutch_xcalloc(6 + n * 9 + 2, sizeof(struct bpf_insn)), 0 };
	prologue(&p);
	/* Emitted last rule first and the first match returns: so the last matching rule in
	 * spec order wins, as with v1's devices.allow/deny sequence. */
	for (size_t i = n; i-- > 0;) {
		if (rules[i].type != 'a' && rules[i].type != 'b' && rules[i].type != 'c') {
			free(p.v);
			return hutch_fail(err, EINVAL, "devices[%zu]: invalid type '%c'", i,
					  rules[i].type);
		}
		rule_block(&p, &rules[i]);
		/* A rule matching everything always exits: what would follow is unreachable,
		 * and the 6.1 verifier refuses unreachable instructions. */
		if (rules[i].type == 'a' && rules[i].major < 0 && rules[i].minor < 0 &&
		    access_bits(rules[i].access) == 7) {
			*out = p.v;
			*n_insns = p.n;
			return 0;
		}
	}
	emit(&p, BPF_ALU | BPF_MOV | BPF_K, 0, 0, 0, 0); /* nothing matched: deny */
	emit(&p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	*out = p.v;
	*n_insns = p.n;
	return 0;
}

/* Ids of the device programs attached to this very cgroup (not inherited ones). */
static int query(int cgfd, uint32_t *ids, uint32_t *n)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.query.target_fd = (uint32_t)cgfd;
	a.query.attach_type = BPF_CGROUP_DEVICE;
	a.query.prog_ids = (uint64_t)(uintptr_t)ids;
	a.query.prog_cnt = *n;
	int r = cg_sys_bpf(BPF_PROG_QUERY, &a);
	*n = r < 0 ? 0 : a.query.prog_cnt;
	return r;
}

static int detach(int cgfd, uint32_t id, struct hutch_err *err)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	_cleanup_close_ int fd = cg_sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (fd == -ENOENT) /* gone already */
		return 0;
	if (fd < 0)
		return hutch_fail_errno(err, fd, "get device BPF program %u", id);
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)cgfd;
	a.attach_bpf_fd = (uint32_t)fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	int r = cg_sys_bpf(BPF_PROG_DETACH, &a);
	if (r < 0 && r != -ENOENT)
		return hutch_fail_errno(err, r, "detach old device BPF program %u", id);
	return 0;
}

int cg_devbpf_apply(int cgroup_fd, const struct cg_device_rule *rules, size_t n,
		    struct hutch_err *err)
{
	_cleanup_free_ struct bpf_insn *insns = NULL;
	size_t ni = 0;
	int r = cg_devbpf_build(rules, n, &insns, &ni, err);
	if (r < 0)
		return r;
	uint32_t old[64], n_old = ARRAY_SIZE(old);
	r = query(cgroup_fd, old, &n_old);
	if (r < 0 && r != -ENOSPC)
		return hutch_fail_errno(err, r, "query device BPF programs");
	_cleanup_close_ int prog =
		cg_bpf_load(BPF_PROG_TYPE_CGROUP_DEVICE, 0, insns, ni, "device BPF program", err);
	if (prog < 0)
		return prog;
	r = cg_bpf_attach(cgroup_fd, prog, BPF_CGROUP_DEVICE, "device BPF program", err);
	if (r < 0)
		return r;
	/* The new program is in force before the old ones go: no unfiltered window. With
	 * ALLOW_MULTI every attached program must allow, so leaving old ones would narrow the
	 * set to their intersection (`update` could never widen it). */
	for (uint32_t i = 0; i < n_old; i++) {
		r = detach(cgroup_fd, old[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}
