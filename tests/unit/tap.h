/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal TAP producer for the unit tests: ok/not ok lines and a plan at the end. */
#ifndef HUTCH_TAP_H
#define HUTCH_TAP_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                                              \
	do {                                                                                       \
		bool tap_ok_ = (cond); /* evaluated once: it may have side effects */              \
		tap_n++;                                                                           \
		if (!tap_ok_)                                                                      \
			tap_failed++;                                                              \
		printf("%sok %d - ", tap_ok_ ? "" : "not ", tap_n);                                \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		if (!tap_ok_)                                                                      \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);            \
	} while (0)

#define is_str(a, b, ...) ok((a) && (b) && strcmp((a), (b)) == 0, __VA_ARGS__)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
