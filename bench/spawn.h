// SPDX-License-Identifier: Apache-2.0
/*
 * What the bench drivers share: start one command from a template (with $I replaced by the
 * run's index and $S by its parallel slot), exec'd directly when it is a plain word list so
 * that no shell's start-up is timed, and a clock, and sorting. Header-only: each driver is
 * one `cc` line in bench/run.sh.
 */
#ifndef HUTCH_BENCH_SPAWN_H
#define HUTCH_BENCH_SPAWN_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sorted copy semantics are the caller's: this sorts v in place. */
static inline double quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	int i = (int)(q * (n - 1) + 0.5);
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* The template with "$I" and "$S" (also "${I}", "${S}") replaced. */
static inline char *expand(const char *tmpl, long i, int slot)
{
	size_t cap = strlen(tmpl) * 2 + 64, o = 0;
	char *out = malloc(cap);
	for (const char *p = tmpl; *p; p++) {
		const char *v = NULL;
		char num[32];
		if (p[0] == '$' && (p[1] == 'I' || p[1] == 'S')) {
			v = p + 1;
			p += 1;
		} else if (!strncmp(p, "${I}", 4) || !strncmp(p, "${S}", 4)) {
			v = p + 2;
			p += 3;
		}
		if (v) {
			snprintf(num, sizeof(num), "%ld", *v == 'I' ? i : (long)slot);
			for (char *n = num; *n; n++)
				out[o++] = *n;
		} else {
			out[o++] = *p;
		}
		if (o + 32 >= cap)
			out = realloc(out, cap *= 2);
	}
	out[o] = '\0';
	return out;
}

/* A command with none of these is a plain word list: exec it without a shell. */
static inline int needs_shell(const char *cmd)
{
	return strpbrk(cmd, "|&;<>()$`\\\"'*?[#~\n") != NULL;
}

/* The child's side: stdout to /dev/null (the runtimes' chatter is not timed text). */
static inline void exec_command(const char *cmd)
{
	int fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	/* stdout goes to /dev/null anyway: a trailing redirection needs no shell. */
	size_t len = strlen(cmd);
	const char *tail = ">/dev/null";
	char *c = strdup(cmd);
	if (len >= strlen(tail) && !strcmp(c + len - strlen(tail), tail))
		c[len - strlen(tail)] = '\0';
	cmd = c;
	if (needs_shell(cmd)) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	char *copy = strdup(cmd), *argv[256], *save = NULL;
	int n = 0;
	for (char *w = strtok_r(copy, " \t", &save); w && n < 255; w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	argv[n] = NULL;
	/* Leading NAME=VALUE words set the environment, as in a shell. */
	char **a = argv;
	while (*a && strchr(*a, '=') && *a[0] != '=')
		putenv(*a++);
	if (!*a)
		_exit(0);
	execvp(a[0], a);
	_exit(127);
}

static inline pid_t spawn(const char *tmpl, long i, int slot)
{
	char *cmd = expand(tmpl, i, slot);
	pid_t pid = fork();
	if (pid == 0)
		exec_command(cmd);
	free(cmd);
	return pid;
}

static inline double cpu_ms(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

/* "NAME=CMD": the name's length, or -1. */
static inline int name_len(const char *arg)
{
	const char *eq = strchr(arg, '=');
	return eq ? (int)(eq - arg) : -1;
}

#endif
