"""A stand-in harness for the runner tests, installed as ``claude`` on PATH.

It writes ``{"pid", "argv", "env", "tty", "winsize"}`` to ``$FAKE_HARNESS_REPORT`` and then acts
out ``--mode``: ``exit:N``, ``sleep`` (until a signal), ``crash`` (SIGKILLs itself),
``call`` (one Messages request to ``$ANTHROPIC_BASE_URL`` with the token, printing the answer),
``winch`` (prints the window size after each SIGWINCH, 3 times).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.request


def winsize() -> list[int] | None:
    import fcntl
    import struct
    import termios

    try:
        raw = fcntl.ioctl(1, termios.TIOCGWINSZ, b"\0" * 8)
    except OSError:
        return None
    rows, cols, _, _ = struct.unpack("HHHH", raw)
    return [rows, cols]


def main() -> int:
    argv = sys.argv[1:]
    mode = argv[argv.index("--mode") + 1] if "--mode" in argv else "exit:0"
    report = {
        "pid": os.getpid(),
        "argv": argv,
        "env": {k: v for k, v in os.environ.items() if k.startswith(("ANTHROPIC_", "HOME"))},
        "tty": os.isatty(0) and os.isatty(1),
        "winsize": winsize(),
    }
    path = os.environ["FAKE_HARNESS_REPORT"]
    with open(path + ".tmp", "w") as fh:
        json.dump(report, fh)
    os.replace(path + ".tmp", path)
    if mode.startswith("exit:"):
        return int(mode.split(":")[1])
    if mode == "sleep":
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)
        return 3
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "call":
        body = json.dumps(
            {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
        ).encode()
        request = urllib.request.Request(
            os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
            data=body,
            headers={
                "content-type": "application/json",
                "authorization": "Bearer " + os.environ["ANTHROPIC_AUTH_TOKEN"],
                "anthropic-version": "2023-06-01",
            },
        )
        with urllib.request.urlopen(request, timeout=30) as resp:
            sys.stdout.write(resp.read().decode() + "\n")
        return 0
    if mode == "winch":
        seen = []
        signal.signal(signal.SIGWINCH, lambda s, f: seen.append(winsize()))
        sys.stdout.write(f"ready {winsize()}\r\n")
        sys.stdout.flush()
        deadline = time.monotonic() + 20
        while len(seen) < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        sys.stdout.write(f"resized {seen[-1] if seen else None}\r\n")
        sys.stdout.flush()
        return 0 if seen else 4
    return 9


if __name__ == "__main__":
    sys.exit(main())
