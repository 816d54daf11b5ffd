/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A spec made rather than read: built in memory (the sandbox's) and held to the checks a
 * parsed one gets, written back to config.json for another runtime (rt-spec-write.c), and
 * `hutch spec`'s default (rt-spec-default.c). The spec itself is in rt-spec.h.
 */
#ifndef HUTCH_RT_SPEC_BUILD_H
#define HUTCH_RT_SPEC_BUILD_H

#include "rt-spec.h"

/* A spec built in memory (the sandbox's) goes through what a parsed one does: */
/* a mount as config.json's mounts[] has it (options comma-separated), relative to bundle; */
int rt_spec_add_mount(struct rt_spec *spec, const char *destination, const char *type,
		      const char *source, const char *options, struct hutch_err *err);
/* linux.resources.devices, with the devices every container may use after them; */
struct cg_device_rule;
void rt_spec_set_devices(struct rt_spec *spec, const struct cg_device_rule *rules, size_t n);
/* the checks across sections (hostname needs a UTS namespace, idmapped mounts, ...). */
int rt_spec_check(struct rt_spec *spec, struct hutch_err *err);
/* And back to config.json (rt-spec-write.c), for another runtime: what it cannot write
 * fails with "spec writer: <field>: not supported". */
int rt_spec_write(const struct rt_spec *spec, char **out, struct hutch_err *err);

/* `hutch spec`: runc's default config.json (rootless variant with rootless=true). */
/* runc's default maskedPaths and readonlyPaths, NULL-terminated. */
extern const char *const rt_default_masked[];
extern const char *const rt_default_readonly[];

/* seccomp (a parsed linux.seccomp, or NULL) is written as given. */
typedef struct yajl_val_s *yajl_val;
char *rt_spec_default_json(bool rootless, yajl_val seccomp);

#endif
