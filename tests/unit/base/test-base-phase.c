// SPDX-License-Identifier: Apache-2.0
/*
 * base: --debug's phase lines (hutch-phase.h): their text and JSON forms, one write each,
 * the elapsed times that add up, nothing at all when off or quieted, and the fd they take
 * (stderr's close-on-exec copy) given back when logging is turned off, or when a child
 * closes it with the rest of its fds.
 */
#include "hutch-base.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whatever the pipe holds now (non-blocking), NUL-terminated. */
static ssize_t drain(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static void test_text(int p[2])
{
	char buf[1024], name[32], in[16];
	long long us1, total1, us2, total2;
	int pid;
	hutch_phase_setup(p[1], false, true);
	ok(hutch_phases_on && hutch_phase_fd() == p[1], "on with --debug, into --log's fd");
	hutch_phase("first");
	usleep(2000);
	hutch_phase("second");
	drain(p[0], buf, sizeof(buf));
	ok(sscanf(buf, "hutch: debug: phase=%31s us=%lld total=%lld in=%15s pid=%d\n", name, &us1,
		  &total1, in, &pid) == 5 &&
		   !strcmp(name, "first") && !strcmp(in, "hutch") && pid == getpid(),
	   "text: phase=NAME us=N total=N in=hutch pid=PID");
	const char *second = strchr(buf, '\n');
	ok(second &&
		   sscanf(second + 1, "hutch: debug: phase=%31s us=%lld total=%lld", name, &us2,
			  &total2) == 3 &&
		   !strcmp(name, "second"),
	   "one line per phase");
	ok(us2 >= 2000 && llabs(total2 - (total1 + us2)) <= 1, /* rounded */
	   "us since the previous phase, total since the start");
	hutch_phase_in("child");
	hutch_phase("third");
	drain(p[0], buf, sizeof(buf));
	ok(strstr(buf, "phase=third ") && strstr(buf, " in=child "),
	   "a child's lines say in=child");
	hutch_phase_in("hutch");
}

static void test_json(int p[2])
{
	char buf[1024];
	hutch_phase_setup(p[1], true, true);
	hutch_phase("spec");
	drain(p[0], buf, sizeof(buf));
	static const char head[] =
		"{\"level\":\"debug\",\"msg\":\"phase\",\"phase\":\"spec\",\"us\":";
	ok(!strncmp(buf, head, strlen(head)) && strstr(buf, ",\"total_us\":") &&
		   strstr(buf, ",\"in\":\"hutch\",\"pid\":") && strstr(buf, "Z\"}\n") &&
		   !strchr(buf, '\n')[1],
	   "json: one object a line");
}

static void test_off(int p[2])
{
	char buf[256];
	hutch_phase_setup(p[1], false, false);
	ok(!hutch_phases_on && hutch_phase_fd() == -1, "off without --debug");
	hutch_phase("nothing");
	ok(drain(p[0], buf, sizeof(buf)) < 0, "off: nothing written");
	hutch_phase_setup(-1, false, true);
	int dup = hutch_phase_fd();
	ok(dup > 2 && (fcntl(dup, F_GETFD) & FD_CLOEXEC),
	   "no --log: a close-on-exec copy of stderr");
	hutch_phase_setup(-1, false, false);
	ok(fcntl(dup, F_GETFD) < 0, "turned off, the copy is closed");
	hutch_phase_setup(p[1], false, true);
	hutch_phase_quiet();
	hutch_phase("after the filter");
	ok(drain(p[0], buf, sizeof(buf)) < 0 && hutch_phase_fd() == -1, "quiet: nothing written");
	/* A child that closes its fds (host mode's) closes this one too: its number may then
	 * be a file of the child's, which must not get the lines. */
	int high = fcntl(p[1], F_DUPFD_CLOEXEC, 100);
	hutch_phase_setup(high, false, true);
	ok(hutch_close_fds_from(high, NULL, 0) == 0 && hutch_phase_fd() == -1,
	   "its fd closed by hutch_close_fds_from: quiet");
	int reused = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ok(dup2(reused, high) == high, "the number taken by another file");
	hutch_phase("into the other file");
	ok(drain(p[0], buf, sizeof(buf)) < 0, "nothing written anywhere");
	close(reused);
	close(high);
}

int main(void)
{
	int p[2];
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
		return 1;
	test_text(p);
	test_json(p);
	test_off(p);
	return tap_done();
}
