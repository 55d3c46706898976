"""Test probe (not a game bot): what a process of a warm slot can read that an earlier
process of the slot could have counted up, and how it counts them up itself.

Each line it reads is a number N; it answers one JSON line: first what it reads (`look`),
then it counts N up everywhere it can (`push`), for its successor to read:
- loopback packet counters: /sys/class/net/lo/statistics, /proc/net/dev, /proc/net/snmp
  (N UDP datagrams to itself);
- SysV IPC ids: the id the kernel gives a new message queue, semaphore set and shared
  memory segment (N of each made and removed);
- its pid, the last pid of /proc/loadavg, and the inode number of a new file in /tmp and
  /dev/shm (N files made and removed);
- the names of its stdin, stdout and stderr (/proc/self/fd), its host name, and the
  processes it can see.
Standard library only (ctypes for the IPC calls).
"""

import ctypes
import json
import os
import socket
import sys

libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0


def lo_counters():
    statistics = "/sys/class/net/lo/statistics"
    found = {name: int(open(f"{statistics}/{name}").read())
             for name in ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes")}
    for line in open("/proc/net/dev"):
        if line.strip().startswith("lo:"):
            found["/proc/net/dev"] = line.split(":", 1)[1].split()
    udp = [line.split() for line in open("/proc/net/snmp") if line.startswith("Udp:")]
    found["udp"] = dict(zip(udp[0][1:], udp[1][1:]))
    return found


def sysv_ids(count=1):
    """The ids of `count` new objects of each kind (each removed at once)."""
    ids = {"msg": [], "sem": [], "shm": []}
    for _ in range(count):
        queue = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
        semaphores = libc.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o600)
        memory = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
        ids["msg"].append(queue)
        ids["sem"].append(semaphores)
        ids["shm"].append(memory)
        libc.msgctl(queue, IPC_RMID, None)
        libc.semctl(semaphores, 0, IPC_RMID)
        libc.shmctl(memory, IPC_RMID, None)
    return ids


def inodes(count=1):
    found = {}
    for place in ("/tmp", "/dev/shm"):
        for n in range(count):
            path = f"{place}/counted-{n}"
            with open(path, "w"):
                pass
            found[place] = os.stat(path).st_ino
            os.unlink(path)
    return found


def look():
    return {
        "lo": lo_counters(),
        "sysv": sysv_ids(),
        "pid": os.getpid(),
        "loadavg last pid": open("/proc/loadavg").read().split()[-1],
        "inodes": inodes(),
        "fd names": [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)],
        "hostname": socket.gethostname(),
        "processes": sorted(int(name) for name in os.listdir("/proc") if name.isdigit()),
    }


def push(count):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        for _ in range(count):
            udp.sendto(b"x", udp.getsockname())
            udp.recv(16)
    sysv_ids(count)
    inodes(count)


for line in sys.stdin:
    seen = look()
    push(int(line))
    print(json.dumps(seen), flush=True)
