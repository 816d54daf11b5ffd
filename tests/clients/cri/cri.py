#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
#
# A small CRI client for tests/clients/cri.bats: it talks to a CRI runtime service (containerd's
# CRI plugin) over its unix socket the way the kubelet does, one RPC per subcommand, and prints
# the reply as JSON (proto field names) for jq. Requests are read as JSON too, in the proto3
# JSON mapping of the CRI messages (PodSandboxConfig, ContainerConfig, ...), so a test writes
# the config it means with the fields named as in api.proto.
#
#   cri.py gen DIR                          generate the python stubs from api.proto into DIR
#   cri.py [--socket S] [--stubs DIR] CMD   CMD is one of:
#     version | status | images
#     runp POD.json [--runtime HANDLER]     RunPodSandbox; prints {"pod_sandbox_id": ...}
#     stopp POD | rmp POD | inspectp POD | pods
#     create POD CTR.json POD.json          CreateContainer; prints {"container_id": ...}
#     start ID | stop ID [--timeout S] | rm ID | inspect ID | ps [--pod POD] [--all]
#     exec-sync ID [--timeout S] -- CMD...  ExecSync; prints {"stdout", "stderr", "exit_code"}
#     exec ID [--tty] [--stdin TEXT] [--size COLSxROWS] -- CMD...
#                                           Exec, then its stream (below); prints the same JSON
#     stats ID | update ID RESOURCES.json | logs-path ID
#     serve                                 the commands, one per line of stdin (see serve())
#
# The stubs are not committed: `gen` makes them with grpc_tools.protoc (python3-grpc-tools)
# from the vendored api.proto, minus its gogoproto options (a Go code generator's, which
# protoc would need gogo.proto for and python does not use).
#
# exec is the kubelet's streamed exec: the Exec RPC hands back a URL on containerd's streaming
# server, and the client upgrades a request to it to a WebSocket with the v4.channel.k8s.io
# subprotocol (what `kubectl exec` reaches through the API server). Each binary message's first
# byte is its channel: 0 stdin, 1 stdout, 2 stderr, 3 the status (a metav1.Status document,
# with the exit code in details.causes), 4 terminal resizes. v4 has no way to close stdin, so
# a command given --stdin must stop reading by itself (head -n 1, read). Needs python3-websocket.
#
# Exit status: 0 on success, 1 when the RPC failed (its gRPC status and message on stderr),
# 2 on a usage error. exec-sync exits 0 whatever the command's exit code: it is in the JSON.

import argparse
import contextlib
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def gen(out):
    from grpc_tools import protoc

    os.makedirs(out, exist_ok=True)
    with open(os.path.join(HERE, "api.proto")) as f:
        src = f.read()
    # The import of gogo.proto and the file options that use it: Go-only.
    src = "\n".join(l for l in src.split("\n") if "gogoproto" not in l) + "\n"
    with open(os.path.join(out, "api.proto"), "w") as f:
        f.write(src)
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + out, "-I" + include, "--python_out=" + out,
                      "--grpc_python_out=" + out, os.path.join(out, "api.proto")])
    if rc != 0:
        sys.exit("cri.py: protoc failed (%d)" % rc)


def load_stubs(stubs):
    if not os.path.exists(os.path.join(stubs, "api_pb2_grpc.py")):
        gen(stubs)
    sys.path.insert(0, stubs)
    import api_pb2
    import api_pb2_grpc

    return api_pb2, api_pb2_grpc


def stream_exec(url, stdin, size, timeout):
    """The streamed half of Exec: {"stdout", "stderr", "exit_code", "status"}."""
    import websocket

    ws = websocket.create_connection(url.replace("http", "ws", 1), timeout=timeout,
                                     subprotocols=["v4.channel.k8s.io"])
    if ws.subprotocol != "v4.channel.k8s.io":
        sys.exit("cri.py: the streaming server chose subprotocol %r" % ws.subprotocol)
    if size:
        cols, rows = (int(n) for n in size.split("x"))
        ws.send_binary(b"\x04" + json.dumps({"Width": cols, "Height": rows}).encode())
    if stdin is not None:
        ws.send_binary(b"\x00" + stdin.encode())
    got = {1: b"", 2: b"", 3: b""}
    while True:
        try:
            op, data = ws.recv_data()
        except websocket.WebSocketConnectionClosedException:
            break
        if op == websocket.ABNF.OPCODE_CLOSE:
            break
        if data and data[0] in got:
            got[data[0]] += data[1:]
    ws.close()
    status = json.loads(got[3]) if got[3] else {}
    code = 0
    if status.get("status") == "Failure":
        code = None
        for cause in status.get("details", {}).get("causes", []):
            if cause.get("reason") == "ExitCode":
                code = int(cause["message"])
    return {"stdout": got[1].decode(errors="replace"), "stderr": got[2].decode(errors="replace"),
            "exit_code": code, "status": status}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="cri.py")
    ap.add_argument("--socket", default=os.environ.get("CRI_SOCKET",
                                                       "/run/containerd/containerd.sock"))
    ap.add_argument("--stubs", default=os.environ.get("CRI_STUBS",
                                                      "/var/cache/hutch-cri/stubs"))
    ap.add_argument("--rpc-timeout", type=float, default=60.0)
    ap.add_argument("cmd")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    opts = ap.parse_args(argv)
    if opts.cmd == "serve":
        return serve(argv if argv is not None else sys.argv[1:])
    if opts.cmd == "gen":
        if len(opts.args) != 1:
            ap.error("gen DIR")
        gen(opts.args[0])
        return 0

    import grpc
    from google.protobuf import json_format

    pb, pb_grpc = load_stubs(opts.stubs)
    channel = grpc.insecure_channel("unix://" + opts.socket)
    rt = pb_grpc.RuntimeServiceStub(channel)
    img = pb_grpc.ImageServiceStub(channel)

    def out(msg, extra=None):
        d = json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                      including_default_value_fields=True)
        # A verbose status's info values are JSON documents themselves: inline them.
        info = d.get("info")
        if isinstance(info, dict):
            for k, v in info.items():
                try:
                    info[k] = json.loads(v)
                except ValueError:
                    pass
        if extra:
            d.update(extra)
        print(json.dumps(d, indent=1, sort_keys=True))

    def parse(path, cls):
        with open(path) as f:
            return json_format.Parse(f.read(), cls())

    def sub(*spec):
        p = argparse.ArgumentParser(prog="cri.py " + opts.cmd)
        for s in spec:
            if isinstance(s, tuple):
                p.add_argument(s[0], **s[1])
            else:
                p.add_argument(s)
        return p.parse_args(opts.args)

    t = opts.rpc_timeout
    c = opts.cmd
    if c == "version":
        out(rt.Version(pb.VersionRequest(), timeout=t))
    elif c == "status":
        out(rt.Status(pb.StatusRequest(verbose=True), timeout=t))
    elif c == "images":
        out(img.ListImages(pb.ListImagesRequest(), timeout=t))
    elif c == "runp":
        a = sub("config", ("--runtime", {"default": ""}))
        out(rt.RunPodSandbox(pb.RunPodSandboxRequest(
            config=parse(a.config, pb.PodSandboxConfig), runtime_handler=a.runtime), timeout=t))
    elif c == "stopp":
        a = sub("pod")
        out(rt.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=a.pod), timeout=t))
    elif c == "rmp":
        a = sub("pod")
        out(rt.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=a.pod), timeout=t))
    elif c == "inspectp":
        a = sub("pod")
        out(rt.PodSandboxStatus(pb.PodSandboxStatusRequest(pod_sandbox_id=a.pod, verbose=True),
                                timeout=t))
    elif c == "pods":
        out(rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=t))
    elif c == "create":
        a = sub("pod", "config", "pod_config")
        out(rt.CreateContainer(pb.CreateContainerRequest(
            pod_sandbox_id=a.pod, config=parse(a.config, pb.ContainerConfig),
            sandbox_config=parse(a.pod_config, pb.PodSandboxConfig)), timeout=t))
    elif c == "start":
        a = sub("id")
        out(rt.StartContainer(pb.StartContainerRequest(container_id=a.id), timeout=t))
    elif c == "stop":
        a = sub("id", ("--timeout", {"type": int, "default": 0}))
        out(rt.StopContainer(pb.StopContainerRequest(container_id=a.id, timeout=a.timeout),
                             timeout=t + a.timeout))
    elif c == "rm":
        a = sub("id")
        out(rt.RemoveContainer(pb.RemoveContainerRequest(container_id=a.id), timeout=t))
    elif c == "inspect":
        a = sub("id")
        out(rt.ContainerStatus(pb.ContainerStatusRequest(container_id=a.id, verbose=True),
                               timeout=t))
    elif c == "ps":
        a = sub(("--pod", {"default": ""}), ("--all", {"action": "store_true"}))
        f = pb.ContainerFilter(pod_sandbox_id=a.pod)
        if not a.all:
            f.state.state = pb.CONTAINER_RUNNING
        out(rt.ListContainers(pb.ListContainersRequest(filter=f), timeout=t))
    elif c == "exec-sync":
        a = sub("id", ("--timeout", {"type": int, "default": 0}), ("cmd", {"nargs": "+"}))
        cmd = a.cmd[1:] if a.cmd[0] == "--" else a.cmd
        r = rt.ExecSync(pb.ExecSyncRequest(container_id=a.id, cmd=cmd, timeout=a.timeout),
                        timeout=t + a.timeout)
        # bytes fields: as text, which is what the tests compare.
        print(json.dumps({"stdout": r.stdout.decode(errors="replace"),
                          "stderr": r.stderr.decode(errors="replace"),
                          "exit_code": r.exit_code}, indent=1, sort_keys=True))
    elif c == "exec":
        a = sub("id", ("--tty", {"action": "store_true"}), ("--stdin", {"default": None}),
                ("--size", {"default": None}), ("cmd", {"nargs": "+"}))
        cmd = a.cmd[1:] if a.cmd[0] == "--" else a.cmd
        r = rt.Exec(pb.ExecRequest(container_id=a.id, cmd=cmd, tty=a.tty,
                                   stdin=a.stdin is not None, stdout=True, stderr=not a.tty),
                    timeout=t)
        print(json.dumps(stream_exec(r.url, a.stdin, a.size, t), indent=1, sort_keys=True))
    elif c == "stats":
        a = sub("id")
        out(rt.ContainerStats(pb.ContainerStatsRequest(container_id=a.id), timeout=t))
    elif c == "update":
        a = sub("id", "resources")
        out(rt.UpdateContainerResources(pb.UpdateContainerResourcesRequest(
            container_id=a.id, linux=parse(a.resources, pb.LinuxContainerResources)),
            timeout=t))
    elif c == "logs-path":
        a = sub("id")
        r = rt.ContainerStatus(pb.ContainerStatusRequest(container_id=a.id), timeout=t)
        print(json.dumps({"log_path": r.status.log_path}))
    else:
        ap.error("unknown command " + c)
    return 0


def run(argv=None):
    """main, with a failed RPC as its status code and message on stderr: exit status 1."""
    try:
        return main(argv)
    except Exception as e:
        code = getattr(e, "code", None)
        if callable(code):
            print("cri.py: %s: %s" % (code().name, e.details()), file=sys.stderr)
            return 1
        raise


def serve(argv):
    """Commands on stdin, each argument followed by \\x1f and the command by \\x1e and a
    newline (an argument may hold newlines); after each, its stdout and a line of \\x1e and
    the exit status. Its stderr is ours. For a slow machine (the VM lane's TCG guests), where
    starting python and importing grpc takes seconds."""
    base = argv[:argv.index("serve")]
    pending = ""
    for line in sys.stdin:
        pending += line
        if not pending.endswith("\x1e\n"):
            continue
        args = pending[:-2].split("\x1f")
        pending = ""
        if args and args[-1] == "":
            args.pop()
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                rc = run(base + args)
        except SystemExit as e:  # argparse's usage errors
            rc = e.code if isinstance(e.code, int) else 2
        except Exception as e:  # noqa: BLE001 - reported, and the next command runs
            print("cri.py: %s" % e, file=sys.stderr)
            rc = 1
        text = out.getvalue()
        sys.stdout.write(text + ("" if text.endswith("\n") or not text else "\n"))
        sys.stdout.write("\x1e%d\n" % (rc or 0))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(run())
