// SPDX-License-Identifier: Apache-2.0
/*
 * killat: runs a command ROUNDS times and SIGKILLs each run after a random delay of 0 to
 * MAX_MS milliseconds (seeded, so a failing seed can be replayed), reaping it. "%d" in an
 * argument becomes the round's number, for ids. Prints how many runs were killed and how many
 * ended first. The command's stdio goes to /dev/null.
 *   killat ROUNDS MAX_MS SEED CMD ARGS...
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	int rounds = atoi(argv[1]), max_ms = atoi(argv[2]), killed = 0, ended = 0;
	srandom((unsigned)atoi(argv[3]));
	for (int r = 0; r < rounds; r++) {
		long delay_us = random() % ((long)max_ms * 1000 + 1);
		char **v = round_argv(argc - 4, argv + 4, r);
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0), dup2(null, 1), dup2(null, 2);
			execvp(v[0], v);
			_exit(127);
		}
		struct timespec ts = { delay_us / 1000000, (delay_us % 1000000) * 1000 };
		nanosleep(&ts, NULL);
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			ended++;
		} else {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
			ended += !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		}
	}
	printf("%d rounds: %d killed, %d ended first\n", rounds, killed, ended);
	return 0;
}
