#!/usr/bin/env python3
"""A forger of pool requests (tests/security/pool.bats): what a root process that hands its
connection to the pool on to another process, or a root caller that does not go through
`hutch sandbox`, could send a pooled sandbox's supervisor (which acts as root).

  pool-forge.py capture SOCK OUT       listen at SOCK, save the first request a real
                                       client sends there (its bytes) to OUT
  pool-forge.py send REQ SOCK AS MODE ARGS...
      connect to the pool's SOCK as root, then send REQ, amended, as uid AS (0: root
      itself; else a child that took the connection and dropped to that uid):
        chown TARGET          the workspace (fd and tree) is TARGET, --workspace-owner AS:AS
        report DIR NAME       the report is NAME in DIR (fd)
        stdio DIR             stdin is DIR (an O_RDONLY directory fd)
  Prints "reply K: MESSAGE" (K: the pool's answer, C, D or X) or "reply none".
"""
import os
import socket
import struct
import sys

HEAD = "<5I4xqQdddd"  # struct req_head (rt-sandbox-pool-msg.c)
HEAD_LEN = struct.calcsize(HEAD)
REQ_COMMAND, REQ_WS, REQ_OWNER, REQ_REPORT_DIR = 1, 2, 4, 8


def capture(path, out):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(path)
    s.listen(1)
    c, _ = s.accept()
    msg, anc, _, _ = c.recvmsg(200000, socket.CMSG_SPACE(4 * 32))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            for (fd,) in struct.iter_unpack("i", data[: len(data) - len(data) % 4]):
                os.close(fd)
    with open(out, "wb") as f:
        f.write(msg)


def strings(body):
    return [x for x in body[HEAD_LEN:].split(b"\0") if x]


def amend(req, mode, args):
    h = list(struct.unpack(HEAD, req[:HEAD_LEN]))
    keep = [x for x in strings(req) if x[:1] in b"aesc"]  # argv, env, shape, cwd
    null = os.open("/dev/null", os.O_RDWR)
    fds = [null, null, null]
    h[1] = REQ_COMMAND
    if mode == "chown":
        fd = os.open(args[0], os.O_PATH)
        h[1] |= REQ_WS | REQ_OWNER
        h[2] = h[3] = os.getuid() or 1234
        keep.append(b"w" + args[0].encode())
        fds += [fd, fd]
    elif mode == "report":
        fd = os.open(args[0], os.O_PATH | os.O_DIRECTORY)
        h[1] |= REQ_REPORT_DIR
        keep += [b"r" + args[0].encode() + b"/" + args[1].encode(), b"n" + args[1].encode()]
        fds.append(fd)
    elif mode == "stdio":
        fds[0] = os.open(args[0], os.O_RDONLY | os.O_DIRECTORY)
    h[4] = 0  # no binds
    return struct.pack(HEAD, *h) + b"".join(x + b"\0" for x in keep), fds


def send(req, sock, uid, mode, args):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)  # as root: SO_PEERCRED says 0
    pid = os.fork()
    if pid == 0:
        if uid:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        body, fds = amend(req, mode, args)
        try:
            s.sendmsg([body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))])
            r = s.recv(100000)
        except OSError as e:
            print("reply error:", e)
            os._exit(0)
        if not r:
            print("reply none")
        else:
            text = b" ".join(x for x in r[8:].split(b"\0") if len(x) > 3)
            print("reply %s: %s" % (chr(r[0]), text.decode(errors="replace")))
        sys.stdout.flush()
        os._exit(0)
    s.close()
    os.waitpid(pid, 0)


if __name__ == "__main__":
    if sys.argv[1] == "capture":
        capture(sys.argv[2], sys.argv[3])
    else:
        with open(sys.argv[2], "rb") as f:
            send(f.read(), sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6:])
