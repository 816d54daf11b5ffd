/* SPDX-License-Identifier: Apache-2.0 */
/* The parts of the spec parser that live in their own files (one per OCI section). */
#ifndef HUTCH_RT_SPEC_INTERNAL_H
#define HUTCH_RT_SPEC_INTERNAL_H

#include "rt-json.h"
#include "rt-spec.h"
#include "rt-spec-build.h"

int rt_spec_parse_process(yajl_val process, struct rt_process *out, struct hutch_err *err);
/* The kernel attributes in linux (rt-spec-sched.c: personality, ...), after its
 * namespaces; */
int rt_spec_parse_kernel(yajl_val linux_obj, struct rt_spec *spec, struct hutch_err *err);
/* process.ioPriority and process.scheduler; */
int rt_spec_parse_sched(yajl_val process, struct rt_process *out, struct hutch_err *err);
/* and what they need of other sections (hooks). */
int rt_spec_check_sched(const struct rt_spec *spec, struct hutch_err *err);
int rt_spec_parse_mounts(yajl_val mounts, struct rt_spec *spec, struct hutch_err *err);
/* obj[key] as a list of {containerID, hostID, size}; errors name prefix.key[i]. */
int rt_spec_parse_idmaps(yajl_val obj, const char *key, const char *prefix, struct ns_idmap **out,
			 size_t *n, struct hutch_err *err);
/* mounts[] with "idmap"/"ridmap" and no mappings of their own take linux's; an idmapped
 * mount must be a bind with both maps. After linux is parsed. */
int rt_spec_check_idmapped_mounts(struct rt_spec *spec, struct hutch_err *err);
int rt_spec_parse_linux(yajl_val linux_obj, struct rt_spec *spec, struct hutch_err *err);
void rt_spec_free_mounts(struct rt_spec *spec);
void rt_spec_free_linux(struct rt_spec *spec);
/* Shared checks: "<field>: must be an absolute path", "<field>[i]: expected KEY=VALUE". */
int rt_spec_check_abs(const char *path, const char *field, struct hutch_err *err);
int rt_spec_check_env(char *const *env, const char *field, struct hutch_err *err);
/* linux.resources -> spec->resources (+ device_rules, unified). */
int rt_spec_parse_resources(yajl_val resources, struct rt_spec *spec, struct hutch_err *err);
void rt_spec_free_resources(struct rt_spec *spec);
/* linux.seccomp -> *out. */
int rt_spec_parse_seccomp(yajl_val seccomp, struct sc_config *out, struct hutch_err *err);
void rt_spec_free_seccomp(struct rt_spec *spec);
/* linux.seccomp's text cut out of json: 1 with *rest (a copy of json with null in its place)
 * and *seccomp (json itself, cut short after the profile), 0 when the text is not plain
 * enough to cut safely. */
int rt_spec_cut_seccomp(char *json, char **rest, const char **seccomp);

#endif
