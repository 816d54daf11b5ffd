/* SPDX-License-Identifier: Apache-2.0 */
/* Becoming the container's process, what the init and an exec share (rt-process.c,
 * rt-sched.c), and the exec trampoline every container process is exec'd through
 * (rt-trampoline.c). */
#ifndef HUTCH_RT_PROCESS_H
#define HUTCH_RT_PROCESS_H

#include "hutch-base.h"
#include "rt-spec.h"

#include <signal.h>

/* ---- becoming the process (rt-process.c): what the init and exec share ---- */

/* The terminal: with process.terminal a pty whose master goes to console_fd (a connected
 * --console-socket) or else over sync_fd to the caller, who relays; without, a session of
 * the process's own. console: the init's (bound over /dev/console), not an exec's. */
struct rt_terminal {
	bool console;
	int console_fd, sync_fd;
};
int rt_setup_terminal(const struct rt_process *p, const struct rt_terminal *t,
		      struct hutch_err *err);
/* Closes every fd from 3 + preserve_fds on but keep (which must lie above the preserved). */
int rt_close_fds_but(int preserve_fds, const int *keep, size_t n_keep, struct hutch_err *err);
int rt_enter_cwd(const char *cwd, struct hutch_err *err);
/* A missing cwd is made (mkdir -p inside /, the root after pivot), as runc and crun do. */
int rt_make_cwd(const char *cwd, struct hutch_err *err);
/* process.user, keeping capabilities; not dumpable; then a new session keyring (its). */
int rt_become_user(const struct rt_process *p, bool new_keyring, struct hutch_err *err);
/* The kernel attributes the spec gives the process, which execve keeps (rt-sched.c): set
 * before the privileges are dropped. */
int rt_set_kernel_attrs(const struct rt_spec *s, const struct rt_process *p, struct hutch_err *err);
/* Finds args[0] in the process's PATH; errors say "no such file or directory" (status 127)
 * or "permission denied" (126), the texts container clients map to exit codes. */
int rt_find_executable(const struct rt_process *p, char *out, size_t len, struct hutch_err *err);
/* The home directory in a passwd line (name:pw:uid:gid:gecos:home:shell) when its uid is
 * uid and its home is not empty. */
bool rt_passwd_home(const char *line, uid_t uid, char *out, size_t len);
/* env with HOME when it has none (or an empty one), as runc: uid's home in the container's
 * /etc/passwd, else "/". Reads / as the process's root: after pivot or setns, before the
 * user switch (the file may be root's only). env itself when it has HOME. */
char **rt_env_with_home(char *const *env, uid_t uid);
/* env with LISTEN_FDS and LISTEN_PID for preserved fds (env itself when there are none). */
char **rt_listen_env(char *const *env, int preserve_fds);
/* What a process gives up before execve, in the order rt_drop_privileges gives. */
struct rt_drop {
	const struct ns_caps *caps; /* NULL: left as they are */
	bool no_new_privs;
	int landlock_fd; /* a Landlock ruleset to restrict to, or -1 */
	const struct sc_filter *filter;
	int *notify_fd; /* a filter with NOTIFY rules: its listener's fd (NULL: refused) */
};
int rt_drop_privileges(const struct rt_drop *d, struct hutch_err *err);
/* rt_drop_privileges for a process's capabilities and no_new_privs, and filter. */
int rt_drop_process_privileges(const struct rt_process *p, const struct sc_filter *filter,
			       int *notify_fd, struct hutch_err *err);
/* Empties the signal mask and restores every disposition (or those in which) to default. */
void rt_reset_signals(void);
void rt_reset_signals_in(const sigset_t *which);

/* The exec trampoline (rt-trampoline.c): a sealed memfd (O_CLOEXEC) that every container
 * process is exec'd through, so /proc/self/exe is never hutch's binary meanwhile. */
int rt_trampoline_open(struct hutch_err *err);
/* The trampoline's argv for exe with argv (malloc'd; made before the seccomp filter). */
char **rt_trampoline_argv(const char *exe, char *const *argv);
/* When filter allows execve but would deny the trampoline's execveat, *out is a copy that
 * lets that one call through (else NULL: filter serves as it is). */
int rt_trampoline_filter(const struct sc_filter *filter, int fd, struct sc_filter **out,
			 struct hutch_err *err);
/* Returns only on failure, with -errno. */
int rt_trampoline_exec(int fd, char **targv, char *const *envp);

#endif
