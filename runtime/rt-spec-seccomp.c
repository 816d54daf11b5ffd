// SPDX-License-Identifier: Apache-2.0
/*
 * linux.seccomp of config.json -> struct sc_config. The parsing itself lives in seccomp/
 * (sc-json.c), which names every field in its errors; this keeps the spec parser's
 * one-function-per-section shape.
 */
#include "rt-spec-internal.h"

/* On failure *out may be partly filled; rt_spec_free_seccomp releases it either way. */
int rt_spec_parse_seccomp(yajl_val seccomp, struct sc_config *out, struct hutch_err *err)
{
	return sc_config_from_json(seccomp, "linux.seccomp", out, err);
}

void rt_spec_free_seccomp(struct sc_config *cfg)
{
	sc_config_free(cfg);
}
