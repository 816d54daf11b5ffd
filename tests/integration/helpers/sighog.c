// SPDX-License-Identifier: Apache-2.0
/*
 * sighog sigqueue|timers|mqueue MAX: makes up to MAX of one object the kernel counts against
 * RLIMIT_SIGPENDING or RLIMIT_MSGQUEUE: real-time signals queued to itself while blocked
 * (sigqueue), POSIX timers (timers, each with a preallocated signal), or POSIX message
 * queues of 10 messages of 8 KiB, the kernel's default attributes (mqueue: 82,800 bytes
 * charged each, unlinked at once). Prints "made N" and the errno that stopped it ("made 1024
 * EAGAIN"), then holds what it made until standard input closes (or 20 s), so that a test can
 * look at the host meanwhile, and exits 0. `sighog sigqueue MAX UIDS` (as root, with
 * CAP_SETUID) queues from UIDS children instead, each as uid 1000 + i, and prints their sum:
 * the kernel counts per uid, and holds each uid to its own RLIMIT_SIGPENDING first.
 * `sighog sigq` prints this process's SigQ line of /proc/self/status: its user's pending
 * signals, and its limit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <mqueue.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case 0:
		return "";
	case EAGAIN:
		return " EAGAIN";
	case EMFILE:
		return " EMFILE";
	case ENOMEM:
		return " ENOMEM";
	default:
		return " other";
	}
}

static int queue_signals(int max, int *err)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, NULL); /* pending until we exit */
	int n = 0;
	for (; n < max; n++)
		if (sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = n }) < 0) {
			*err = errno;
			break;
		}
	return n;
}

static int make_timers(int max, int *err)
{
	int n = 0;
	for (; n < max; n++) {
		timer_t t;
		struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
		if (timer_create(CLOCK_MONOTONIC, &ev, &t) < 0) {
			*err = errno;
			break;
		}
	}
	return n;
}

static int make_queues(int max, int *err)
{
	struct mq_attr attr = { .mq_maxmsg = 10, .mq_msgsize = 8192 };
	int n = 0;
	for (; n < max; n++) {
		char name[64];
		snprintf(name, sizeof(name), "/sighog-%d-%d", (int)getpid(), n);
		mqd_t q = mq_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600, &attr);
		if (q == (mqd_t)-1) {
			*err = errno;
			break;
		}
		mq_unlink(name); /* charged while open: nothing outlives us */
	}
	return n;
}

static void hold(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char c;
	while (poll(&p, 1, 20000) > 0 && read(0, &c, 1) > 0)
		;
}

/* Each child queues as its own uid, reports "N ERRNO" on the pipe, and holds. */
static int queue_as_uids(int max, int uids, int *err)
{
	int p[2], total = 0;
	if (pipe(p) < 0)
		return *err = errno, 0;
	for (int i = 0; i < uids; i++) {
		if (fork() != 0)
			continue;
		uid_t id = 1000 + (uid_t)i;
		int e = 0, n = 0;
		if (setgroups(0, NULL) < 0 || setresgid(id, id, id) < 0 ||
		    setresuid(id, id, id) < 0)
			e = errno;
		else
			n = queue_signals(max, &e);
		dprintf(p[1], "%d %d\n", n, e);
		close(p[1]); /* the parent reads to the end */
		hold();
		_exit(0);
	}
	close(p[1]);
	FILE *f = fdopen(p[0], "r");
	int n, e;
	while (f && fscanf(f, "%d %d", &n, &e) == 2) {
		total += n;
		if (e)
			*err = e;
	}
	return total;
}

static void print_sigq(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigQ:", 5))
			fputs(line, stdout);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "sigq")) {
		print_sigq();
		return 0;
	}
	if (argc != 3 && !(argc == 4 && !strcmp(argv[1], "sigqueue")))
		return fprintf(stderr, "usage: sighog sigqueue|timers|mqueue MAX | sighog sigqueue "
				       "MAX UIDS | sighog sigq\n"),
		       2;
	int max = atoi(argv[2]), err = 0, n;
	if (argc == 4)
		n = queue_as_uids(max, atoi(argv[3]), &err);
	else if (!strcmp(argv[1], "sigqueue"))
		n = queue_signals(max, &err);
	else if (!strcmp(argv[1], "timers"))
		n = make_timers(max, &err);
	else if (!strcmp(argv[1], "mqueue"))
		n = make_queues(max, &err);
	else
		return fprintf(stderr, "sighog: unknown kind %s\n", argv[1]), 2;
	printf("made %d%s\n", n, errname(err));
	fflush(stdout);
	hold();
	while (wait(NULL) > 0)
		;
	return 0;
}
