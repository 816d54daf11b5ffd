/* SPDX-License-Identifier: Apache-2.0 */
#include "hutch-dl.h"

#include <dlfcn.h>
#include <errno.h>

int hutch_dl_load(const char *soname, const struct hutch_dl_sym *syms, size_t n, const char *what,
		  const char *package, void **out, struct hutch_err *err)
{
	void *dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return hutch_fail(err, ENOTSUP, "%s needs %s (apt-get install %s): %s", what,
				  soname, package, dlerror());
	for (size_t i = 0; i < n; i++) {
		*syms[i].slot = dlsym(dl, syms[i].name);
		if (!*syms[i].slot) {
			dlclose(dl);
			return hutch_fail(err, ENOTSUP, "%s lacks %s", soname, syms[i].name);
		}
	}
	*out = dl;
	return 0;
}
