/* arena's warm-container launcher: the only program of a warm container that is not the
 * bot's, compiled on the host as a static binary (see launcher.py) and mounted read-only
 * with the slot's pipes, so that nothing of the bot's image ever runs outside a bot
 * process (no /bin/sh, no setpriv, no dynamic loader or library of the image).
 *
 *   arena-launcher BOT_COMMAND...
 *
 * Runs as the container's main process (docker-init's child), root with only the
 * capabilities SETUID, SETGID, SETPCAP (to become the bot's user, empty the bounding set),
 * SYS_ADMIN (to make fresh namespaces) and NET_ADMIN (to bring up their loopback). It
 * opens /arena-io/launch (arena writes "SERIAL TOKEN UID" lines there) and /arena-io/status
 * (it answers there), both root's 0600 pipes, says "ready", then for each line forks a
 * monitor that
 *   1. moves into a fresh network and IPC namespace (its loopback up): sockets, abstract
 *      Unix names, packet counters, SysV IPC objects and ids, POSIX message queues of one
 *      game are gone with it, and every game's start the same;
 *   2. forks the bot's process, which sets its oom_score_adj to 1000, empties its
 *      capability bounding, inheritable and ambient sets, becomes the bot's user (uid, gid
 *      and groups UID: the container's leased uid, arena.sandbox.uids, or 65534, nobody;
 *      the permitted and effective sets empty themselves), opens its three
 *      pipes /arena-io/TOKEN.in, .out, .err as that user, stacks a seccomp filter that takes
 *      away what CAP_SYS_ADMIN added to the engine's filter (namespaces, mounts, bpf, ...),
 *      and execs the bot's command;
 *   3. says "run SERIAL PID", drops its own capabilities, waits for the bot and says
 *      "end SERIAL STATUS" (the exit code, or 128 + the signal, as a shell says it).
 * The launcher ignores SIGCHLD: its monitors are reaped by the kernel, so none of their
 * counts (page faults, CPU) add up in the launcher from game to game.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>

#define IO "/arena-io/"
#define NO_LAUNCH 97 /* the exit code when its pipes are not arena's */

static int status_fd = -1;

static void say(const char *format, long a, long b) {
    char line[64];
    int n = snprintf(line, sizeof line, format, a, b);
    if (n > 0 && write(status_fd, line, (size_t)n) < 0) { /* arena is gone: nothing to do */ }
}

/* Open an arena pipe: a FIFO of root's, 0600 (neither the image nor a bot can make one). */
static int open_own_pipe(const char *path, int flags) {
    struct stat st;
    int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & 077) != 0) {
        exit(NO_LAUNCH);
    }
    return fd;
}

/* The seccomp filter stacked on the bot's process. The container's capability set holds
 * CAP_SYS_ADMIN (for this launcher), which makes the engine's default filter allow the
 * system calls below; the bot has no capability, so most would fail anyway, but some work
 * without one (a user namespace would give it capabilities of its own). Denied here, they
 * are what they are in a cold container's bot. clone3 says ENOSYS (as the engine's filter
 * says without CAP_SYS_ADMIN): libc then falls back on clone, whose namespace flags are
 * denied. io_uring's three calls are denied too, as Docker's default profile denies them
 * (since Docker 25). Another architecture's or the x32 ABI's calls are all denied. */
#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
                 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
                  CLONE_NEWPID | CLONE_NEWNET)
#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "arena-launcher: an architecture this filter does not know"
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_open_tree
#define __NR_open_tree 428
#define __NR_move_mount 429
#define __NR_fsopen 430
#define __NR_fsconfig 431
#define __NR_fsmount 432
#define __NR_fspick 433
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#define __NR_io_uring_enter 426
#define __NR_io_uring_register 427
#endif
#ifndef __NR_quotactl_fd
#define __NR_quotactl_fd 443
#endif

static int stack_filter(void) {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
        DENY(__NR_unshare), DENY(__NR_setns), DENY(__NR_mount), DENY(__NR_umount2),
        DENY(__NR_pivot_root), DENY(__NR_bpf), DENY(__NR_fanotify_init),
        DENY(__NR_lookup_dcookie), DENY(__NR_name_to_handle_at), DENY(__NR_perf_event_open),
        DENY(__NR_quotactl), DENY(__NR_quotactl_fd), DENY(__NR_setdomainname),
        DENY(__NR_sethostname), DENY(__NR_syslog), DENY(__NR_open_tree),
        DENY(__NR_move_mount), DENY(__NR_fsopen), DENY(__NR_fsconfig), DENY(__NR_fsmount),
        DENY(__NR_fspick), DENY(__NR_mount_setattr),
        /* io_uring: a second way into the kernel that the filter cannot see into, denied by
         * Docker's default profile since Docker 25 (an older engine's allows it) */
        DENY(__NR_io_uring_setup), DENY(__NR_io_uring_enter), DENY(__NR_io_uring_register),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
        /* clone's flags: the first argument (s390 swaps them; not built for it) */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_FLAGS, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {.len = sizeof code / sizeof code[0], .filter = code};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0);
}

static int drop_capabilities(void) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    return (int)syscall(SYS_capset, &header, data);
}

static void fail(int err_fd, const char *what) {
    char line[256];
    int n = snprintf(line, sizeof line, "arena-launcher: %s: %s\n", what, strerror(errno));
    if (err_fd >= 0 && n > 0 && write(err_fd, line, (size_t)n) < 0) { /* nowhere to say it */ }
    _exit(127);
}

/* The bot's process: everything it keeps of the launcher is its namespaces and cgroup. */
static void become_bot(const char *token, uid_t uid, char **command) {
    char path[sizeof IO + 64];
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "1000", 4) != 4) fail(-1, "oom_score_adj");
    close(fd);
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) fail(-1, "bounding set");
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        fail(-1, "ambient set");
    gid_t group = (gid_t)uid;
    if (setgroups(1, &group) != 0 || setresgid(group, group, group) != 0 ||
        setresuid(uid, uid, uid) != 0)
        fail(-1, "becoming the bot's user");
    if (drop_capabilities() != 0) fail(-1, "capabilities");  /* the inheritable set */
    /* As the bot: stdin first, as a shell's `<in >out 2>err` (arena holds the other ends). */
    const char *suffix[3] = {".in", ".out", ".err"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, IO "%s%s", token, suffix[i]);
        fd = open(path, (i == 0 ? O_RDONLY : O_WRONLY) | O_NOFOLLOW);
        if (fd < 0) fail(i == 2 ? -1 : 2, path);
        if (fd != i) {
            if (dup2(fd, i) < 0) fail(-1, "dup2");
            close(fd);
        }
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || stack_filter() != 0) fail(2, "seccomp");
    execvp(command[0], command);
    fail(2, command[0]);
}

/* The fresh network namespace's loopback, up (as a container's is); 0, else an errno. */
static int loopback_up(void) {
    struct ifreq request;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    memset(&request, 0, sizeof request);
    strcpy(request.ifr_name, "lo");
    if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &request) != 0) return errno;
    request.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(fd, SIOCSIFFLAGS, &request) != 0) return errno;
    close(fd);
    return 0;
}

static void monitor(long serial, const char *token, uid_t uid, char **command) {
    signal(SIGCHLD, SIG_DFL);
    int failed = unshare(CLONE_NEWNET | CLONE_NEWIPC) != 0 ? errno : loopback_up();
    if (failed) {
        say("fail %ld %ld\n", serial, failed);
        _exit(NO_LAUNCH);
    }
    pid_t bot = fork();
    if (bot < 0) {
        say("fail %ld %ld\n", serial, errno);
        _exit(NO_LAUNCH);
    }
    if (bot == 0) become_bot(token, uid, command);
    say("run %ld %ld\n", serial, (long)bot);
    drop_capabilities();
    int status;
    while (waitpid(bot, &status, 0) < 0) {
        if (errno != EINTR) _exit(0);
    }
    say("end %ld %ld\n", serial, WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
    _exit(0);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: arena-launcher BOT_COMMAND...\n");
        return 2;
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0 && null != 0) {
        dup2(null, 0);
        close(null);
    }
    int launch_fd = open_own_pipe(IO "launch", O_RDWR);
    status_fd = open_own_pipe(IO "status", O_WRONLY);
    /* Can a game's namespaces be made here (an engine's filter or a security module may
     * forbid it)? Tried once in a child; if not, arena starts this slot's processes cold. */
    pid_t trial = fork();
    if (trial == 0) {
        int failed = unshare(CLONE_NEWNET | CLONE_NEWIPC) != 0 ? errno : loopback_up();
        _exit(failed > 0 && failed < 256 ? failed : (failed ? 255 : 0));
    }
    int trial_status;
    if (trial < 0 || waitpid(trial, &trial_status, 0) != trial || !WIFEXITED(trial_status) ||
        WEXITSTATUS(trial_status) != 0) {
        say("unsupported %ld %ld\n", trial > 0 && WIFEXITED(trial_status) ? WEXITSTATUS(trial_status) : 0, 0);
        return NO_LAUNCH;
    }
    signal(SIGCHLD, SIG_IGN); /* monitors are reaped by the kernel, counted nowhere */
    say("ready\n", 0, 0);
    char buffer[256];
    size_t held = 0;
    for (;;) {
        ssize_t got = read(launch_fd, buffer + held, sizeof buffer - 1 - held);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        held += (size_t)got;
        buffer[held] = 0;
        char *line = buffer, *end;
        while ((end = memchr(line, '\n', held - (size_t)(line - buffer))) != NULL) {
            *end = 0;
            long serial, uid;
            char token[33];
            int n = -1;
            if (sscanf(line, "%ld %32[0-9a-f] %ld%n", &serial, token, &uid, &n) == 3 &&
                n == (int)strlen(line) && uid > 0 && uid < 4294967295L) {
                pid_t child = fork();
                if (child == 0) {
                    close(launch_fd);
                    monitor(serial, token, (uid_t)uid, argv + 1);
                }
                if (child < 0) say("fail %ld %ld\n", serial, errno);
            }
            line = end + 1;
        }
        held -= (size_t)(line - buffer);
        memmove(buffer, line, held);
        if (held == sizeof buffer - 1) held = 0; /* no line is that long: not arena's */
    }
}
