// SPDX-License-Identifier: Apache-2.0
/*
 * The spec's kernel attributes of a process: linux.personality, process.ioPriority,
 * process.scheduler, linux.memoryPolicy and linux.timeOffsets. Names are checked against
 * namespaces/' tables and values against what the kernel would take, so that a mistake fails
 * naming its field before anything is created.
 */
#include "rt-spec-internal.h"

#include <sched.h>
#include <string.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

enum { POLICY_FIFO = 1, POLICY_RR = 2, POLICY_DEADLINE = 6 };
#define SCHED_FLAG_RESET_ON_FORK_ 0x01
/* The kernel's smallest deadline runtime (1 << DL_SCALE ns). */
#define DL_MIN_RUNTIME 1024

enum { MPOL_DEFAULT_ = 0, MPOL_PREFERRED_ = 1, MPOL_LOCAL_ = 4 };
#define MPOL_F_STATIC (1 << 15)
#define MPOL_F_RELATIVE (1 << 14)

static int lookup(const struct ns_name_value *t, const char *name, const char *field,
		  const char *what, int64_t *out, struct hutch_err *err)
{
	int r = ns_lookup(t, name, out);
	if (r == -EOPNOTSUPP)
		return hutch_fail(err, EOPNOTSUPP, "%s: %s: not supported", field, name);
	if (r < 0)
		return hutch_fail(err, EINVAL, "%s: unknown %s %s", field, what, name);
	return 0;
}

/* A required string naming a table entry. */
static int named(yajl_val obj, const char *key, const char *field, const struct ns_name_value *t,
		 const char *what, int64_t *out, struct hutch_err *err)
{
	_cleanup_free_ char *s = NULL;
	int r = hutch_json_string(obj, key, field, true, &s, err);
	return r < 0 ? r : lookup(t, s, field, what, out, err);
}

/* A list of flag names, or'ed. */
static int flags(yajl_val obj, const char *field, const struct ns_name_value *t, int64_t *out,
		 struct hutch_err *err)
{
	_cleanup_strv_ char **names = NULL;
	int64_t v;
	int r = hutch_json_strv(obj, "flags", field, false, &names, NULL, err);
	for (size_t i = 0; r >= 0 && names && names[i]; i++) {
		r = lookup(t, names[i], field, "flag", &v, err);
		if (r >= 0)
			*out |= v;
	}
	return r;
}

static int parse_personality(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	yajl_val v;
	int64_t domain;
	_cleanup_strv_ char **fl = NULL;
	int r = hutch_json_object(lx, "personality", "linux.personality", &v, err);
	if (r < 0 || !v)
		return r;
	r = named(v, "domain", "linux.personality.domain", ns_personality_domains, "domain",
		  &domain, err);
	if (r >= 0)
		r = hutch_json_strv(v, "flags", "linux.personality.flags", false, &fl, NULL, err);
	if (r < 0)
		return r;
	if (fl && fl[0]) /* the spec defines none yet */
		return hutch_fail(err, EOPNOTSUPP, "linux.personality.flags: %s: not supported",
				  fl[0]);
	spec->has_personality = true;
	spec->personality = (unsigned long)domain;
	return 0;
}

static int parse_ioprio(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	yajl_val io;
	int64_t class, level;
	int r = hutch_json_object(proc, "ioPriority", "process.ioPriority", &io, err);
	if (r < 0 || !io)
		return r;
	r = named(io, "class", "process.ioPriority.class", ns_ioprio_classes, "class", &class, err);
	if (r >= 0)
		r = hutch_json_req_int(io, "priority", "process.ioPriority.priority", 0, 7, &level,
				       err);
	if (r < 0)
		return r;
	p->ioprio = (struct ns_ioprio){ .set = true, .class = (int)class, .level = (int)level };
	return 0;
}

/* sched_setattr's rules, checked here so that the error names the field. */
static int check_sched(const struct ns_sched *s, struct hutch_err *err)
{
	bool rt = s->policy == POLICY_FIFO || s->policy == POLICY_RR;
	if (rt && (s->priority < 1 || s->priority > 99))
		return hutch_fail(err, EINVAL,
				  "process.scheduler.priority: %u out of range (1 to 99 for "
				  "SCHED_FIFO and SCHED_RR)",
				  s->priority);
	if (!rt && s->priority)
		return hutch_fail(
			err, EINVAL,
			"process.scheduler.priority: only SCHED_FIFO and SCHED_RR take one");
	if (s->policy != POLICY_DEADLINE) {
		if (s->runtime || s->deadline || s->period)
			return hutch_fail(err, EINVAL,
					  "process.scheduler: runtime, deadline and period are for "
					  "SCHED_DEADLINE only");
		return 0;
	}
	if (s->runtime < DL_MIN_RUNTIME)
		return hutch_fail(err, EINVAL,
				  "process.scheduler.runtime: SCHED_DEADLINE needs at least %d ns",
				  DL_MIN_RUNTIME);
	if (s->deadline < s->runtime || (s->period && s->period < s->deadline) ||
	    s->deadline >> 63 || s->period >> 63)
		return hutch_fail(err, EINVAL,
				  "process.scheduler: SCHED_DEADLINE needs runtime <= deadline <= "
				  "period (a period of 0 is the deadline)");
	return 0;
}

static int parse_scheduler(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	static const char *const times[] = { "runtime", "deadline", "period" };
	uint64_t *dst[] = { &p->sched.runtime, &p->sched.deadline, &p->sched.period };
	char f[HUTCH_FIELD_MAX];
	int64_t policy, nice = 0, prio = 0, fl = 0;
	yajl_val sc;

	int r = hutch_json_object(proc, "scheduler", "process.scheduler", &sc, err);
	if (r < 0 || !sc)
		return r;
	if ((r = named(sc, "policy", "process.scheduler.policy", ns_sched_policies, "policy",
		       &policy, err)) < 0 ||
	    (r = hutch_json_int(sc, "nice", "process.scheduler.nice", -20, 19, NULL, &nice, err)) <
		    0 ||
	    (r = hutch_json_int(sc, "priority", "process.scheduler.priority", 0, INT32_MAX, NULL,
				&prio, err)) < 0 ||
	    (r = flags(sc, "process.scheduler.flags", ns_sched_flags, &fl, err)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(times); i++) {
		hutch_json_field(f, "process.scheduler.%s", times[i]);
		r = hutch_json_uint64(sc, times[i], f, UINT64_MAX, NULL, dst[i], err);
		if (r < 0)
			return r;
	}
	p->sched.policy = (uint32_t)policy;
	p->sched.nice = (int32_t)nice;
	p->sched.priority = (uint32_t)prio;
	p->sched.flags = (uint64_t)fl;
	p->sched.set = true;
	return check_sched(&p->sched, err);
}

static int check_nodes(const struct ns_mempolicy *m, bool has_nodes, const char *mode,
		       struct hutch_err *err)
{
	int base = m->mode & 0xff;
	bool none = base == MPOL_DEFAULT_ || base == MPOL_LOCAL_;
	if (none && has_nodes)
		return hutch_fail(err, EINVAL, "linux.memoryPolicy.nodes: %s takes no nodes", mode);
	if (!none && base != MPOL_PREFERRED_ && !has_nodes)
		return hutch_fail(err, EINVAL, "linux.memoryPolicy.nodes: required by %s", mode);
	if ((m->mode & MPOL_F_STATIC) && (m->mode & MPOL_F_RELATIVE))
		return hutch_fail(err, EINVAL,
				  "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and "
				  "MPOL_F_RELATIVE_NODES exclude each other");
	return 0;
}

static int parse_mempolicy(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	struct ns_mempolicy *m = &spec->mempolicy;
	_cleanup_free_ char *mode_name = NULL, *nodes = NULL;
	int64_t mode, fl = 0;
	yajl_val v;
	int r = hutch_json_object(lx, "memoryPolicy", "linux.memoryPolicy", &v, err);
	if (r < 0 || !v)
		return r;
	if ((r = hutch_json_string(v, "mode", "linux.memoryPolicy.mode", true, &mode_name, err)) <
		    0 ||
	    (r = lookup(ns_mpol_modes, mode_name, "linux.memoryPolicy.mode", "mode", &mode, err)) <
		    0 ||
	    (r = flags(v, "linux.memoryPolicy.flags", ns_mpol_flags, &fl, err)) < 0 ||
	    (r = hutch_json_string(v, "nodes", "linux.memoryPolicy.nodes", false, &nodes, err)) < 0)
		return r;
	if (nodes && ns_parse_nodes(nodes, m->nodes, err) < 0)
		return hutch_err_prefix(err, "linux.memoryPolicy.nodes: ");
	m->mode = (int)(mode | fl);
	m->set = true;
	return check_nodes(m, nodes && nodes[0], mode_name, err);
}

static int parse_clock(yajl_val offs, const char *clock, int64_t *secs, uint32_t *nsecs,
		       struct hutch_err *err)
{
	char f[HUTCH_FIELD_MAX];
	int64_t ns = 0;
	yajl_val v;
	hutch_json_field(f, "linux.timeOffsets.%s", clock);
	int r = hutch_json_object(offs, clock, f, &v, err);
	if (r < 0 || !v)
		return r;
	hutch_json_field(f, "linux.timeOffsets.%s.secs", clock);
	r = hutch_json_int(v, "secs", f, INT64_MIN, INT64_MAX, NULL, secs, err);
	if (r < 0)
		return r;
	hutch_json_field(f, "linux.timeOffsets.%s.nanosecs", clock);
	r = hutch_json_int(v, "nanosecs", f, 0, 999999999, NULL, &ns, err);
	*nsecs = (uint32_t)ns;
	return r;
}

static int parse_time_offsets(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	struct ns_time_offsets *t = &spec->time_offsets;
	const struct rt_namespace *time = rt_spec_ns(spec, CLONE_NEWTIME);
	yajl_val offs;
	int r = hutch_json_object(lx, "timeOffsets", "linux.timeOffsets", &offs, err);
	if (r < 0 || !offs || !offs->u.object.len)
		return r;
	for (size_t i = 0; i < offs->u.object.len; i++) {
		const char *k = offs->u.object.keys[i];
		if (strcmp(k, "monotonic") && strcmp(k, "boottime"))
			return hutch_fail(err, EINVAL,
					  "linux.timeOffsets.%s: unknown clock (monotonic or "
					  "boottime)",
					  k);
	}
	if ((r = parse_clock(offs, "monotonic", &t->monotonic_secs, &t->monotonic_nsecs, err)) <
		    0 ||
	    (r = parse_clock(offs, "boottime", &t->boottime_secs, &t->boottime_nsecs, err)) < 0)
		return r;
	if (!time)
		return hutch_fail(err, EINVAL,
				  "linux.timeOffsets: needs a time namespace in linux.namespaces");
	if (time->path)
		return hutch_fail(err, EOPNOTSUPP,
				  "linux.timeOffsets: not supported when joining a time namespace "
				  "(path %s)",
				  time->path);
	spec->has_time_offsets = true;
	return 0;
}

int rt_spec_parse_sched(yajl_val proc, struct rt_process *p, struct hutch_err *err)
{
	int r = parse_ioprio(proc, p, err);
	return r < 0 ? r : parse_scheduler(proc, p, err);
}

int rt_spec_parse_kernel(yajl_val lx, struct rt_spec *spec, struct hutch_err *err)
{
	int r = parse_personality(lx, spec, err);
	if (r >= 0)
		r = parse_mempolicy(lx, spec, err);
	return r < 0 ? r : parse_time_offsets(lx, spec, err);
}

int rt_spec_check_sched(const struct rt_spec *spec, struct hutch_err *err)
{
	/* A deadline task cannot fork (unless reset on fork), and startContainer hooks are
	 * forked by the init once its scheduler is set. */
	const struct ns_sched *s = &spec->process.sched;
	if (s->set && s->policy == POLICY_DEADLINE && !(s->flags & SCHED_FLAG_RESET_ON_FORK_) &&
	    spec->hooks[RT_HOOK_START_CONTAINER].n)
		return hutch_fail(err, EOPNOTSUPP,
				  "process.scheduler: SCHED_DEADLINE with startContainer hooks: "
				  "not supported (a deadline task cannot fork them)");
	return 0;
}
