"""Runs `openstack ...` commands (python3-openstackclient + python3-cyborgclient) in one process.

Reads {"endpoint": URL, "commands": [{"id", "token", "argv": [...]}, ...]} on stdin; every argument
may name an earlier command's JSON output as "{id.field}" (a list output: its first row). Prints
one JSON list: per command its id, exit code, stdout, stderr and parsed JSON output. One Python
start-up for the whole batch: each start of the CLI costs about two seconds.
"""
import contextlib
import io
import json
import re
import sys

from osc_lib.clientmanager import ClientCache
from openstackclient import shell
from openstackclient.common.clientmanager import ClientManager

PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+)\}")


def resolve(arg, results):
    def value(m):
        out = results[m.group(1)]["json"]
        row = out[0] if isinstance(out, list) else out
        return str(row[m.group(2)])
    return PLACEHOLDER.sub(value, arg)


def forget_clients():
    """osc_lib caches each service's client on the ClientManager class, across shells: the next
    command would reuse the previous one's token and microversion."""
    for cls in ClientManager.__mro__:
        for attr in vars(cls).values():
            if isinstance(attr, ClientCache):
                attr._handle = None


def main():
    spec = json.load(sys.stdin)
    results, report = {}, []
    for cmd in spec["commands"]:
        argv = ["--os-auth-type", "admin_token", "--os-token", cmd["token"], "--os-endpoint", spec["endpoint"]]
        argv += [resolve(a, results) for a in cmd["argv"]]
        forget_clients()
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = shell.main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
        text = out.getvalue()
        try:
            parsed = json.loads(text) if text.strip() else None
        except ValueError:
            parsed = None
        entry = {"id": cmd["id"], "argv": argv[6:], "code": code, "stdout": text, "stderr": err.getvalue(), "json": parsed}
        results[cmd["id"]] = entry
        report.append(entry)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
