// SPDX-License-Identifier: Apache-2.0
/*
 * linux.seccomp of config.json. Docker's and podman's profile is ~90% of config.json's bytes,
 * and parsing it costs more than loading the filter, so rt_spec_parse cuts its text out
 * unparsed; seccomp/ compiles it through a cache keyed on those bytes and parses it only on
 * a miss (sc_compile_json, whose errors name every field). A text the cutter cannot vouch
 * for goes through the ordinary parse instead.
 */
#include "rt-spec-internal.h"

#include <string.h>

/* Copies the small rest rather than the large profile: every page a start touches costs. */
int rt_spec_cut_seccomp(char *json, char **rest, const char **seccomp)
{
	size_t at, len;

	*rest = NULL;
	*seccomp = NULL;
	/* Most configs have no profile: one fast search spares them the scan. */
	if (!strstr(json, "\"seccomp\"") ||
	    !hutch_json_find_object(json, "linux", "seccomp", &at, &len))
		return 0;
	size_t tail = strlen(json + at + len);
	*rest = hutch_xmalloc(at + 4 + tail + 1);
	memcpy(*rest, json, at);
	memcpy(*rest + at, "null", 4);
	memcpy(*rest + at + 4, json + at + len, tail + 1);
	json[at + len] = '\0';
	*seccomp = json + at;
	return 1;
}

/* On failure *out may be partly filled; rt_spec_free_seccomp releases it either way. */
int rt_spec_parse_seccomp(yajl_val seccomp, struct sc_config *out, struct hutch_err *err)
{
	return sc_config_from_json(seccomp, "linux.seccomp", out, err);
}

int rt_spec_compile_seccomp(struct rt_spec *spec, struct sc_filter **out, struct hutch_err *err)
{
	if (spec->seccomp_default)
		return sc_compile_default(spec->process.caps.bounding, spec->seccomp_extras, out,
					  err);
	if (!spec->seccomp_json)
		return sc_compile(&spec->seccomp, out, err);
	sc_config_free(&spec->seccomp);
	return sc_compile_json(spec->seccomp_json, "linux.seccomp", &spec->seccomp, out, err);
}

void rt_spec_free_seccomp(struct rt_spec *spec)
{
	sc_config_free(&spec->seccomp);
	free(spec->seccomp_text);
}
