// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel attributes every container process gets before execve, the init and exec'd
 * ones alike: the container's (linux.*) and the process's own (process.*). The steps are
 * in ns-proc.c.
 */
#include "rt.h"
#include "rt-process.h"

int rt_set_kernel_attrs(const struct rt_spec *s, const struct rt_process *p, struct hutch_err *err)
{
	if (s->has_personality)
		TRY(ns_set_personality(s->personality, err));
	TRY(ns_set_mempolicy(&s->mempolicy, err));
	TRY(ns_set_ioprio(&p->ioprio, err)); /* IOPRIO_CLASS_RT needs CAP_SYS_ADMIN or _NICE */
	TRY(ns_set_sched(&p->sched, err));   /* last: it may leave us little CPU time */
	return 0;
}
