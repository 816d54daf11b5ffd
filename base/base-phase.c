// SPDX-License-Identifier: Apache-2.0
/*
 * The phase lines of --debug (hutch-phase.h). A cloned child inherits the start and the
 * previous phase's time, since it is not re-executed: its first line counts from the parent's
 * last phase before the clone. Each line is one write, so the lines of the parent and its
 * children interleave whole (O_APPEND file, or a pipe's atomic writes under PIPE_BUF).
 */
#include "hutch-base.h"

#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

bool hutch_phases_on;
static int phase_fd = -1;
static int phase_dup = -1; /* our copy of stderr, when there is no --log */
static bool phase_json;
static const char *phase_who = "hutch";
static int phase_pid; /* getpid, read before any seccomp filter */
static struct timespec phase_start, phase_prev;

static long long us_between(const struct timespec *a, const struct timespec *b)
{
	return (long long)(b->tv_sec - a->tv_sec) * 1000000 + (b->tv_nsec - a->tv_nsec) / 1000;
}

void hutch_phase_setup(int log_fd, bool json, bool debug)
{
	if (phase_dup >= 0)
		close(phase_dup);
	phase_dup = debug && log_fd < 0 ? fcntl(2, F_DUPFD_CLOEXEC, 3) : -1;
	phase_fd = !debug ? -1 : log_fd >= 0 ? log_fd : phase_dup;
	phase_json = json;
	hutch_phases_on = phase_fd >= 0;
	if (hutch_phases_on) {
		clock_gettime(CLOCK_MONOTONIC, &phase_start);
		phase_prev = phase_start;
		phase_pid = (int)getpid();
	}
}

int hutch_phase_fd(void)
{
	return hutch_phases_on ? phase_fd : -1;
}

void hutch_phase_in(const char *who)
{
	phase_who = who;
	phase_pid = (int)getpid();
}

void hutch_phase_quiet(void)
{
	hutch_phases_on = false;
}

void hutch_phase_log(const char *name)
{
	struct timespec now, wall;
	char line[320], ts[HUTCH_UTC_MAX];
	int n;

	clock_gettime(CLOCK_MONOTONIC, &now);
	long long us = us_between(&phase_prev, &now), total = us_between(&phase_start, &now);
	phase_prev = now;
	if (phase_json) {
		clock_gettime(CLOCK_REALTIME, &wall);
		hutch_utc_stamp(&wall, true, ts);
		n = snprintf(line, sizeof(line),
			     "{\"level\":\"debug\",\"msg\":\"phase\",\"phase\":\"%s\",\"us\":%lld,"
			     "\"total_us\":%lld,\"in\":\"%s\",\"pid\":%d,\"time\":\"%s\"}\n",
			     name, us, total, phase_who, phase_pid, ts);
	} else {
		n = snprintf(line, sizeof(line),
			     "hutch: debug: phase=%s us=%lld total=%lld in=%s pid=%d\n", name, us,
			     total, phase_who, phase_pid);
	}
	if (n > 0 && (size_t)n < sizeof(line)) /* one write: whole lines interleave */
		(void)!write(phase_fd, line, (size_t)n);
}
