/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A long-lived sandbox, known by its --name: the name's record and the sandbox's own
 * (rt-sandbox-named.c), --detach's supervisor, and `sandbox exec|ls|stop|rm` on it
 * (rt-sandbox-cmds.c).
 */
#ifndef HUTCH_RT_SANDBOX_NAMED_H
#define HUTCH_RT_SANDBOX_NAMED_H

#include "rt-sandbox.h"
#include "rt-sandbox-lock.h"

/* rt-sandbox-named.c: --name's record (take: EEXIST when its sandbox runs; set writes the
 * id; release removes it), a sweep of killed hutches' records, and a name's id. */
int rt_sb_name_take(const char *name, int *fd, struct hutch_err *err);
void rt_sb_name_set(int fd, const char *id);
void rt_sb_name_release(const char *name, int fd);
void rt_sb_names_sweep(void);
int rt_sb_name_resolve(const char *name, char *id, size_t len, struct hutch_err *err);
/* The sandbox's spec (config.json: its state dir is the bundle exec reads) and sandbox.json. */
struct rt_sb_record {
	char *name, *image;	   /* NULL: none */
	pid_t supervisor;	   /* the hutch that runs it */
	uint64_t supervisor_start; /* its start time: a process that took the pid since is not it */
	int64_t grace_ms;
	struct rt_sb_setid setid; /* what exec walks after each command */
};
int rt_sb_write_record(const struct rt_sb_opts *o, int dir, const struct rt_spec *spec,
		       const char *image, const struct rt_sb_setid *setid, struct hutch_err *err);
int rt_sb_read_record(const char *id, struct rt_sb_record *r);
void rt_sb_record_clear(struct rt_sb_record *r);
/* --detach: forks the supervisor (0 in it, with *fd the pipe to the caller, stdio /dev/null
 * and no other fd but t's), the caller waits (0 once the command started, NAME printed; else
 * the supervisor's error). */
pid_t rt_sb_detach(const struct rt_sb_opts *o, const struct rt_global *g,
		   const struct rt_sb_ticket *t, int *fd, struct hutch_err *err);
int rt_sb_detach_wait(const struct rt_sb_opts *o, pid_t pid, int fd, struct hutch_err *err);
int rt_sb_notify_started(int *fd, struct hutch_err *err); /* closes *fd */
void rt_sb_notify_failed(int fd, const struct hutch_err *err);
/* rt-sandbox-cmds.c: `sandbox exec|ls|stop|rm` (argv[0] the subcommand). */
bool rt_sb_is_subcommand(const char *arg);
int rt_sb_subcommand(int argc, char **argv, struct hutch_err *err);
void rt_sb_print_subcommands(int fd);

#endif
