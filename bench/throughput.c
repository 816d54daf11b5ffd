// SPDX-License-Identifier: Apache-2.0
/*
 * Runs per second: each command N times, with P of them at once (every P in the list), cut
 * into blocks that are interleaved across commands with a rotating order, as interleave.c
 * does for latency. $I is a run index unique over the whole invocation, $S the parallel slot
 * (0..P-1), so that concurrent runs can use separate bundles or cgroups.
 * Usage: throughput [-p 1,2] [-k BLOCKS] [-b BASE] [-t TSV] N NAME=CMD...
 * Prints, per command and P: runs/s, the ratio to BASE at the same P, and the scaling from
 * P=1 (the first P); -t also writes them as TSV (name par rate ratio scaling fails).
 */
#include "spawn.h"

#include <errno.h>

struct cell {
	const char *name, *cmd;
	int name_len, par, fails;
	long runs;
	double secs;
};

/* n runs of cmd, at most par at a time; returns the wall time in ms. */
static double run_block(struct cell *c, int n, long *idx)
{
	pid_t slots[64] = { 0 };
	int started = 0, running = 0;
	double t0 = now_ms();
	while (started < n || running > 0) {
		for (int s = 0; s < c->par && started < n; s++) {
			if (slots[s])
				continue;
			slots[s] = spawn(c->cmd, (*idx)++, s);
			started++;
			running++;
		}
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		for (int s = 0; s < c->par; s++)
			if (slots[s] == pid) {
				slots[s] = 0;
				running--;
			}
		if ((!WIFEXITED(st) || WEXITSTATUS(st) != 0) && c->fails++ < 3)
			fprintf(stderr, "throughput: %.*s failed (status 0x%x)\n", c->name_len,
				c->name, st);
	}
	return now_ms() - t0;
}

static int parse_pars(const char *s, int *pars)
{
	int n = 0;
	for (char *end; *s && n < 8; s = *end ? end + 1 : end) {
		long v = strtol(s, &end, 10);
		if (v < 1 || v > 64)
			return -1;
		pars[n++] = (int)v;
	}
	return n;
}

int main(int argc, char **argv)
{
	int pars[8] = { 1, 2 }, np = 2, blocks = 10, opt;
	const char *base_name = NULL, *tsv_path = NULL;
	while ((opt = getopt(argc, argv, "+p:k:b:t:")) != -1) {
		if (opt == 'p' && (np = parse_pars(optarg, pars)) > 0)
			continue;
		if (opt == 'k' && (blocks = atoi(optarg)) > 0)
			continue;
		if (opt == 'b' || opt == 't') {
			*(opt == 'b' ? &base_name : &tsv_path) = optarg;
			continue;
		}
		goto usage;
	}
	if (argc - optind < 2)
		goto usage;
	int n = atoi(argv[optind]), k = argc - optind - 1, m = k * np;
	if (n < blocks)
		blocks = n;
	if (n < 1)
		goto usage;
	struct cell *cells = calloc((size_t)m, sizeof(*cells));
	for (int j = 0; j < k; j++)
		for (int p = 0; p < np; p++) {
			struct cell *c = &cells[j * np + p];
			c->name = argv[optind + 1 + j];
			c->name_len = name_len(c->name);
			if (c->name_len < 0)
				goto usage;
			c->cmd = c->name + c->name_len + 1;
			c->par = pars[p];
		}
	long idx = 0;
	for (int b = 0; b < blocks; b++) {
		int runs = n / blocks + (b < n % blocks);
		for (int o = 0; o < m; o++) {
			struct cell *c = &cells[(b + o) % m];
			c->secs += run_block(c, runs, &idx) / 1e3;
			c->runs += runs;
		}
	}
	int base = 0;
	for (int j = 0; base_name && j < k; j++)
		if ((int)strlen(base_name) == cells[j * np].name_len &&
		    !strncmp(cells[j * np].name, base_name, strlen(base_name)))
			base = j;
	FILE *tsv = tsv_path ? fopen(tsv_path, "w") : NULL;
	printf("%-16s %4s %10s %8s %8s\n", "command", "par", "runs/s", "ratio", "scaling");
	for (int j = 0; j < k; j++)
		for (int p = 0; p < np; p++) {
			struct cell *c = &cells[j * np + p], *b = &cells[base * np + p];
			double rate = c->runs / c->secs;
			printf("%-16.*s %4d %10.1f %7.2fx %7.2fx", c->name_len, c->name, c->par,
			       rate, rate / (b->runs / b->secs),
			       rate / (cells[j * np].runs / cells[j * np].secs));
			if (c->fails)
				printf("  (%d of %ld failed)", c->fails, c->runs);
			printf("\n");
		}
	if (tsv)
		fclose(tsv);
	return 0;
usage:
	fprintf(stderr,
		"usage: throughput [-p 1,2] [-k BLOCKS] [-b BASE] [-t TSV] N NAME=CMD...\n");
	return 2;
}
