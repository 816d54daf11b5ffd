// SPDX-License-Identifier: Apache-2.0
/*
 * Runs several commands round-robin N times, in a new random order each round (so drift,
 * noise, cache warmth and what one command leaves for the next hit all of them alike),
 * timing each with CLOCK_MONOTONIC and taking its CPU time (user+sys of the whole waited
 * tree) from wait4's rusage. Prints min, median, p90, median CPU and the ratio of each
 * median to a base command's.
 *
 * Usage: interleave [-b BASE] [-s SUB] [-w WARMUP] [-t TSV] N NAME=CMD...
 *   -b BASE  the row the ratios are against (default: the first)
 *   -s SUB[,ZERO]  a row timing a wrapper (around a command as cheap as ZERO's): adds "net"
 *            columns, each median and its ratio with the wrapper's cost (SUB's median less
 *            ZERO's) taken off
 *   -w W     W untimed rounds first (default 2)
 *   -t FILE  also write one TSV line per row (name min median p90 cpu ratio fails net-median)
 *   -d A,B   also the per-round difference B - A (time and CPU; rounds where both ran;
 *            up to 8 pairs, each its own -d):
 *            its median and quartiles, what B adds to A with the drift between rounds out
 * In CMD, $I is the run's index (for unique container names). A command that is a plain word
 * list (leading NAME=VALUE words allowed, a trailing >/dev/null ignored) is exec'd without a
 * shell; stdout always goes to /dev/null.
 */
#include "spawn.h"

#include <math.h>

struct row {
	const char *name, *cmd;
	int name_len, fails;
	double *t, *cpu;
	double *round_t, *round_cpu; /* by round, NAN when it failed */
	double min, med, p90, cpu_med;
};

static int run_once(struct row *r, long i, double *t, double *cpu)
{
	struct rusage ru;
	int st;
	double t0 = now_ms();
	pid_t pid = spawn(r->cmd, i, 0);
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
		return -1;
	*t = now_ms() - t0;
	*cpu = cpu_ms(&ru);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (r->fails++ < 3)
			fprintf(stderr, "interleave: %.*s failed (status 0x%x)\n", r->name_len,
				r->name, st);
		return -1;
	}
	return 0;
}

static int find_row(struct row *rows, int k, const char *name)
{
	for (int j = 0; name && j < k; j++)
		if ((int)strlen(name) == rows[j].name_len &&
		    !strncmp(rows[j].name, name, strlen(name)))
			return j;
	return -1;
}

static void summarize(struct row *r, int ok)
{
	if (ok == 0) {
		r->min = r->med = r->p90 = r->cpu_med = 0;
		return;
	}
	r->med = quantile(r->t, ok, 0.5);
	r->min = r->t[0];
	r->p90 = quantile(r->t, ok, 0.9);
	r->cpu_med = quantile(r->cpu, ok, 0.5);
}

/* B - A per round, for the rounds where both ran. */
static void print_diff(const struct row *a, const struct row *b, int n)
{
	double *dt = calloc((size_t)n, sizeof(double)), *dc = calloc((size_t)n, sizeof(double));
	int m = 0;
	for (int i = 0; i < n; i++)
		if (!isnan(a->round_t[i]) && !isnan(b->round_t[i])) {
			dt[m] = b->round_t[i] - a->round_t[i];
			dc[m++] = b->round_cpu[i] - a->round_cpu[i];
		}
	if (m > 0)
		printf("%.*s - %.*s per round (%d rounds): median %+.3fms (quartiles %+.3f, "
		       "%+.3f), "
		       "CPU median %+.3fms\n",
		       b->name_len, b->name, a->name_len, a->name, m, quantile(dt, m, 0.5),
		       quantile(dt, m, 0.25), quantile(dt, m, 0.75), quantile(dc, m, 0.5));
	free(dt);
	free(dc);
}

static void print_table(struct row *rows, int k, int n, int base, int sub, double s, FILE *tsv)
{
	double b = rows[base].med;
	printf("%-16s %9s %9s %9s %9s %7s", "command", "min", "median", "p90", "cpu", "ratio");
	if (sub >= 0)
		printf(" %9s %7s", "net-med", "net-rat");
	printf("\n");
	for (int j = 0; j < k; j++) {
		struct row *r = &rows[j];
		printf("%-16.*s %7.2fms %7.2fms %7.2fms %7.2fms %6.2fx", r->name_len, r->name,
		       r->min, r->med, r->p90, r->cpu_med, b > 0 ? r->med / b : 0);
		if (sub >= 0 && j != sub)
			printf(" %7.2fms %6.2fx", r->med - s,
			       b - s > 0 ? (r->med - s) / (b - s) : 0);
		if (r->fails)
			printf("  (%d of %d failed)", r->fails, n);
		printf("\n");
		if (tsv)
			fprintf(tsv, "%.*s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%.3f\n", r->name_len,
				r->name, r->min, r->med, r->p90, r->cpu_med, b > 0 ? r->med / b : 0,
				r->fails, r->med - s);
	}
}

int main(int argc, char **argv)
{
	const char *base_name = NULL, *sub_name = NULL, *tsv_path = NULL, *diff_names[8];
	int n_diffs = 0;
	int warmup = 2, opt;
	while ((opt = getopt(argc, argv, "+b:s:w:t:d:")) != -1) {
		if (opt == 'b')
			base_name = optarg;
		else if (opt == 's')
			sub_name = optarg;
		else if (opt == 'w')
			warmup = atoi(optarg);
		else if (opt == 't')
			tsv_path = optarg;
		else if (opt == 'd' && n_diffs < 8)
			diff_names[n_diffs++] = optarg;
		else
			goto usage;
	}
	if (argc - optind < 2)
		goto usage;
	int n = atoi(argv[optind]), k = argc - optind - 1;
	if (n < 1)
		goto usage;
	struct row *rows = calloc((size_t)k, sizeof(*rows));
	int *ok = calloc((size_t)k, sizeof(int));
	for (int j = 0; j < k; j++) {
		struct row *r = &rows[j];
		r->name = argv[optind + 1 + j];
		r->name_len = name_len(r->name);
		if (r->name_len < 0)
			goto usage;
		r->cmd = r->name + r->name_len + 1;
		r->t = calloc((size_t)n, sizeof(double));
		r->cpu = calloc((size_t)n, sizeof(double));
		r->round_t = calloc((size_t)n, sizeof(double));
		r->round_cpu = calloc((size_t)n, sizeof(double));
		for (int i = 0; i < n; i++)
			r->round_t[i] = r->round_cpu[i] = NAN;
	}
	long idx = 0;
	double t, c;
	int *order = calloc((size_t)k, sizeof(int));
	unsigned int seed = 1; /* fixed: the same order every run */
	for (int i = -warmup; i < n; i++) {
		/* A new order each round (Fisher-Yates): each command goes first, second, ... and
		 * follows each other equally often on average, so what one leaves behind (a v1
		 * cgroup being torn down, a runtime's kworkers) does not always land on the same
		 * next command, as a fixed rotation would make it. */
		for (int o = 0; o < k; o++)
			order[o] = o;
		for (int o = k - 1; o > 0; o--) {
			int r = (int)(rand_r(&seed) % (unsigned int)(o + 1)), tmp = order[o];
			order[o] = order[r];
			order[r] = tmp;
		}
		for (int o = 0; o < k; o++) {
			int j = order[o];
			if (run_once(&rows[j], idx++, &t, &c) == 0 && i >= 0) {
				rows[j].t[ok[j]] = rows[j].round_t[i] = t;
				rows[j].cpu[ok[j]++] = rows[j].round_cpu[i] = c;
			}
		}
	}
	for (int j = 0; j < k; j++)
		summarize(&rows[j], ok[j]);
	const char *comma = sub_name ? strchr(sub_name, ',') : NULL;
	char *sub_only =
		sub_name ? strndup(sub_name, comma ? (size_t)(comma - sub_name) : strlen(sub_name))
			 : NULL;
	int base = find_row(rows, k, base_name), sub = find_row(rows, k, sub_only),
	    zero = find_row(rows, k, comma ? comma + 1 : NULL);
	double cost = sub >= 0 ? rows[sub].med - (zero >= 0 ? rows[zero].med : 0) : 0;
	if (sub >= 0)
		printf("wrapper cost taken off for net-med: %.2fms\n", cost);
	FILE *tsv = tsv_path ? fopen(tsv_path, "w") : NULL;
	print_table(rows, k, n, base < 0 ? 0 : base, sub, cost, tsv);
	if (tsv)
		fclose(tsv);
	for (int d = 0; d < n_diffs; d++) {
		const char *name = diff_names[d], *comma = strchr(name, ',');
		char *first = strndup(name, comma ? (size_t)(comma - name) : 0);
		int a = find_row(rows, k, first), b = find_row(rows, k, comma ? comma + 1 : NULL);
		free(first);
		if (a < 0 || b < 0) {
			fprintf(stderr, "interleave: -d %s: no such rows\n", name);
			return 2;
		}
		print_diff(&rows[a], &rows[b], n);
	}
	return 0;
usage:
	fprintf(stderr, "usage: interleave [-b BASE] [-s SUB] [-w WARMUP] [-t TSV] [-d A,B] N "
			"NAME=CMD...\n");
	return 2;
}
