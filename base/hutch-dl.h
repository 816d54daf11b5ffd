/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading an optional shared library into the static binary at its first use (libnftables for
 * bridge networking, libsystemd's sd-bus for the systemd cgroup driver): every other start
 * stays free of the dynamic loader. The callers keep the prototypes from the libraries' own
 * headers (__typeof__), so the ABI is checked at compile time.
 */
#ifndef HUTCH_DL_H
#define HUTCH_DL_H

#include "hutch-base.h"

#include <stddef.h>

struct hutch_dl_sym {
	void **slot; /* where the symbol's address goes */
	const char *name;
};

/* dlopen()s soname (RTLD_NOW | RTLD_LOCAL) and resolves every symbol into its slot; *out is
 * the handle. Fails with ENOTSUP: a missing library as "WHAT needs SONAME (apt-get install
 * PACKAGE): the loader's reason", a missing symbol as "SONAME lacks NAME" (nothing is then
 * kept open). */
int hutch_dl_load(const char *soname, const struct hutch_dl_sym *syms, size_t n, const char *what,
		  const char *package, void **out, struct hutch_err *err);

#endif
