// SPDX-License-Identifier: Apache-2.0
/*
 * killat: runs a command until KILLS runs of it were SIGKILLed, each after a random delay of
 * 0 to MAX_MS milliseconds (seeded, so a failing seed can be replayed), reaping it. The delay
 * is drawn below 1.5 times the mean time of the runs that ended by themselves, when that is
 * shorter, so that the kills land all over the command's life rather than mostly after it. "%d" in an argument becomes the
 * run's number, for ids. Gives up after 4 x KILLS runs. Prints how many runs were killed and
 * how many ended first. The command's stdio goes to /dev/null. With KILLAT_PIDS=FILE, each
 * run's pid is appended to FILE: what a killed run left is found by it (hutch-sb-PID).
 *   killat KILLS MAX_MS SEED CMD ARGS...
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char **round_argv(int argc, char **argv, int round)
{
	char **v = calloc((size_t)argc + 1, sizeof(char *));
	for (int i = 0; i < argc; i++) {
		const char *p = strstr(argv[i], "%d");
		if (!p) {
			v[i] = argv[i];
			continue;
		}
		if (asprintf(&v[i], "%.*s%d%s", (int)(p - argv[i]), argv[i], round, p + 2) < 0)
			exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: killat ROUNDS MAX_MS SEED CMD ARGS...\n");
		return 2;
	}
	int want = atoi(argv[1]), max_ms = atoi(argv[2]), killed = 0, ended = 0, r = 0;
	long sum_us = 0, n_ended_us = 0; /* the runs that ended by themselves */
	srandom((unsigned)atoi(argv[3]));
	FILE *pids = getenv("KILLAT_PIDS") ? fopen(getenv("KILLAT_PIDS"), "a") : NULL;
	for (; killed < want && r < 4 * want; r++) {
		long span = (long)max_ms * 1000;
		if (n_ended_us && sum_us / n_ended_us * 3 / 2 < span)
			span = sum_us / n_ended_us * 3 / 2;
		long delay_us = random() % (span + 1);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		char **v = round_argv(argc - 4, argv + 4, r);
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0), dup2(null, 1), dup2(null, 2);
			execvp(v[0], v);
			_exit(127);
		}
		if (pids)
			fprintf(pids, "%d\n", (int)pid), fflush(pids);
		/* Wait on a pidfd, so that a run that ends before its delay is timed as it ends. */
		struct timespec ts = { delay_us / 1000000, (delay_us % 1000000) * 1000 };
		int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		if (pfd < 0 || ppoll(&p, 1, &ts, NULL) < 0)
			nanosleep(&ts, NULL);
		if (pfd >= 0)
			close(pfd);
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			ended++;
			clock_gettime(CLOCK_MONOTONIC, &t1);
			long us = (t1.tv_sec - t0.tv_sec) * 1000000 +
				  (t1.tv_nsec - t0.tv_nsec) / 1000;
			sum_us += us;
			n_ended_us++;
		} else {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
			ended += !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		}
	}
	if (pids)
		fclose(pids);
	long mean = n_ended_us ? sum_us / n_ended_us : 0;
	printf("%d runs: %d killed, %d ended first (a run's mean %.1f ms)\n", r, killed, ended,
	       mean / 1000.0);
	return killed == want ? 0 : 1;
}
