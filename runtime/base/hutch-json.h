/* SPDX-License-Identifier: Apache-2.0 */
/* yajl helpers every module that speaks JSON shares (images, seccomp, runtime). */
#ifndef HUTCH_JSON_H
#define HUTCH_JSON_H

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* Emits a parsed tree as is (numbers keep their text). */
void hutch_json_gen_value(yajl_gen g, yajl_val v);

#endif
