// SPDX-License-Identifier: Apache-2.0
/*
 * reaper: runs a command as a child subreaper. PID 1 on the test hosts does not reap
 * orphans, and detached containers are orphaned by design (hutch exits, the container's init
 * stays), so the suite runs under this: it reaps every orphan, forwards SIGINT/SIGTERM/SIGHUP
 * to the command, kills what is still left when the command exits, and returns its status.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t main_pid;

static void forward(int sig)
{
	if (main_pid > 0)
		kill(main_pid, sig);
}

/* Children of ours that are still alive: the orphans that were reparented to us. */
static int kill_leftovers(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[64], buf[512], *p, *comm, state;
		FILE *f;
		int ppid;
		pid_t pid = atoi(e->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		p = strrchr(buf, ')'); /* comm may contain spaces and parentheses */
		comm = strchr(buf, '(');
		if (!p || !comm || sscanf(p + 1, " %c %d", &state, &ppid) != 2)
			continue;
		if (ppid != getpid() || state == 'Z')
			continue;
		*p = '\0';
		fprintf(stderr, "reaper: killing leftover process %d (%s)\n", pid, comm + 1);
		kill(pid, SIGKILL);
		n++;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = forward };
	int status = 0, wstatus, rounds;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: reaper COMMAND [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("reaper: PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	pid = fork();
	if (pid < 0) {
		perror("reaper: fork");
		return 2;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "reaper: exec %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	main_pid = pid;

	for (;;) {
		pid_t r = waitpid(-1, &wstatus, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: should not happen before the main child */
		}
		if (r != pid)
			continue;
		status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
		break;
	}
	main_pid = 0;

	/* Whatever outlived the suite would otherwise become an unreaped zombie of PID 1. */
	for (rounds = 0; rounds < 50; rounds++) {
		int n = kill_leftovers();

		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (n == 0 && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			break;
		usleep(100000);
	}
	return status;
}
