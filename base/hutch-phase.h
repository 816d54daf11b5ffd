// SPDX-License-Identifier: Apache-2.0
/*
 * --debug's account of time: each phase of a verb, logged where it ends with the
 * microseconds since the previous phase and since hutch read its options. Off (no --debug),
 * a call is one predictable branch: no clock is read.
 */
#ifndef HUTCH_PHASE_H
#define HUTCH_PHASE_H

#include <stdbool.h>

extern bool hutch_phases_on;
void hutch_phase_log(const char *name);

/* "phase=NAME us=SINCE_PREVIOUS total=SINCE_START in=WHO pid=PID", or its JSON object. */
static inline void hutch_phase(const char *name)
{
	if (__builtin_expect(hutch_phases_on, 0))
		hutch_phase_log(name);
}

/* Where the lines go (main sets it up): the --log file, or else a close-on-exec dup
 * of stderr, which a child's dup2 of its stdio (a terminal) does not redirect. -1: off. */
void hutch_phase_setup(int log_fd, bool json, bool debug);
int hutch_phase_fd(void);
/* A cloned process's lines say in=WHO (the clock and the start are inherited). */
void hutch_phase_in(const char *who);
/* No more lines from this process: a seccomp filter about to be loaded may refuse write. */
void hutch_phase_quiet(void);

#endif
