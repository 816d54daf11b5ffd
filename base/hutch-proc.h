/* SPDX-License-Identifier: Apache-2.0 */
/* Processes: fds, titles, /proc facts, and the fault points tests kill at. Included through
 * hutch-base.h. */
#ifndef HUTCH_PROC_H
#define HUTCH_PROC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Closes every fd >= from except those listed (close_range where possible). */
int hutch_close_fds_from(int from, const int *keep, size_t n_keep);

/* Remembers where argv and the environment strings live, so that a process which stays
 * hutch code (a sandbox's init) can replace its /proc/PID/cmdline and environ: they would
 * otherwise show hutch's host command line and environment inside the sandbox. */
void hutch_proctitle_init(int argc, char **argv);
void hutch_set_proctitle(const char *title);

/* A named point where a test may have hutch killed (HUTCH_TEST_KILL_AT=NAME) or stopped
 * (HUTCH_TEST_STOP_AT=NAME): see base-fault.c and tests/security/faults.bats, which lists
 * every name. */
void hutch_fault_point(const char *name);

/* Process start time (field 22 of /proc/PID/stat) and whether it is a zombie/dead. */
int hutch_proc_stat(pid_t pid, uint64_t *start_time, char *state);
/* The signals whose disposition is not the default (ignored or caught), from /proc. */
int hutch_signals_not_default(sigset_t *out);

#endif
