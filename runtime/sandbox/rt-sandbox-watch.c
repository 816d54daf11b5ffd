// SPDX-License-Identifier: Apache-2.0
/*
 * The report of a hutch that was killed (SIGKILL, or any signal it does not catch): with
 * --report or --report-fd, a small process forked at the start holds the report's directory
 * (or fd) and one end of a socket, and nothing else. hutch says 'W' on it before it writes
 * the report and 'D' once it has; when the socket ends without 'D', hutch died first, and
 * the watcher writes a report of that (failure "hutch_killed") through what it holds: a
 * file only if hutch's own is not there, an fd only if hutch never began to write to it.
 */
#include "rt-sandbox.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

/* Reads hutch's words until it is gone; writes the report it could not. */
__attribute__((noreturn)) static void watch(struct rt_sb_opts *o, struct rt_sb_result *r, int sock,
					    pid_t hutch, int notify_fd)
{
	/* --detach's pipe to the caller, until we are done: a caller whose supervisor died
	 * writes its report of that after ours (rt_sb_detach_wait reads to the pipe's end). */
	int keep[] = { sock, o->report_fd, o->report_dir_fd, notify_fd };
	struct hutch_err e = { 0 };
	/* Not the caller's stdio (a reader of hutch's stdout waits for its end) nor hutch's
	 * locks; not ended by the signals a terminal sends hutch's process group. */
	hutch_close_fds_from(0, keep, ARRAY_SIZE(keep));
	setsid(); /* nor by a kill of that process group: it is what the watcher is there for */
	static const int ignored[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP };
	for (size_t i = 0; i < ARRAY_SIZE(ignored); i++)
		signal(ignored[i], SIG_IGN);
	char c, last = 0;
	ssize_t n;
	while ((n = read(sock, &c, 1)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			last = c;
	if (last == 'D')
		_exit(0);
	struct stat st;
	if (last == 'W') { /* hutch died writing: its file may be there; an fd is not touched */
		o->report_fd = -1;
		if (o->report_dir_fd >= 0 &&
		    fstatat(o->report_dir_fd, o->report_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			_exit(0);
	}
	char msg[128];
	snprintf(msg, sizeof(msg), "hutch (pid %d) was killed before it wrote this report",
		 (int)hutch);
	r->failure = RT_SB_FAIL_HUTCH_KILLED;
	r->exit_code = 128 + SIGKILL; /* what its caller saw, in the likely case */
	r->error = msg;
	clock_gettime(CLOCK_REALTIME, &r->ended);
	_exit(rt_sb_write_report(o, NULL, r, &e) < 0);
}

int rt_sb_watch_start(const struct rt_sb_opts *o, const struct rt_sb_result *r, int notify_fd)
{
	int sv[2];
	if (!o->report && o->report_fd < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid_t hutch = getpid(), pid = fork();
	if (pid == 0) {
		close(sv[0]);
		struct rt_sb_opts copy = *o; /* the child's own memory: o is the caller's const */
		struct rt_sb_result res = *r;
		watch(&copy, &res, sv[1], hutch, notify_fd);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	return sv[0];
}

void rt_sb_watch_say(int fd, char word)
{
	if (fd >= 0)
		(void)!send(fd, &word, 1, MSG_NOSIGNAL);
}
