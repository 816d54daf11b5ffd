/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The systemd cgroup driver (--systemd-cgroup, runc's): the container's cgroup is a transient
 * scope that systemd makes over D-Bus, with Delegate=yes so that what systemd has no property
 * for is written to the scope's own files (cg_apply), as runc does. cg-sd-path.c is the pure
 * naming; cg-systemd.c talks to systemd through sd-bus, which libsystemd.so.0 provides and
 * hutch loads only when the driver is used (docs/clients.md says why).
 */
#ifndef HUTCH_CG_SYSTEMD_H
#define HUTCH_CG_SYSTEMD_H

#include "cg-resources.h"

#include <stdbool.h>
#include <sys/types.h>

struct cg_sd_unit {
	char *unit;  /* "prefix-name.scope" */
	char *slice; /* "system.slice" */
	char *path;  /* the cgroup path: "/system.slice/prefix-name.scope" */
};

/* Pure: linux.cgroupsPath in runc's systemd form "slice:prefix:name" (an empty path is
 * "system.slice:hutch:ID"; an empty slice is system.slice; an empty prefix leaves
 * "name.scope"). Slice names nest at their dashes, as systemd's do: "a-b.slice" is
 * /a.slice/a-b.slice. Errors name linux.cgroupsPath. */
int cg_sd_parse(const char *cgroups_path, const char *id, struct cg_sd_unit *out,
		struct hutch_err *err);
/* Pure: the cgroup directory of slice ("-.slice" is the root, ""), malloc'd. */
int cg_sd_slice_path(const char *slice, char **out, struct hutch_err *err);
void cg_sd_unit_clear(struct cg_sd_unit *u);

/* True when systemd is the host's init (it has made /run/systemd/system, as sd_booted()
 * checks): the driver needs it, whatever libsystemd would say. */
bool cg_sd_booted(void);
/* Starts the scope with pid in it, Delegate=yes, and the properties systemd knows of res
 * (may be NULL): MemoryMax, MemoryLow, TasksMax, CPUQuotaPerSecUSec and its period,
 * CPUWeight, AllowedCPUs, AllowedMemoryNodes, IOWeight and the IO bandwidth and IOPS limits;
 * on v1 and hybrid hosts MemoryLimit, CPUShares and BlockIOWeight instead, as runc's legacy
 * driver (no MemoryLow there, and the throttles only in the files).
 * Waits for systemd's job. systemd's errors carry their D-Bus name. */
int cg_sd_start(const struct cg_sd_unit *u, pid_t pid, const struct cg_resources *res,
		struct hutch_err *err);
/* SetUnitProperties (runtime) for `update`: the same properties, what res sets of them. */
int cg_sd_set(const char *unit, const struct cg_resources *res, struct hutch_err *err);
/* Stops the unit and waits; a unit systemd no longer has (an emptied scope is collected)
 * is no error. */
int cg_sd_stop(const char *unit, struct hutch_err *err);

#endif
