"""P2: corral's translating proxy against LiteLLM's proxy, in front of the same scripted upstream.

Run: ``python -m benchmarks.bench_proxy [--quick]`` (also part of ``make bench``).

Three targets are loaded by the same client in the same run: the scripted model server itself
(the anchor), corral's proxy and LiteLLM's proxy, both one worker, both forwarding OpenAI Chat
Completions to the upstream. Added latency = a proxy's percentile minus the anchor's. Also
reported: corral translating Anthropic Messages → Chat, requests/s per worker at c=50, CPU
seconds per streamed chunk (the proxy process's utime+stime over the stream run), startup time
to a healthy answer, and peak RSS.

LiteLLM (``litellm[proxy]``) is installed by this script into a throwaway venv under the corral
cache dir (``<cache>/bench/litellm-venv``), never into the product's environment. With
``--no-litellm`` (or when the install fails) only corral is measured and the ratios are omitted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import httpx

from corral._paths import cache_dir
from corral.proxy._http1 import Pool

CHUNKS = 10
SETTLE = 5.0
ROUNDS = 3
TOKEN = "bench-token"
PROMPT = [{"role": "user", "content": "Say hello."}]
SCENARIO = {
    "steps": [{"match": {"kind": "any"}, "reply": {"text": "hello " * CHUNKS, "chunks": CHUNKS}}]
}


startup_cpu: dict[int, float] = {}
"""CPU seconds (utime+stime) each started proxy had used when it first answered healthy: start-up
cost that does not depend on how loaded the machine is."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_mb(pid: int) -> float:
    """Peak resident set (VmHWM) of the process and its children, in MB."""
    total = 0.0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) / 1024
    return total


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited with {proc.returncode} during startup")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return time.perf_counter() - start
        except httpx.HTTPError:
            pass
        time.sleep(0.01)
    raise TimeoutError(f"{url} not healthy within {timeout}s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def start_upstream(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    scenario = tmp / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "corral", "fake-model", "serve", "--scenario", str(scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()
    return proc, url


def start_corral(
    upstream: str, tmp: Path, src: str | None = None
) -> tuple[subprocess.Popen[bytes], str, float]:
    """``corral proxy serve`` as a process; ``src`` puts another checkout's ``src`` first on the
    path (``--baseline-src``: an older proxy measured in the same run)."""
    env = dict(os.environ, CORRAL_PROXY_TOKEN=TOKEN, CORRAL_HOME=str(tmp / "home"))
    if src is not None:
        env["PYTHONPATH"] = src
    start = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "corral",
            "proxy",
            "serve",
            "--provider",
            "openai-compatible",
            "--base-url",
            upstream + "/v1",
            "--model",
            "fake-model",
            "--json",
            "--usage-log",
            str(tmp / "usage.jsonl"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdout is not None
    url = json.loads(proc.stdout.readline())["base_url"]
    startup = time.perf_counter() - start
    wait_healthy(url + "/health", proc, 30)
    startup_cpu[proc.pid] = proc_cpu(proc.pid)
    return proc, url, startup


def litellm_venv(log: list[str]) -> Path | None:
    venv = cache_dir() / "bench" / "litellm-venv"
    binary = venv / "bin" / "litellm"
    if binary.exists():
        return binary
    print("  installing litellm[proxy] into", venv, "(once)")
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "litellm[proxy]"], check=True, timeout=1800
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        log.append(f"litellm install failed: {exc}")
        return None
    return binary if binary.exists() else None


def start_litellm(
    binary: Path, upstream: str, tmp: Path
) -> tuple[subprocess.Popen[bytes], str, float]:
    config = tmp / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: fake-model\n"
        "    litellm_params:\n"
        "      model: openai/fake-model\n"
        f"      api_base: {upstream}/v1\n"
        "      api_key: unused\n"
        "general_settings:\n"
        f"  master_key: sk-{TOKEN}\n"
        "litellm_settings:\n"
        "  telemetry: false\n"
    )
    port = free_port()
    env = dict(
        os.environ, LITELLM_LOG="ERROR", LITELLM_TELEMETRY="False", DISABLE_SCHEMA_UPDATE="true"
    )
    start = time.perf_counter()
    proc = subprocess.Popen(
        [
            str(binary),
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--num_workers",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=tmp,
    )
    url = f"http://127.0.0.1:{port}"
    startup = wait_healthy(url + "/health/liveliness", proc, 180)
    startup_cpu[proc.pid] = proc_cpu(proc.pid)
    return proc, url, time.perf_counter() - start if startup else startup


async def one(
    client: Pool, url: str, payload: bytes, headers: dict[str, str], stream: bool
) -> tuple[float, int]:
    start = time.perf_counter()
    response = await client.send("POST", url, headers, payload)
    try:
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}")
        chunks = 0
        async for data in response.aiter_raw():
            if stream:
                chunks += data.count(b"data:")
    finally:
        await response.aclose()
    return time.perf_counter() - start, chunks


async def load(
    url: str,
    path: str,
    body: dict[str, Any],
    headers: dict[str, str],
    stream: bool,
    n: int,
    concurrency: int,
) -> tuple[list[float], float]:
    """``n`` requests from ``concurrency`` workers on kept-alive connections, after a warm-up.

    The load client is corral's lean HTTP/1.1 client (``corral.proxy._http1``), the same for every
    target: httpx as the client cost ~5 ms of CPU per request on these two cores, more than any
    proxy, and capped what the proxies could show."""
    client = Pool(connect_timeout=10, read_timeout=60, max_connections=concurrency)
    payload = json.dumps(body).encode()
    headers = headers | {"content-type": "application/json"}
    try:
        for _ in range(min(20, n)):
            await one(client, url + path, payload, headers, stream)
        times: list[float] = []
        queue = list(range(n))

        async def worker() -> None:
            while queue:
                queue.pop()
                elapsed, _ = await one(client, url + path, payload, headers, stream)
                times.append(elapsed)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - start
    finally:
        await client.aclose()
    return times, wall


def _run(coro: Coroutine[Any, Any, tuple[list[float], float]]) -> tuple[list[float], float]:
    """The load client on uvloop when installed (as both proxies' servers are)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


CHAT = {"model": "fake-model", "messages": PROMPT, "max_tokens": 50}
ANTHROPIC = {"model": "fake-model", "max_tokens": 50, "messages": PROMPT}


Target = tuple[str, str, dict[str, str], int | None]
"""(name, base URL, auth headers, pid whose CPU is counted)."""


def measure(
    targets: list[Target],
    sizes: dict[int, int],
    rows: dict[str, Any],
    path: str = "/v1/chat/completions",
    body: dict[str, Any] = CHAT,
) -> None:
    """Every load shape on every target, interleaved in rounds (see below)."""
    for stream in (False, True):
        for concurrency, n in sizes.items():
            key = f"{'stream' if stream else 'json'} c={concurrency}"
            payload = body | {"stream": stream}
            samples: dict[str, list[float]] = {name: [] for name, *_ in targets}
            wall = dict.fromkeys(samples, 0.0)
            cpu = dict.fromkeys(samples, 0.0)
            sent = dict.fromkeys(samples, 0)
            # ROUNDS rounds, each target in turn (the anchor first and last): every target's
            # samples are spread over the same stretch of time, so the machine's load (shared,
            # changing) falls on all of them alike; the percentiles are over all the samples.
            order = [*targets, targets[0]] if len(targets) > 1 else targets
            for _round in range(ROUNDS):
                for name, url, headers, pid in order:
                    count = max(
                        1,
                        n // ROUNDS // (2 if order is not targets and name == targets[0][0] else 1),
                    )
                    cpu0 = proc_cpu(pid) if pid else 0.0
                    times, elapsed = _run(
                        load(url, path, payload, headers, stream, count, concurrency)
                    )
                    if pid:
                        cpu[name] += proc_cpu(pid) - cpu0
                    samples[name] += times
                    wall[name] += elapsed
                    sent[name] += count + min(20, count)
            for name, _url, _headers, pid in targets:
                times = sorted(samples[name])
                result = {
                    "p50": statistics.median(times) * 1000,
                    "p99": times[min(len(times) - 1, int(len(times) * 0.99))] * 1000,
                    "rps": len(times) / wall[name],
                    "samples": len(times),
                }
                if pid:
                    per_request = cpu[name] / sent[name]
                    result["cpu_per_request_ms"] = per_request * 1000
                    result["requests_per_cpu_second"] = (
                        1 / per_request if per_request else float("inf")
                    )
                    if stream:
                        result["cpu_per_chunk_us"] = per_request / CHUNKS * 1e6
                rows.setdefault(name, {})[key] = result
                print(
                    f"  {name:<22} {key:<12} p50 {result['p50']:8.2f} ms  "
                    f"p99 {result['p99']:8.2f} ms  {result['rps']:8.1f} req/s  "
                    f"({len(times)} samples)"
                )


def run(
    quick: bool = False, with_litellm: bool = True, baseline_src: str | None = None
) -> dict[str, Any]:
    sizes = {1: 90, 50: 300} if quick else {1: 600, 50: 1200}
    rows: dict[str, Any] = {"load_average": list(os.getloadavg())}
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as raw_tmp:
        tmp = Path(raw_tmp)
        upstream, up_url = start_upstream(tmp)
        procs = [upstream]
        try:
            auth = {"authorization": f"Bearer {TOKEN}"}
            targets: list[Target] = [("upstream (anchor)", up_url, {}, None)]
            started: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
            corral, corral_url, corral_start = start_corral(up_url, tmp)
            procs.append(corral)
            started["corral"] = (corral, corral_start)
            targets.append(("corral", corral_url, auth, corral.pid))
            if baseline_src is not None:
                base, base_url, base_start = start_corral(up_url, tmp, baseline_src)
                procs.append(base)
                started["corral (baseline)"] = (base, base_start)
                targets.append(("corral (baseline)", base_url, auth, base.pid))
            binary = litellm_venv(notes) if with_litellm else None
            if binary is not None:
                lite, lite_url, lite_start = start_litellm(binary, up_url, tmp)
                procs.append(lite)
                started["litellm"] = (lite, lite_start)
                targets.append(
                    ("litellm", lite_url, {"authorization": f"Bearer sk-{TOKEN}"}, lite.pid)
                )
            time.sleep(SETTLE)  # let start-up work in the proxies finish before any load
            measure(targets, sizes, rows)
            measure(
                [("corral anthropic→chat", corral_url, {"x-api-key": TOKEN}, None)],
                sizes,
                rows,
                "/v1/messages",
                ANTHROPIC,
            )
            for name, (proc, startup) in started.items():
                rows[name]["startup_s"] = startup
                rows[name]["startup_cpu_s"] = startup_cpu.get(proc.pid, math.nan)
                rows[name]["rss_mb"] = proc_rss_mb(proc.pid)
        finally:
            for proc in reversed(procs):
                stop(proc)
    rows["load_average_after"] = list(os.getloadavg())
    report(rows, notes)
    return rows


PROXIES = ("corral", "corral (baseline)", "litellm")


def report(rows: dict[str, Any], notes: list[str]) -> None:
    anchor = rows["upstream (anchor)"]
    load = rows["load_average"] + rows["load_average_after"]
    print(f"\n  load average {min(load):.1f}–{max(load):.1f}")
    print("  added latency over the anchor, p50/p99 (ms), and the ratio litellm/corral:")
    ratios: list[float] = []
    for key in anchor:
        line = f"  {key:<12}"
        added: dict[str, tuple[float, float]] = {}
        for name in PROXIES:
            if name in rows:
                p50, p99 = (rows[name][key][p] - anchor[key][p] for p in ("p50", "p99"))
                added[name] = (p50, p99)
                line += f"  {name} {p50:+.2f}/{p99:+.2f}"
        if "litellm" in added:
            line += "  ratio " + " ".join(
                f"{p} {_ratio(added['litellm'][i], added['corral'][i])}"
                for i, p in enumerate(("p50", "p99"))
            )
            ratios += [
                added["litellm"][i] / added["corral"][i] if added["corral"][i] > 0 else math.inf
                for i in (0, 1)
            ]
        print(line)
    for name in PROXIES:
        if name in rows:
            r = rows[name]
            cpu = r["stream c=50"].get("cpu_per_chunk_us", float("nan"))
            per_cpu = r["json c=50"].get("requests_per_cpu_second", float("nan"))
            print(
                f"  {name:<18} req/s/worker measured (json c=50) {r['json c=50']['rps']:.1f}, "
                f"per CPU-second {per_cpu:.0f}; cpu/chunk {cpu:.1f} us; "
                f"startup {r['startup_s']:.2f} s ({r.get('startup_cpu_s', math.nan):.2f} CPU-s); "
                f"rss {r['rss_mb']:.0f} MB"
            )
    corral = rows["corral"]
    if "litellm" in rows:
        c, lite = corral["json c=50"], rows["litellm"]["json c=50"]
        measured = c["rps"] / lite["rps"]
        per_cpu = c["requests_per_cpu_second"] / lite["requests_per_cpu_second"]
        print(f"  req/s corral/litellm: measured {measured:.1f}x, per CPU-second {per_cpu:.1f}x")
        print("  goals:")
        finite = [r for r in ratios if r != math.inf]
        within = len(ratios) - len(finite)
        print(
            f"    added latency <= 1/20 of litellm's: {_met(min(ratios) >= 20)} "
            f"({sum(r >= 20 for r in finite)} of {len(ratios)} figures at >= 20x, "
            f"{within} with corral within the anchor's noise, lowest ratio "
            f"{min(finite, default=math.inf):.1f}x)"
        )
        print(
            f"    req/s per worker >= 10x: {_met(measured >= 10)} measured {measured:.1f}x, "
            f"{_met(per_cpu >= 10)} per CPU-second {per_cpu:.1f}x"
        )
    print(f"    startup < 1 s: {_met(corral['startup_s'] < 1)} ({corral['startup_s']:.2f} s)")
    print(f"    RSS < 100 MB: {_met(corral['rss_mb'] < 100)} ({corral['rss_mb']:.0f} MB)")
    for note in notes:
        print("  note:", note)


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _ratio(litellm: float, corral: float) -> str:
    """litellm/corral added latency; corral's within the anchor's noise (<= 0) has no ratio."""
    if corral <= 0:
        return "n/a (corral within noise)"
    return f"{litellm / corral:.1f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_proxy")
    parser.add_argument("--quick", action="store_true", help="Fewer requests (a smoke run).")
    parser.add_argument("--no-litellm", action="store_true", help="Measure corral only.")
    parser.add_argument("--json", dest="json_out", help="Also write the figures to this file.")
    parser.add_argument(
        "--baseline-src",
        help="Also measure the proxy of another checkout (its src directory), same run.",
    )
    args = parser.parse_args(argv)
    rows = run(quick=args.quick, with_litellm=not args.no_litellm, baseline_src=args.baseline_src)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
