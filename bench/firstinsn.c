// SPDX-License-Identifier: Apache-2.0
/*
 * Launch to the command's first instruction: runs several commands round-robin N times, in a
 * new random order each round, each one's command being bench/stamp (it prints
 * CLOCK_REALTIME when it starts). The launch time is taken in C just before the fork, so no
 * shell is timed. Prints min, median, p90 and the ratio of each median to the first row's.
 *
 * Usage: firstinsn [-p MS] [-w W] N NAME=CMD...
 *   -p MS  a pause before each start (default 50): the last run's teardown, and a pool's
 *          replacement sandbox, are not charged to the next start
 *   -w W   W untimed rounds first (default 2)
 * CMD is a plain word list (no shell); its stdout is read for the stamp.
 */
#include "spawn.h"

struct row {
	const char *name;
	char *argv[64];
	double *us;
	int n, fails;
};

static double realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One start: the microseconds from just before fork to the stamp, or -1. */
static double once(struct row *r)
{
	int p[2];
	char buf[256];
	if (pipe(p) < 0)
		return -1;
	double t0 = realtime_ns();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execvp(r->argv[0], r->argv);
		_exit(127);
	}
	close(p[1]);
	size_t len = 0;
	ssize_t k;
	while (len < sizeof(buf) - 1 && (k = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = '\0';
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	double stamp = strtod(buf, NULL);
	if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || stamp <= 0)
		return -1;
	return (stamp - t0) / 1e3;
}

int main(int argc, char **argv)
{
	int pause_ms = 50, warm = 2, opt;
	while ((opt = getopt(argc, argv, "p:w:")) != -1)
		if (opt == 'p')
			pause_ms = atoi(optarg);
		else if (opt == 'w')
			warm = atoi(optarg);
	if (argc - optind < 2) {
		fprintf(stderr, "usage: firstinsn [-p MS] [-w W] N NAME=CMD...\n");
		return 2;
	}
	int n = atoi(argv[optind]), rows = argc - optind - 1;
	struct row *r = calloc((size_t)rows, sizeof(*r));
	for (int i = 0; i < rows; i++) {
		char *a = strdup(argv[optind + 1 + i]), *eq = strchr(a, '='), *save = NULL;
		int k = 0;
		*eq = '\0';
		r[i].name = a;
		for (char *w = strtok_r(eq + 1, " \t", &save); w && k < 63;
		     w = strtok_r(NULL, " \t", &save))
			r[i].argv[k++] = w;
		r[i].us = calloc((size_t)n, sizeof(double));
	}
	srand((unsigned)getpid());
	int *order = calloc((size_t)rows, sizeof(int));
	for (int round = -warm; round < n; round++) {
		for (int i = 0; i < rows; i++)
			order[i] = i;
		for (int i = rows - 1; i > 0; i--) {
			int j = rand() % (i + 1), t = order[i];
			order[i] = order[j], order[j] = t;
		}
		for (int k = 0; k < rows; k++) {
			struct row *x = &r[order[k]];
			usleep((useconds_t)pause_ms * 1000);
			double us = once(x);
			if (round < 0)
				continue;
			if (us < 0)
				x->fails++;
			else
				x->us[x->n++] = us;
		}
	}
	printf("%-10s %10s %10s %10s %8s %6s\n", "", "min", "median", "p90", "ratio", "fails");
	double base = 0;
	for (int i = 0; i < rows; i++) {
		qsort(r[i].us, (size_t)r[i].n, sizeof(double), cmp_double);
		double med = r[i].n ? quantile(r[i].us, r[i].n, 0.5) : 0;
		if (i == 0)
			base = med;
		printf("%-10s %8.3f ms %7.3f ms %7.3f ms %7.2fx %6d\n", r[i].name,
		       r[i].n ? r[i].us[0] / 1e3 : 0, med / 1e3,
		       r[i].n ? quantile(r[i].us, r[i].n, 0.9) / 1e3 : 0, base > 0 ? med / base : 0,
		       r[i].fails);
	}
	return 0;
}
