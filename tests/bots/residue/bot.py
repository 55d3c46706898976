"""Test probe (not a game bot): how a bot is confined, what state it can leave behind in its
container, and whether a later process finds any state left there.

It reads one JSON request per line, [operation, argument...], and answers one JSON line.
It never ends on its own. Operations:
- ["confinement"]: what it is and may do, read from inside: /proc/self/status (ids,
  capabilities, no-new-privileges, seccomp), its rlimits, its cgroup's limits, the mount
  of /tmp, the network interfaces, and the error names of writing /, /bot and /arena-io,
  of a TCP connection off the machine, of signalling and ptracing process 1, of the
  kernel keyring, of a new user namespace, a mount, clone3, clone with CLONE_NEWUSER,
  setns, bpf, perf_event_open and io_uring's three calls; its open files, the error names of opening the warm launcher's pipes,
  and of signalling every process of another uid.
- ["plant", TOKEN]: leave state everywhere it can: files (a file, a nested folder, a link, a
  pipe) in /tmp and /dev/shm, a POSIX message queue and a POSIX semaphore, SysV shared
  memory, a semaphore set and a message queue (holding a message), a background child,
  a detached grandchild (setsid, double fork) listening on an abstract Unix socket and on
  a loopback TCP port, a changed environment variable; and it counts up what a successor
  could read: 30 more processes (the pid counter), 30 more files (inode numbers), a
  closed TCP connection. Answers what it left (a look), each checked from here.
- ["look", TOKEN]: everything of that kind it finds (any entry of /tmp, /dev/shm and
  /dev/mqueue, every SysV object, its message queue by name (mq_open: a game's own IPC
  namespace has its own, not the one at /dev/mqueue), every other process of its uid, the environment
  variable, the two sockets), its own pid, the inode number a new file gets in /tmp and
  /dev/shm, and every TCP socket of its network namespace. A fresh process finds nothing,
  and the same pid and inode numbers as the first process of a fresh container.
Standard library only (ctypes for the IPC calls).
"""

import ctypes
import errno
import json
import os
import socket
import sys
import tempfile
import time

libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
PLACES = ("/tmp", "/dev/shm", "/dev/mqueue")
VARIABLE = "ARENA_RESIDUE"


def error_name(action):
    """'ok' if `action()` succeeds, else the errno name of its failure."""
    try:
        action()
        return "ok"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error))


def check(result, what):
    if result == -1 or result is None:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")
    return result


def key_of(token):
    return 0x5E000000 + sum(token.encode()) % 0xFFFF


def port_of(token):
    return 40000 + sum(token.encode()) % 10000


def read(path):
    try:
        with open(path) as source:
            return source.read().strip()
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error))


def confinement():
    status = {}
    for line in read("/proc/self/status").splitlines():
        name, _, value = line.partition(":")
        if name in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                    "NoNewPrivs", "Seccomp"):
            status[name] = value.split()
    limits = {}
    for line in read("/proc/self/limits").splitlines()[1:]:
        name = line[:26].strip()
        limits[name] = line[26:].split()[:2]
    mounts = [line.split() for line in read("/proc/self/mounts").splitlines()]

    def write(path):
        with open(path, "w") as sink:
            sink.write("x")

    def connect_out():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
            client.settimeout(2)
            client.connect(("192.0.2.1", 80))

    def signal_init():
        os.kill(1, 0)

    def ptrace_init():
        check(None if libc.ptrace(16, 1, None, None) != 0 else 0, "ptrace")  # PTRACE_ATTACH

    def user_namespace():
        check(libc.unshare(0x10000000), "unshare")  # CLONE_NEWUSER: capabilities of its own

    def mount_tmp():
        check(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None), "mount")

    def clone3():
        check(libc.syscall(435, None, 0), "clone3")  # x86_64's numbers, here and below

    def clone_new_user():
        # clone(CLONE_NEWUSER | SIGCHLD) with no stack: a fork, if it were allowed
        child = check(libc.syscall(56, 0x10000000 | 17, None, None, None, None), "clone")
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)

    def enter_namespace():
        own = os.open("/proc/self/ns/net", os.O_RDONLY)
        try:
            check(libc.syscall(308, own, 0), "setns")
        finally:
            os.close(own)

    def bpf():
        attributes = ctypes.create_string_buffer(128)
        check(libc.syscall(321, 0, attributes, 128), "bpf")  # BPF_MAP_CREATE

    def perf_event():
        attributes = ctypes.create_string_buffer(128)  # PERF_TYPE_HARDWARE, cycles
        ctypes.c_uint32.from_buffer(attributes, 4).value = 128  # its size
        check(libc.syscall(298, attributes, 0, -1, -1, 0), "perf_event_open")

    def io_uring_setup():
        parameters = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
        os.close(check(libc.syscall(425, 4, parameters), "io_uring_setup"))

    def io_uring_enter():  # on no ring (fd -1): EBADF where the call is allowed
        check(libc.syscall(426, -1, 0, 0, 0, None, 0), "io_uring_enter")

    def io_uring_register():
        check(libc.syscall(427, -1, 0, None, 0), "io_uring_register")

    def keyring():
        # add_key("user", "arena", "x", 1, KEY_SPEC_SESSION_KEYRING): syscall 248 on x86_64
        check(-1 if libc.syscall(248, b"user", b"arena", b"x", 1, -3) < 0 else 0, "add_key")

    return {
        "status": status,
        "limits": {name: limits.get(name) for name in (
            "Max cpu time", "Max file size", "Max open files", "Max core file size")},
        "cgroup": {
            "memory": read("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
            "memory+swap": read("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"),
            "pids": read("/sys/fs/cgroup/pids/pids.max"),
            "cpu_quota": read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
        },
        "tmp": next((m[3] for m in mounts if m[1] == "/tmp"), None),
        "root": next((m[3].split(",")[0] for m in mounts if m[1] == "/"), None),
        "interfaces": sorted(os.listdir("/sys/class/net")),
        "write /": error_name(lambda: write("/probe")),
        "write /bot": error_name(lambda: write("/bot/probe")),
        "write /arena-io": error_name(lambda: write("/arena-io/probe")),
        "connect off the machine": error_name(connect_out),
        "signal process 1": error_name(signal_init),
        "ptrace process 1": error_name(ptrace_init),
        "kernel keyring": error_name(keyring),
        "new user namespace": error_name(user_namespace),
        "mount": error_name(mount_tmp),
        "clone3": error_name(clone3),
        "clone a new user namespace": error_name(clone_new_user),
        "setns": error_name(enter_namespace),
        "bpf": error_name(bpf),
        "perf_event_open": error_name(perf_event),
        "io_uring_setup": error_name(io_uring_setup),
        "io_uring_enter": error_name(io_uring_enter),
        "io_uring_register": error_name(io_uring_register),
        "HOME": os.environ.get("HOME"),
        "cwd": os.getcwd(),
        "open files": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
        "open the launcher's pipes": {
            name: error_name(lambda name=name: os.close(
                os.open(f"/arena-io/{name}", os.O_WRONLY | os.O_NONBLOCK)))
            for name in ("launch", "status")
        },
        "signal another uid's process": sorted({
            error_name(lambda pid=pid: os.kill(pid, 0))
            for pid in others_pids()
        }),
    }


def others_pids():
    """The pids of every process of the container not of this process's uid."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid != os.getuid():
                    found.append(int(name))
            except OSError:
                pass
    return found


def sysv_objects():
    found = {}
    for kind in ("shm", "sem", "msg"):
        rows = read(f"/proc/sysvipc/{kind}").splitlines()[1:]
        found[kind] = [row.split()[1] for row in rows]
    return found


def other_processes():
    """(pid, uid, command) of every process besides this one that has its uid."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            uid = int(read(f"/proc/{name}/status").split("Uid:")[1].split()[0])
            command = read(f"/proc/{name}/cmdline").replace("\0", " ").strip()
        except (IndexError, ValueError):
            continue
        if uid == os.getuid():
            found.append([int(name), uid, command])
    return found


def socket_answers(token):
    def abstract():
        with socket.socket(socket.AF_UNIX) as client:
            client.connect("\0arena-residue-" + token)

    def tcp():
        with socket.socket() as client:
            client.settimeout(2)
            client.connect(("127.0.0.1", port_of(token)))

    return {"abstract": error_name(abstract), "tcp": error_name(tcp)}


def new_file_inodes():
    """The inode number a new file gets in /tmp and in /dev/shm (the file is removed)."""
    inodes = {}
    for place in ("/tmp", "/dev/shm"):
        fd, path = tempfile.mkstemp(dir=place)
        inodes[place] = os.fstat(fd).st_ino
        os.close(fd)
        os.unlink(path)
    return inodes


def tcp_sockets():
    """Every TCP socket of this network namespace (any state), as /proc/net lists them."""
    rows = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        rows += [" ".join(row.split()[1:4]) for row in read(table).splitlines()[1:]]
    return rows


def look(token):
    return {
        "files": {place: sorted(os.listdir(place)) if os.path.isdir(place) else None
                  for place in PLACES},
        "sysv": sysv_objects(),
        "mqueue": error_name(lambda: os.close(check(
            libc.mq_open(f"/residue-{token}".encode(), os.O_RDONLY), "mq_open"))),
        "processes": other_processes(),
        "environment": os.environ.get(VARIABLE),
        "sockets": socket_answers(token),
        "pid": os.getpid(),
        "inodes": new_file_inodes(),
        "tcp": tcp_sockets(),
    }


def detached_listener(token):
    """Fork twice (setsid between), leaving a grandchild holding two listening sockets."""
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            if os.fork() > 0:
                os._exit(0)
            null = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            unix = socket.socket(socket.AF_UNIX)
            unix.bind("\0arena-residue-" + token)
            unix.listen()
            tcp = socket.socket()
            tcp.bind(("127.0.0.1", port_of(token)))
            tcp.listen()
            while True:
                time.sleep(3600)
        finally:
            os._exit(1)
    os.waitpid(child, 0)


def plant(token):
    left = []
    for place in ("/tmp", "/dev/shm"):
        with open(f"{place}/residue-{token}", "w") as sink:
            sink.write(token)
        os.makedirs(f"{place}/folder-{token}/nested")
        with open(f"{place}/folder-{token}/nested/file", "w") as sink:
            sink.write(token)
        os.symlink("/etc/passwd", f"{place}/link-{token}")
        os.mkfifo(f"{place}/pipe-{token}")
        left.append(place)
    mq_open = libc.mq_open
    mq_open.restype = ctypes.c_int
    queue = check(mq_open(f"/residue-{token}".encode(), os.O_CREAT | os.O_RDWR, 0o600, None), "mq_open")
    check(libc.mq_send(queue, token.encode(), len(token), 0), "mq_send")
    sem_open = libc.sem_open
    sem_open.restype = ctypes.c_void_p
    check(sem_open(f"/residue-{token}".encode(), os.O_CREAT, 0o600, 1), "sem_open")
    key = key_of(token)
    check(libc.shmget(key, 4096, IPC_CREAT | 0o600), "shmget")
    check(libc.semget(key, 1, IPC_CREAT | 0o600), "semget")
    queue_id = check(libc.msgget(key, IPC_CREAT | 0o600), "msgget")
    message = ctypes.create_string_buffer(ctypes.sizeof(ctypes.c_long) + len(token))
    ctypes.c_long.from_buffer(message).value = 1
    message[ctypes.sizeof(ctypes.c_long):] = token.encode()
    check(libc.msgsnd(queue_id, message, len(token), 0), "msgsnd")
    background = os.fork()
    if background == 0:
        try:
            while True:
                time.sleep(3600)
        finally:
            os._exit(1)
    detached_listener(token)
    os.environ[VARIABLE] = token
    deadline = time.monotonic() + 5
    while socket_answers(token) != {"abstract": "ok", "tcp": "ok"} and time.monotonic() < deadline:
        time.sleep(0.01)
    # Counters a successor could read: the pid counter (30 more processes), tmpfs inode
    # numbers (30 more files), a closed TCP connection (its TIME_WAIT would name its ports).
    for _ in range(30):
        short = os.fork()
        if short == 0:
            os._exit(0)
        os.waitpid(short, 0)
    for place in ("/tmp", "/dev/shm"):
        for number in range(30):
            with open(f"{place}/count-{number}", "w"):
                pass
            os.unlink(f"{place}/count-{number}")
    with socket.create_connection(("127.0.0.1", port_of(token)), timeout=2) as client:
        client.sendall(b"x")
    return look(token)


def attempt(operation, *args):
    if operation == "confinement":
        return confinement()
    if operation == "plant":
        return plant(*args)
    if operation == "look":
        return look(*args)
    raise ValueError(f"unknown operation {operation!r}")


for line in sys.stdin:
    try:
        answer = attempt(*json.loads(line))
    except OSError as error:
        answer = {"error": errno.errorcode.get(error.errno, str(error)), "detail": str(error)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
