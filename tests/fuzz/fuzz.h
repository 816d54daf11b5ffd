/* SPDX-License-Identifier: Apache-2.0 */
/* What the libFuzzer targets share: the input as a C string, and invariant checks that abort
 * (libFuzzer reports an abort as a crash and saves the input that caused it). */
#ifndef HUTCH_FUZZ_H
#define HUTCH_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The parsers take C strings: a NUL-terminated copy. They see the bytes up to the first NUL,
 * as they would of a file read whole (hutch_read_file_at) that holds one. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz: %s:%d: invariant failed: %s: ", __FILE__, __LINE__, \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
