"""The local sandbox's exec shim: the program its Popen starts for each bot (run as
`python -I -S local_shim.py PLAN`, PLAN the JSON `arena.sandbox.local` makes; never
imported by arena).

It joins the bot's cgroup and sets the limits; then either becomes the bot (no
namespaces) or creates the namespaces and forks their init, which builds the bot's file
system view (`arena.sandbox.local.mount_steps`) and forks the bot. Only the bot gets its
stdin/stdout pipes. The standard library only (`-S`: no site packages).
"""

import json
import os
import re
import resource
import signal
import sys

plan: dict = {}  # the plan (set by main)
bot_in = bot_out = status_fd = None  # the bot's pipe ends and the init's status pipe
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 32, 4096, 16384, 1 << 18, 1 << 21
KEPT = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048  # the same bits in statvfs's f_flag


def fail(code, text):
    os.write(2, ("arena: %s\n" % text).encode())
    os._exit(code)


def load_libc():
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)


def run(argv):
    # Like execvp, but a folder of PATH this user may not enter hides what is in it (as
    # if absent) instead of making "permission denied" the answer.
    name = argv[0]
    paths = [name] if "/" in name else [
        os.path.join(folder or ".", name) for folder in os.environ.get("PATH", os.defpath).split(":")
    ]
    problem, closed = None, False
    for path in paths:
        try:
            os.execv(path, argv)
        except OSError as error:
            if len(paths) == 1 or os.path.exists(path):
                problem = problem or error
            elif isinstance(error, PermissionError):
                closed = True
    words = problem.strerror if problem else "No such file or directory"
    if plan["user"] is not None and isinstance(problem, PermissionError):
        words += (" (bots run as user nobody when arena runs as root: the program and every"
                  " folder on the way to it must be open to others)")
    elif plan["user"] is not None and closed and not problem:
        words = ("not found in the folders of PATH open to user nobody, who runs the bots"
                 " when arena runs as root")
    fail(127, "cannot run %r: %s" % (name, words))


def become_bot():
    os.dup2(bot_in, 0)
    os.dup2(bot_out, 1)
    for fd in (bot_in, bot_out, status_fd):
        if fd is not None:
            os.close(fd)
    ctypes, libc = load_libc()
    if plan["user"] is not None:
        os.setgroups([])
        os.setgid(plan["user"])
        os.setuid(plan["user"])
    keyctl, program = plan["keyctl"], plan["syscall_filter"]
    if keyctl is not None:
        # A fresh session keyring: none of arena's, nor nobody's shared one (best effort:
        # the filter below closes the keyring anyway).
        libc.syscall(keyctl, 1, None)  # KEYCTL_JOIN_SESSION_KEYRING, no name
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: setuid programs give nothing
        fail(124, "cannot set no_new_privs: %s" % os.strerror(ctypes.get_errno()))
    if program is not None:
        # add_key, request_key and keyctl refused (arena.sandbox.keyring)
        class Instruction(ctypes.Structure):
            _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                        ("k", ctypes.c_uint32)]

        class Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]

        code = (Instruction * len(program))(*[Instruction(*step) for step in program])
        if libc.prctl(22, 2, ctypes.byref(Program(len(program), code)), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
            fail(124, "cannot install the system-call filter that closes the kernel keyring: %s"
                 % os.strerror(ctypes.get_errno()))
    if plan["argv"] is None:
        os._exit(0)  # the probe: everything worked
    run(plan["argv"])


def build_view(libc, ctypes):
    # In the new mount namespace, as root: the steps of `mount_steps`.
    def mount(source, target, kind, flags, data=None):
        if libc.mount(source and source.encode(), target.encode(), kind and kind.encode(),
                      flags, data and data.encode()) != 0:
            error = ctypes.get_errno()
            raise OSError(error, os.strerror(error), target)

    def readonly(target):
        # Only this mount's flag: the file system stays writable elsewhere. nosuid and the
        # like are kept (a remount without them would clear them).
        flags = os.statvfs(target).f_flag
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | (flags & KEPT)
              | (MS_RELATIME if flags & 4096 else 0))

    def writable(target):
        # A bind made read-only by "readonly_all" (binds copy their source's flags), made
        # writable again: this mount only.
        flags = os.statvfs(target).f_flag
        mount(None, target, None, MS_REMOUNT | MS_BIND | (flags & KEPT)
              | (MS_RELATIME if flags & 4096 else 0))

    # What is bound into the view is opened first, before anything covers it: the folder's
    # source (the bot process's private copy, or the folder itself for a build) and the
    # paths inside it that stay writable (a build's build/).
    folder = plan["folder"]
    keep = os.open(plan.get("source") or folder, os.O_PATH | os.O_DIRECTORY)
    kept = {step[1]: os.open(step[1], os.O_PATH | os.O_DIRECTORY)
            for step in plan["mounts"] if step[0] == "bind_writable"}
    os.umask(0o022)
    for step in plan["mounts"]:
        action, args = step[0], step[1:]
        if action == "private":
            mount("none", "/", None, MS_REC | MS_PRIVATE)
        elif action == "readonly_all":
            with open("/proc/self/mountinfo") as table:
                points = [line.split()[4] for line in table]
            for point in points:
                point = re.sub(r"\\([0-7]{3})", lambda code: chr(int(code.group(1), 8)), point)  # \040: a space
                try:
                    readonly(point)
                except OSError as error:
                    # A mount hidden under a later one (or a FUSE mount closed to root)
                    # cannot be reached, so it cannot be written either.
                    if point == "/" or error.errno not in (2, 13, 20, 22):
                        raise
        elif action == "proc":
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        elif action == "tmpfs":
            target, data, read_only = args
            try:
                mount("tmpfs", target, "tmpfs",
                      MS_NOSUID | MS_NODEV | MS_NOEXEC | (MS_RDONLY if read_only else 0), data)
            except FileNotFoundError:
                pass  # gone since arena looked: nothing left to hide
        elif action == "bind_folder":
            os.makedirs(folder, mode=0o755, exist_ok=True)
            mount("/proc/self/fd/%d" % keep, folder, None, MS_BIND | MS_REC)
            readonly(folder)
        elif action == "bind_writable":
            mount("/proc/self/fd/%d" % kept[args[0]], args[0], None, MS_BIND)
            writable(args[0])
        elif action == "readonly":
            readonly(args[0])
        elif action == "null":
            mount("/dev/null", args[0], None, MS_BIND)
            readonly(args[0])
    for fd in (keep, *kept.values()):
        os.close(fd)
    os.chdir(folder)


def main():
    global plan, bot_in, bot_out, status_fd
    plan = json.loads(sys.argv[1])
    bot_in, bot_out, status_fd = plan["stdin_fd"], plan["stdout_fd"], plan["status_fd"]
    try:
        for procs in plan["cgroup_procs"]:
            with open(procs, "w") as sink:
                sink.write(str(os.getpid()))
    except OSError as error:
        fail(121, "cannot join the cgroup: %s" % error)
    try:
        with open("/proc/self/oom_score_adj", "w") as sink:
            sink.write("1000")
    except OSError:
        pass
    for name, (soft, hard) in plan["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    if not plan["isolate"]:
        become_bot()

    ctypes, libc = load_libc()
    if libc.unshare(plan["namespaces"]) != 0:
        fail(121, "cannot create the bot's namespaces: %s" % os.strerror(ctypes.get_errno()))
    init = os.fork()
    if init:
        # Outside the new PID namespace, holding none of the bot's pipes: it lives as long as
        # the init and ends as the init did (arena waits for this process).
        for fd in (bot_in, bot_out, status_fd):
            os.close(fd)
        status = os.waitpid(init, 0)[1]
        if os.WIFSIGNALED(status):
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.waitstatus_to_exitcode(status) & 255)

    # The init: PID 1 of the bot's namespace. When the shim is killed, so is the init, and
    # with it the whole namespace.
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    try:
        build_view(libc, ctypes)
    except OSError as error:
        fail(122, "cannot build the bot's view of the file system: %s" % error)
    bot = os.fork()
    if bot == 0:
        become_bot()
    for fd in (bot_in, bot_out, 0, 1, 2):
        os.close(fd)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            status = 0
            break
        if pid == bot:
            break
    os.write(status_fd, b"%d\n" % status)
    os._exit(0)


if __name__ == "__main__":
    main()
