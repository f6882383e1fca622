"""A tiny scripted TUI for the shell-grade tests: run under a pseudo-terminal, never imported.

It behaves like the terminal programs the shell grade drives, on purpose with the awkward parts:
raw mode, a coloured banner, a spinner redrawn in place (``\\r`` + erase line), an answer streamed
in pieces with colours, a status line (chrome), bracketed paste and Ctrl-C.

* boot: asks for the cursor position (``ESC[6n``) and waits up to 2 s for the answer, then prints
  ``size COLSxROWS tty=yes|no cpr=yes|no`` and the prompt ``> `` (its ready screen);
* a typed line (ending in ``\\r``) is answered ``typed: <text>``; a bracketed paste then ``\\r`` is
  answered ``pasted: <text>``; newlines inside a paste are kept (``lines=N``);
* a prompt containing ``slow`` streams 30 words, 0.2 s apart (Ctrl-C stops it: ``^C``);
* a prompt containing ``quiet`` answers after a 1.5 s silence (the settle heuristic must wait: the
  prompt line is not ready until then);
* ``exit`` exits 0; Ctrl-C twice at the prompt exits 130.
"""

from __future__ import annotations

import os
import select
import sys
import time
import tty

OUT = sys.stdout.buffer


def w(data: str) -> None:
    OUT.write(data.encode())
    OUT.flush()


def key(timeout: float | None = None) -> bytes:
    ready, _, _ = select.select([0], [], [], timeout)
    return os.read(0, 1) if ready else b""


def cpr() -> bool:
    w("\x1b[6n")
    got = b""
    deadline = time.monotonic() + 2
    while not got.endswith(b"R") and time.monotonic() < deadline:
        got += key(0.1)
    return got.startswith(b"\x1b[") and got.endswith(b"R")


def answer(kind: str, text: str) -> None:
    for frame in "|/-\\":
        w(f"\r\x1b[2K\x1b[33m{frame} working…\x1b[0m")
        time.sleep(0.05)
    w("\r\x1b[2K")
    if "quiet" in text:
        time.sleep(1.5)
    lines = text.count("\n") + 1
    body = " ".join(text.split())
    if "slow" in text:
        for i in range(30):
            if key(0.2) == b"\x03":
                w("^C\r\n")
                break
            w(f"word{i} ")
        w("\r\n")
    else:
        head, tail = body[: len(body) // 2], body[len(body) // 2 :]
        w(f"\x1b[1;32m{kind}:\x1b[0m {head}")
        time.sleep(0.05)
        w(f"{tail} (lines={lines})\r\n")
    w("\x1b[2mTokens: 5 sent\x1b[0m\r\n")


def main() -> int:
    size = os.get_terminal_size(0)
    tty.setraw(0)
    has_cpr = cpr()
    try:
        os.close(os.open("/dev/tty", os.O_RDWR))
        controlling = "yes"
    except OSError:
        controlling = "no"
    w(f"\x1b[1mFAKE TUI\x1b[0m\r\nsize {size.columns}x{size.lines} tty={controlling} ")
    w(f"cpr={'yes' if has_cpr else 'no'}\r\n")
    ctrl_c = 0
    while True:
        w("> ")
        buf, pasted = b"", False
        while True:
            c = key()
            if c == b"\x03":
                ctrl_c += 1
                if ctrl_c >= 2:
                    return 130
                w("^C\r\n> ")
                continue
            if c == b"\x1b":
                seq = c
                while not seq.endswith(b"~") and len(seq) < 8:
                    seq += key(0.5)
                if seq == b"\x1b[200~":
                    pasted = True
                    while not buf.endswith(b"\x1b[201~"):
                        buf += key(1.0) or b"\x1b[201~"
                    buf = buf[: -len(b"\x1b[201~")]
                    w(buf.decode(errors="replace").replace("\n", "\r\n"))
                continue
            if c in (b"\r", b"\n"):
                break
            buf += c
            w(c.decode(errors="replace"))
        ctrl_c = 0
        w("\r\n")
        text = buf.decode(errors="replace")
        if text == "exit":
            return 0
        answer("pasted" if pasted else "typed", text)


if __name__ == "__main__":
    sys.exit(main())
