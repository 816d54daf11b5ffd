// SPDX-License-Identifier: Apache-2.0
/*
 * inotifyhog instances MAX: makes up to MAX inotify instances; inotifyhog watches MAX DIR:
 * makes MAX files in DIR and watches each from one instance. Prints "made N" and the errno
 * that stopped it ("made 16 EMFILE"), then holds what it made until standard input closes
 * (or 20 s), so that a test can look at the host meanwhile, and exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case 0:
		return "";
	case EMFILE:
		return " EMFILE";
	case ENFILE:
		return " ENFILE";
	case ENOSPC:
		return " ENOSPC";
	default:
		return " other";
	}
}

static int instances(int max, int *err)
{
	int n = 0;
	for (; n < max; n++)
		if (inotify_init1(IN_CLOEXEC) < 0) {
			*err = errno;
			break;
		}
	return n;
}

static int watches(int max, const char *dir, int *err)
{
	char path[4096];
	int fd = inotify_init1(IN_CLOEXEC), n = 0;
	if (fd < 0) {
		*err = errno;
		return 0;
	}
	for (; n < max; n++) {
		snprintf(path, sizeof(path), "%s/w%d", dir, n);
		int f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (f < 0) {
			perror("inotifyhog: create");
			exit(1);
		}
		close(f);
		if (inotify_add_watch(fd, path, IN_MODIFY) < 0) {
			*err = errno;
			break;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	int err = 0, n;
	if (argc >= 3 && !strcmp(argv[1], "instances"))
		n = instances(atoi(argv[2]), &err);
	else if (argc >= 4 && !strcmp(argv[1], "watches"))
		n = watches(atoi(argv[2]), argv[3], &err);
	else {
		fprintf(stderr, "usage: inotifyhog instances MAX | watches MAX DIR\n");
		return 2;
	}
	printf("made %d%s\n", n, errname(err));
	fflush(stdout);
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char c;
	while (poll(&p, 1, 20000) > 0 && read(0, &c, 1) > 0)
		;
	return 0;
}
