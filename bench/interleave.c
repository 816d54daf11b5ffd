// SPDX-License-Identifier: Apache-2.0
/*
 * Runs several shell commands round-robin N times (so drift and noise hit all of them
 * alike), timing each with CLOCK_MONOTONIC, and prints median / p10 / p90 in ms and the
 * ratio of each median to the first command's. Usage: interleave N NAME=CMD...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double run_once(const char *cmd, int i)
{
	char idx[32];
	snprintf(idx, sizeof(idx), "%d", i);
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		setenv("I", idx, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	double t = now_ms() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "command failed (status %d): %s\n", st, cmd);
		exit(1);
	}
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: interleave N NAME=CMD...\n");
		return 2;
	}
	int n = atoi(argv[1]), k = argc - 2;
	double *t = calloc((size_t)(n * k), sizeof(double));
	for (int i = 0; i < n; i++)
		for (int j = 0; j < k; j++)
			t[j * n + i] = run_once(strchr(argv[2 + j], '=') + 1, i);
	double base = 0;
	printf("%-14s %9s %9s %9s %8s\n", "runtime", "median", "p10", "p90", "ratio");
	for (int j = 0; j < k; j++) {
		double *v = &t[j * n];
		qsort(v, (size_t)n, sizeof(double), cmp);
		double med = v[n / 2];
		if (j == 0)
			base = med;
		printf("%-14.*s %7.2fms %7.2fms %7.2fms %7.2fx\n",
		       (int)(strchr(argv[2 + j], '=') - argv[2 + j]), argv[2 + j], med, v[n / 10],
		       v[n * 9 / 10], med / base);
	}
	return 0;
}
