/* SPDX-License-Identifier: Apache-2.0 */
/* yajl helpers every module that speaks JSON shares (images, seccomp, runtime). */
#ifndef HUTCH_JSON_H
#define HUTCH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* A string (NUL-terminated), and key: [strings] with n of them, or up to a NULL when n is
 * SIZE_MAX. */
void hutch_json_gen_str(yajl_gen g, const char *s);
void hutch_json_gen_strv(yajl_gen g, const char *key, const char *const *v, size_t n);

/* Can a JSON document carry s? Well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or
 * code points past U+10FFFF), which a parser may otherwise refuse (yajl) or quietly replace
 * (Go's encoding/json, so runc). */
bool hutch_utf8_valid(const char *s);

/* Emits a parsed tree as is (numbers keep their text). */
void hutch_json_gen_value(yajl_gen g, yajl_val v);

/*
 * Finds the object value of text's top-level member outer, then of its member inner (as
 * "linux" then "seccomp"), without parsing: *start and *len give its bytes. Only an
 * unambiguous answer counts: false when either key is missing or repeated, when any key has
 * an escape, when there is a comment, or when the text is not well-formed as far as scanned.
 * The caller then parses the whole text as usual.
 */
bool hutch_json_find_object(const char *text, const char *outer, const char *inner, size_t *start,
			    size_t *len);

#endif
