// SPDX-License-Identifier: Apache-2.0
/*
 * Transient scopes over D-Bus (cg-systemd.h), through sd-bus. Debian ships libsystemd only as
 * a shared object and hutch is static, so it is dlopen()ed here, as net-nft.c does with
 * libnftables: only a --systemd-cgroup create, update or delete pays for the loader. sd-bus
 * reports through return values (-errno) and sd_bus_error, never through errno, which would
 * live in the second libc's TLS. Strings read from a message belong to it.
 */
#include "cg-systemd.h"
#include "cg-internal.h"
#include "hutch-dl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define JOB_TIMEOUT_USEC (30ULL * 1000000) /* as runc */

static struct {
	void *dl;
	__typeof__(&sd_bus_open_system) open_system;
	__typeof__(&sd_bus_flush_close_unref) close;
	__typeof__(&sd_bus_message_new_method_call) new_call;
	__typeof__(&sd_bus_message_append) append;
	__typeof__(&sd_bus_message_append_array) append_array;
	__typeof__(&sd_bus_message_open_container) open_container;
	__typeof__(&sd_bus_message_close_container) close_container;
	__typeof__(&sd_bus_message_read) read;
	__typeof__(&sd_bus_message_unref) unref;
	__typeof__(&sd_bus_call) call;
	__typeof__(&sd_bus_match_signal) match_signal;
	__typeof__(&sd_bus_slot_unref) slot_unref;
	__typeof__(&sd_bus_process) process;
	__typeof__(&sd_bus_wait) wait;
	__typeof__(&sd_bus_error_free) error_free;
} lib;

static int load_lib(struct hutch_err *err)
{
	if (lib.dl)
		return 0;
	const struct hutch_dl_sym syms[] = {
		{ (void **)&lib.open_system, "sd_bus_open_system" },
		{ (void **)&lib.close, "sd_bus_flush_close_unref" },
		{ (void **)&lib.new_call, "sd_bus_message_new_method_call" },
		{ (void **)&lib.append, "sd_bus_message_append" },
		{ (void **)&lib.append_array, "sd_bus_message_append_array" },
		{ (void **)&lib.open_container, "sd_bus_message_open_container" },
		{ (void **)&lib.close_container, "sd_bus_message_close_container" },
		{ (void **)&lib.read, "sd_bus_message_read" },
		{ (void **)&lib.unref, "sd_bus_message_unref" },
		{ (void **)&lib.call, "sd_bus_call" },
		{ (void **)&lib.match_signal, "sd_bus_match_signal" },
		{ (void **)&lib.slot_unref, "sd_bus_slot_unref" },
		{ (void **)&lib.process, "sd_bus_process" },
		{ (void **)&lib.wait, "sd_bus_wait" },
		{ (void **)&lib.error_free, "sd_bus_error_free" },
	};
	return hutch_dl_load("libsystemd.so.0", syms, ARRAY_SIZE(syms), "--systemd-cgroup",
			     "libsystemd0", &lib.dl, err);
}

/* One call to systemd's manager: its bus, the message being built, and the jobs that ended
 * (JobRemoved), recorded until the one the call queued is among them. */
struct sd_call {
	sd_bus *bus;
	sd_bus_slot *slot;
	sd_bus_message *m;
	char job[128];	 /* the job the call queued */
	char result[32]; /* its result, once removed */
	char ended[8][128];
	char ended_result[8][32];
	size_t n_ended;
};

static int on_job_removed(sd_bus_message *m, void *data, sd_bus_error *e)
{
	(void)e;
	struct sd_call *c = data;
	uint32_t id;
	const char *job, *unit, *result;
	if (lib.read(m, "uoss", &id, &job, &unit, &result) < 0)
		return 0;
	size_t i = c->n_ended < 8 ? c->n_ended++ : 7;
	snprintf(c->ended[i], sizeof(c->ended[i]), "%s", job);
	snprintf(c->ended_result[i], sizeof(c->ended_result[i]), "%s", result);
	return 0;
}

static int bus_fail(struct hutch_err *err, int r, const sd_bus_error *e, const char *what,
		    const char *unit)
{
	if (e && e->name)
		return hutch_fail(err, r < 0 ? r : EIO, "systemd: %s %s: %s: %s", what, unit,
				  e->name, e->message ? e->message : "");
	return hutch_fail_errno(err, r, "systemd: %s %s", what, unit);
}

static void call_end(struct sd_call *c)
{
	if (c->m)
		lib.unref(c->m);
	if (c->slot)
		lib.slot_unref(c->slot);
	if (c->bus)
		lib.close(c->bus);
	memset(c, 0, sizeof(*c));
}

/* The bus, subscribed to job removals (systemd sends signals only to subscribers), and a
 * method call of the manager ready for its arguments. */
static int call_begin(struct sd_call *c, const char *method, const char *unit,
		      struct hutch_err *err)
{
	memset(c, 0, sizeof(*c));
	TRY(load_lib(err));
	int r = lib.open_system(&c->bus);
	if (r < 0)
		return hutch_fail_errno(err, r, "systemd: connect to the system bus");
	r = lib.match_signal(c->bus, &c->slot, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved",
			     on_job_removed, c);
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *sub = NULL, *reply = NULL;
	if (r >= 0)
		r = lib.new_call(c->bus, &sub, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe");
	if (r >= 0)
		r = lib.call(c->bus, sub, JOB_TIMEOUT_USEC, &e, &reply);
	if (sub)
		lib.unref(sub);
	if (reply)
		lib.unref(reply);
	if (r >= 0)
		r = lib.new_call(c->bus, &c->m, SD_DEST, SD_PATH, SD_MANAGER, method);
	if (r < 0)
		r = bus_fail(err, r, &e, method, unit);
	lib.error_free(&e);
	return r;
}

/* Sends the call; with a job to wait for (want_job), waits until systemd removes it. */
static int call_run(struct sd_call *c, const char *method, const char *unit, bool want_job,
		    struct hutch_err *err)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r = lib.call(c->bus, c->m, JOB_TIMEOUT_USEC, &e, &reply);
	const char *job = NULL;
	if (r >= 0 && want_job && (r = lib.read(reply, "o", &job)) >= 0)
		snprintf(c->job, sizeof(c->job), "%s", job);
	if (reply)
		lib.unref(reply);
	if (r < 0) {
		r = bus_fail(err, r, &e, method, unit);
		lib.error_free(&e);
		return r;
	}
	for (uint64_t waited = 0; want_job && !c->result[0];) {
		for (size_t i = 0; i < c->n_ended; i++)
			if (!strcmp(c->ended[i], c->job))
				snprintf(c->result, sizeof(c->result), "%s", c->ended_result[i]);
		if (c->result[0])
			break;
		r = lib.process(c->bus, NULL);
		if (r > 0)
			continue; /* more may be queued */
		if (r == 0 && waited < JOB_TIMEOUT_USEC) {
			r = lib.wait(c->bus, 100000);
			waited += 100000;
		}
		if (r < 0 || waited >= JOB_TIMEOUT_USEC)
			return hutch_fail(err, r < 0 ? -r : ETIMEDOUT,
					  "systemd: %s %s: no end of job %s", method, unit, c->job);
	}
	if (want_job && strcmp(c->result, "done"))
		return hutch_fail(err, EIO, "systemd: %s %s: job %s", method, unit, c->result);
	return 0;
}

/* ---- properties ---- */

static int prop_open(sd_bus_message *m, const char *name, const char *sig)
{
	int r = lib.open_container(m, 'r', "sv");
	if (r >= 0)
		r = lib.append(m, "s", name);
	if (r >= 0)
		r = lib.open_container(m, 'v', sig);
	return r;
}

static int prop_close(sd_bus_message *m)
{
	int r = lib.close_container(m);
	return r < 0 ? r : lib.close_container(m);
}

static int prop_u64(sd_bus_message *m, const char *name, uint64_t v)
{
	int r = prop_open(m, name, "t");
	if (r >= 0)
		r = lib.append(m, "t", v);
	return r < 0 ? r : prop_close(m);
}

static int prop_bool(sd_bus_message *m, const char *name, bool v)
{
	int r = prop_open(m, name, "b");
	if (r >= 0)
		r = lib.append(m, "b", (int)v);
	return r < 0 ? r : prop_close(m);
}

static int prop_str(sd_bus_message *m, const char *name, const char *v)
{
	int r = prop_open(m, name, "s");
	if (r >= 0)
		r = lib.append(m, "s", v);
	return r < 0 ? r : prop_close(m);
}

/* A cpuset list ("0-3,8") as systemd's AllowedCPUs bit mask (ay, CPU n is bit n%8 of byte
 * n/8). */
static int prop_cpuset(sd_bus_message *m, const char *name, const char *list, struct hutch_err *err)
{
	uint8_t mask[1024] = { 0 };
	size_t len = 0;
	for (const char *p = list; *p;) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;
		if (end == p)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p)
				goto bad;
		}
		if (b < a || b >= sizeof(mask) * 8)
			goto bad;
		for (unsigned long i = a; i <= b; i++)
			mask[i / 8] |= (uint8_t)(1u << (i % 8));
		if (b / 8 + 1 > len)
			len = b / 8 + 1;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			goto bad;
	}
	int r = prop_open(m, name, "ay");
	if (r >= 0)
		r = lib.append_array(m, 'y', mask, len);
	return r < 0 ? r : prop_close(m);
bad:
	return hutch_fail(err, EINVAL, "linux.resources.cpu: invalid cpu or node list %s", list);
}

/* blockIO's throttles as IO{Read,Write}{Bandwidth,IOPS}Max: a(st) of "/dev/block/MAJ:MIN". */
static int prop_io(sd_bus_message *m, const char *name, const struct cg_dev_value *v, size_t n)
{
	int r = prop_open(m, name, "a(st)");
	if (r >= 0)
		r = lib.open_container(m, 'a', "(st)");
	for (size_t i = 0; r >= 0 && i < n; i++) {
		char dev[64];
		snprintf(dev, sizeof(dev), "/dev/block/%lld:%lld", (long long)v[i].major,
			 (long long)v[i].minor);
		r = lib.append(m, "(st)", dev, v[i].value);
	}
	if (r >= 0)
		r = lib.close_container(m);
	return r < 0 ? r : prop_close(m);
}

/* runc's conversions: cpu.shares [2, 262144] onto CPUWeight [1, 10000]; a quota rounded up to
 * systemd's 10 ms granularity per second (the file gets the exact one). */
static uint64_t shares_to_weight(int64_t shares)
{
	return shares <= 0 ? 100 : 1 + (uint64_t)((shares - 2) * 9999) / 262142;
}

/* The properties systemd has for res. On a v1 or hybrid host, the legacy ones where they
 * differ, as runc's legacy driver sets them: MemoryLimit, CPUShares and BlockIOWeight are
 * exact there, and systemd writes its whole view again whenever a property changes, so a
 * CPUWeight converted back to shares (or an unset weight, as the default) would undo the
 * file. v1 has no MemoryLow, and its throttle files are left to cg_apply. */
static int append_resources(sd_bus_message *m, const struct cg_resources *res, bool v1,
			    struct hutch_err *err)
{
	int r = 0;
	if (res->mem_limit.set)
		r = prop_u64(m, v1 ? "MemoryLimit" : "MemoryMax",
			     res->mem_limit.v > 0 ? (uint64_t)res->mem_limit.v : UINT64_MAX);
	if (r >= 0 && !v1 && res->mem_reservation.set && res->mem_reservation.v > 0)
		r = prop_u64(m, "MemoryLow", (uint64_t)res->mem_reservation.v);
	if (r >= 0 && res->pids_limit.set)
		r = prop_u64(m, "TasksMax",
			     res->pids_limit.v > 0 ? (uint64_t)res->pids_limit.v : UINT64_MAX);
	if (r >= 0 && res->cpu_shares.set && v1 && res->cpu_shares.v > 0)
		r = prop_u64(m, "CPUShares", (uint64_t)res->cpu_shares.v);
	else if (r >= 0 && res->cpu_shares.set && !v1)
		r = prop_u64(m, "CPUWeight", shares_to_weight(res->cpu_shares.v));
	if (r >= 0 && res->cpu_quota.set) {
		uint64_t period = res->cpu_period.set && res->cpu_period.v > 0
					  ? (uint64_t)res->cpu_period.v
					  : 100000;
		uint64_t per_sec =
			res->cpu_quota.v > 0
				? ((uint64_t)res->cpu_quota.v * 1000000 / period + 9999) / 10000 *
					  10000
				: UINT64_MAX;
		r = prop_u64(m, "CPUQuotaPerSecUSec", per_sec);
		if (r >= 0 && res->cpu_period.set)
			r = prop_u64(m, "CPUQuotaPeriodUSec", period);
	}
	if (r >= 0 && res->cpus && *res->cpus)
		r = prop_cpuset(m, "AllowedCPUs", res->cpus, err);
	if (r >= 0 && res->mems && *res->mems)
		r = prop_cpuset(m, "AllowedMemoryNodes", res->mems, err);
	if (r >= 0 && res->blkio_weight.set && res->blkio_weight.v > 0)
		r = v1 ? prop_u64(m, "BlockIOWeight", (uint64_t)res->blkio_weight.v)
		       : prop_u64(m, "IOWeight",
				  (uint64_t)cg_blkio_to_io_weight(res->blkio_weight.v));
	static const char *const io[CG_THROTTLE_N] = { "IOReadBandwidthMax", "IOWriteBandwidthMax",
						       "IOReadIOPSMax", "IOWriteIOPSMax" };
	for (size_t i = 0; r >= 0 && !v1 && i < CG_THROTTLE_N; i++)
		if (res->n_blkio_throttle[i])
			r = prop_io(m, io[i], res->blkio_throttle[i], res->n_blkio_throttle[i]);
	return r;
}

/* ---- the calls ---- */

bool cg_sd_booted(void)
{
	struct stat st;
	return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

int cg_sd_start(const struct cg_sd_unit *u, pid_t pid, const struct cg_resources *res,
		struct hutch_err *err)
{
	struct sd_call c;
	TRY(call_begin(&c, "StartTransientUnit", u->unit, err));
	sd_bus_message *m = c.m;
	int r = lib.append(m, "ss", u->unit, "replace");
	if (r >= 0)
		r = lib.open_container(m, 'a', "(sv)");
	if (r >= 0)
		r = prop_str(m, "Description", "hutch container");
	if (r >= 0)
		r = prop_str(m, "Slice", u->slice);
	if (r >= 0)
		r = prop_bool(m, "Delegate", true);
	/* Not ordered after basic.target (a container may start early in boot), and collected
	 * even when it ended failed, so that delete leaves no unit behind. */
	if (r >= 0)
		r = prop_bool(m, "DefaultDependencies", false);
	if (r >= 0)
		r = prop_str(m, "CollectMode", "inactive-or-failed");
	const char *const accounting[] = { "MemoryAccounting", "CPUAccounting", "TasksAccounting",
					   cg_is_v2() ? "IOAccounting" : "BlockIOAccounting" };
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(accounting); i++)
		r = prop_bool(m, accounting[i], true);
	if (r >= 0 && (r = prop_open(m, "PIDs", "au")) >= 0) {
		uint32_t p = (uint32_t)pid;
		r = lib.append_array(m, 'u', &p, sizeof(p));
		if (r >= 0)
			r = prop_close(m);
	}
	if (r >= 0 && res)
		r = append_resources(m, res, !cg_is_v2(), err);
	if (r >= 0)
		r = lib.close_container(m);
	if (r >= 0)
		r = lib.append(m, "a(sa(sv))", 0); /* no auxiliary units */
	if (r < 0 && !err->code)
		r = hutch_fail_errno(err, r, "systemd: StartTransientUnit %s: message", u->unit);
	if (r >= 0)
		r = call_run(&c, "StartTransientUnit", u->unit, true, err);
	call_end(&c);
	return r < 0 ? r : 0;
}

int cg_sd_set(const char *unit, const struct cg_resources *res, struct hutch_err *err)
{
	struct sd_call c;
	TRY(call_begin(&c, "SetUnitProperties", unit, err));
	int r = lib.append(c.m, "sb", unit, 1); /* runtime: gone with the unit */
	if (r >= 0)
		r = lib.open_container(c.m, 'a', "(sv)");
	if (r >= 0)
		r = append_resources(c.m, res, !cg_is_v2(), err);
	if (r >= 0)
		r = lib.close_container(c.m);
	if (r < 0 && !err->code)
		r = hutch_fail_errno(err, r, "systemd: SetUnitProperties %s: message", unit);
	if (r >= 0)
		r = call_run(&c, "SetUnitProperties", unit, false, err);
	call_end(&c);
	return r < 0 ? r : 0;
}

static bool no_such_unit(const struct hutch_err *err)
{
	return strstr(err->msg, "org.freedesktop.systemd1.NoSuchUnit") != NULL;
}

int cg_sd_stop(const char *unit, struct hutch_err *err)
{
	struct sd_call c;
	TRY(call_begin(&c, "StopUnit", unit, err));
	int r = lib.append(c.m, "ss", unit, "replace");
	if (r < 0)
		r = hutch_fail_errno(err, r, "systemd: StopUnit %s: message", unit);
	else
		r = call_run(&c, "StopUnit", unit, true, err);
	call_end(&c);
	if (r < 0 && no_such_unit(err)) {
		*err = (struct hutch_err){ 0 };
		return 0;
	}
	return r < 0 ? r : 0;
}
