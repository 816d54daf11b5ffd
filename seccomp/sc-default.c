// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's built-in hardened profile, and freeing any struct sc_config. The profile is
 * Docker's default (moby profiles/seccomp/default.json) as a container with Docker's default
 * capabilities sees it: an allow list, default ERRNO(EPERM), and a few argument-filtered
 * rules. Everything that administers the host or other processes stays out of the list.
 */
#include "sc.h"

#include <seccomp.h>
#include <sched.h>
#include <string.h>

/*
 * Allowed outright. Deliberately absent (so EPERM): mount/umount2/pivot_root/move_mount and the
 * fsopen family, unshare/setns, kexec_*, *_module, bpf, perf_event_open, add_key/keyctl/
 * request_key, ptrace/process_vm_*, open_by_handle_at, userfaultfd, swapon/swapoff, reboot,
 * syslog, clock_settime/settimeofday/stime, acct, quotactl, lookup_dcookie,
 * iopl/ioperm, sethostname/setdomainname, *_mempolicy, kcmp, pidfd_getfd.
 * Names a kernel or libseccomp does not know are skipped at compile time.
 */
static const char allow_names[] =
	"accept accept4 access adjtimex alarm bind brk cachestat capget capset chdir chmod chown "
	"chown32 chroot clock_adjtime clock_adjtime64 clock_getres clock_getres_time64 "
	"clock_gettime clock_gettime64 clock_nanosleep clock_nanosleep_time64 close close_range "
	"connect copy_file_range creat dup dup2 dup3 epoll_create epoll_create1 epoll_ctl "
	"epoll_ctl_old epoll_pwait epoll_pwait2 epoll_wait epoll_wait_old eventfd eventfd2 execve "
	"execveat exit exit_group faccessat faccessat2 fadvise64 fadvise64_64 fallocate "
	"fanotify_mark fchdir fchmod fchmodat fchmodat2 fchown fchown32 fchownat fcntl fcntl64 "
	"fdatasync fgetxattr flistxattr flock fork fremovexattr fsetxattr fstat fstat64 fstatat64 "
	"fstatfs fstatfs64 fsync ftruncate ftruncate64 futex futex_requeue futex_time64 "
	"futex_wait futex_waitv futex_wake futimesat getcpu getcwd getdents getdents64 getegid "
	"getegid32 geteuid geteuid32 getgid getgid32 getgroups getgroups32 getitimer getpeername "
	"getpgid getpgrp getpid getppid getpriority getrandom getresgid getresgid32 getresuid "
	"getresuid32 getrlimit get_robust_list getrusage getsid getsockname getsockopt "
	"get_thread_area gettid gettimeofday getuid getuid32 getxattr inotify_add_watch "
	"inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl io_destroy io_getevents "
	"io_pgetevents io_pgetevents_time64 ioprio_get ioprio_set io_setup io_submit "
	"io_uring_enter io_uring_register io_uring_setup ipc kill landlock_add_rule "
	"landlock_create_ruleset landlock_restrict_self lchown lchown32 lgetxattr link linkat "
	"listen listxattr llistxattr _llseek lremovexattr lseek lsetxattr lstat lstat64 madvise "
	"map_shadow_stack membarrier memfd_create memfd_secret mincore mkdir mkdirat mknod "
	"mknodat mlock mlock2 mlockall mmap mmap2 mprotect mq_getsetattr mq_notify mq_open "
	"mq_timedreceive mq_timedreceive_time64 mq_timedsend mq_timedsend_time64 mq_unlink mremap "
	"mseal msgctl msgget msgrcv msgsnd msync munlock munlockall munmap name_to_handle_at "
	"nanosleep newfstatat _newselect open openat openat2 pause pidfd_open pidfd_send_signal "
	"pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll ppoll_time64 prctl pread64 "
	"preadv preadv2 prlimit64 process_mrelease pselect6 pselect6_time64 pwrite64 pwritev "
	"pwritev2 read readahead readlink readlinkat readv recv recvfrom recvmmsg recvmmsg_time64 "
	"recvmsg remap_file_pages removexattr rename renameat renameat2 restart_syscall rmdir "
	"rseq rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo rt_sigreturn "
	"rt_sigsuspend rt_sigtimedwait rt_sigtimedwait_time64 rt_tgsigqueueinfo sched_getaffinity "
	"sched_getattr sched_getparam sched_get_priority_max sched_get_priority_min "
	"sched_getscheduler sched_rr_get_interval sched_rr_get_interval_time64 sched_setaffinity "
	"sched_setattr sched_setparam sched_setscheduler sched_yield seccomp select semctl semget "
	"semop semtimedop semtimedop_time64 send sendfile sendfile64 sendmmsg sendmsg sendto "
	"setfsgid setfsgid32 setfsuid setfsuid32 setgid setgid32 setgroups setgroups32 setitimer "
	"setpgid setpriority setregid setregid32 setresgid setresgid32 setresuid setresuid32 "
	"setreuid setreuid32 setrlimit set_robust_list setsid setsockopt set_thread_area "
	"set_tid_address setuid setuid32 setxattr shmat shmctl shmdt shmget shutdown sigaltstack "
	"signalfd signalfd4 sigprocmask sigreturn socketcall socketpair splice stat stat64 statfs "
	"statfs64 statx symlink symlinkat sync sync_file_range syncfs sysinfo tee tgkill time "
	"timer_create timer_delete timer_getoverrun timer_gettime timer_gettime64 timer_settime "
	"timer_settime64 timerfd_create timerfd_gettime timerfd_gettime64 timerfd_settime "
	"timerfd_settime64 times tkill truncate truncate64 ugetrlimit umask uname unlink unlinkat "
	"utime utimensat utimensat_time64 utimes vfork vmsplice wait4 waitid waitpid write writev";

/*
 * Per native architecture: the compat ABIs Docker also admits (so 32-bit binaries run), the
 * arch-only syscalls it allows, and which clone argument holds the flags (s390 swaps them).
 */
#if defined(__x86_64__)
static const char native_archs[] = "SCMP_ARCH_X86_64 SCMP_ARCH_X86 SCMP_ARCH_X32";
static const char arch_names[] = "arch_prctl modify_ldt";
#elif defined(__i386__)
static const char native_archs[] = "SCMP_ARCH_X86";
static const char arch_names[] = "modify_ldt";
#elif defined(__aarch64__) || defined(__arm__)
static const char native_archs[] = "SCMP_ARCH_AARCH64 SCMP_ARCH_ARM";
static const char arch_names[] =
	"arm_fadvise64_64 arm_sync_file_range sync_file_range2 breakpoint cacheflush set_tls";
#elif defined(__s390x__)
static const char native_archs[] = "SCMP_ARCH_S390X SCMP_ARCH_S390";
static const char arch_names[] = "s390_pci_mmio_read s390_pci_mmio_write s390_runtime_instr";
#elif defined(__powerpc64__)
static const char native_archs[] = "SCMP_ARCH_PPC64LE";
static const char arch_names[] = "sync_file_range2 swapcontext";
#elif defined(__riscv)
static const char native_archs[] = "SCMP_ARCH_RISCV64";
static const char arch_names[] = "riscv_flush_icache";
#else
static const char native_archs[] = "";
static const char arch_names[] = "";
#endif

#if defined(__s390x__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

#define CLONE_NS_MASK                                                                              \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
	 CLONE_NEWPID | CLONE_NEWNET)
#define AF_VSOCK_ 40
#define N_RULES 6 /* the rule_new calls below */
/* The personalities Docker permits: PER_LINUX, UNAME26, ADDR_NO_RANDOMIZE (and both), query. */
static const uint64_t personalities[] = { 0x0, 0x0008, 0x20000, 0x20008, 0xffffffff };

/* "a b c" -> NULL-terminated strv, counted in *n. The tables are strings to stay compact. */
static char **strv_split(const char *list, size_t *n)
{
	size_t cap = 1;
	for (const char *p = list; *p; p++)
		cap += *p == ' ';
	char **out = hutch_xcalloc(cap + 1, sizeof(char *));
	*n = 0;
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, " ");
		if (len > 0) {
			char *name = hutch_xmalloc(len + 1);
			memcpy(name, p, len);
			name[len] = '\0';
			out[(*n)++] = name;
		}
		p += len + strspn(p + len, " ");
	}
	return out;
}

static struct sc_rule *rule_new(struct sc_config *cfg, const char *names, uint32_t action,
				size_t n_args)
{
	struct sc_rule *r = &cfg->rules[cfg->n_rules++];
	r->names = strv_split(names, &r->n_names);
	r->action = action;
	r->n_args = n_args;
	r->args = n_args ? hutch_xcalloc(n_args, sizeof(struct sc_arg)) : NULL;
	return r;
}

int sc_default_config(struct sc_config *out, struct hutch_err *err)
{
	struct sc_config cfg = { .default_action = SCMP_ACT_ERRNO(EPERM) };
	struct sc_rule *r;

	(void)err; /* nothing here can fail but allocation, which aborts */
	cfg.archs = strv_split(native_archs, &cfg.n_archs);
	cfg.rules = hutch_xcalloc(N_RULES, sizeof(struct sc_rule));
	rule_new(&cfg, allow_names, SCMP_ACT_ALLOW, 0);
	rule_new(&cfg, arch_names, SCMP_ACT_ALLOW, 0);

	/* No vsock: it reaches the host (or hypervisor) around every network namespace. */
	r = rule_new(&cfg, "socket", SCMP_ACT_ALLOW, 1);
	r->args[0] = (struct sc_arg){ .index = 0, .value = AF_VSOCK_, .op = SC_OP_NE };

	/* Several conditions on one argument: compiled as one rule each, i.e. OR. */
	r = rule_new(&cfg, "personality", SCMP_ACT_ALLOW, ARRAY_SIZE(personalities));
	for (size_t i = 0; i < ARRAY_SIZE(personalities); i++)
		r->args[i] =
			(struct sc_arg){ .index = 0, .value = personalities[i], .op = SC_OP_EQ };

	/* fork and threads yes, new namespaces no: (flags & CLONE_NEW*) must be 0. */
	r = rule_new(&cfg, "clone", SCMP_ACT_ALLOW, 1);
	r->args[0] = (struct sc_arg){ .index = CLONE_FLAGS_ARG,
				      .value = CLONE_NS_MASK,
				      .value_two = 0,
				      .op = SC_OP_MASKED_EQ };

	/*
	 * clone3 passes its flags in memory, where seccomp cannot look, so it cannot be filtered
	 * like clone. ENOSYS (not EPERM) makes glibc and others fall back to clone.
	 */
	rule_new(&cfg, "clone3", SCMP_ACT_ERRNO(ENOSYS), 0);
	*out = cfg;
	return 0;
}

void sc_config_free(struct sc_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->n_rules; i++) {
		hutch_strv_free(cfg->rules[i].names);
		free(cfg->rules[i].args);
	}
	free(cfg->rules);
	hutch_strv_free(cfg->archs);
	memset(cfg, 0, sizeof(*cfg));
}
