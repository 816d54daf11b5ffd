# SPDX-License-Identifier: Apache-2.0
# The agent of the image-config tests (debootstrap.bash's agent_image): a JSON request on
# stdin, and on stdout one JSON line of what it was started with, to compare `hutch sandbox`
# with `docker run` on the same image.
import json
import os
import sys

request = json.load(sys.stdin)
print(json.dumps({
    "argv": sys.argv,
    "executable": sys.executable,
    "prefix": sys.prefix,
    "cwd": os.getcwd(),
    "uid": os.getuid(),
    "gid": os.getgid(),
    "env": dict(os.environ),
    "request": request,
}, sort_keys=True))
