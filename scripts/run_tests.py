#!/usr/bin/env python3
"""Runs the test binaries `cargo test --no-run --message-format=json` built, several at once.

`cargo test` runs its binaries one after another, and most of the suite's time is spent
waiting (on Chromium, moto, Sockudo and the scripted model servers): on a 2-core machine the
whole suite kept about one core busy. This runs JOBS binaries at a time instead, longest
first by the durations the last run recorded (in DURATIONS; a first run keeps cargo's order),
each as cargo would (its package's directory as the working directory, CARGO and
CARGO_MANIFEST_DIR set), and prints each binary's output whole when it ends, under cargo's
own `Running` line, so the log reads as cargo's. (cargo-nextest does this too, but runs every
test in a process of its own, which starts a rig per test, and takes minutes to build on a
fresh machine.)

usage: run_tests.py --jobs N --durations FILE ARTIFACTS.json[=FILTER,...]... [-- TEST-BINARY-ARGS...]
(several builds' messages may be given: a crate tested with other features is its own binary,
told apart by its features; `=FILTER,...` runs only the tests of that build whose names
contain one of the filters)
Exit status: 0 when every binary passed, 1 otherwise.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time


def binaries(artifacts):
    """The test executables of cargo's JSON messages, in cargo's order, without repeats."""
    seen, out = set(), []
    with open(artifacts, encoding="utf-8") as f:
        for line in f:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            exe = msg.get("executable")
            if msg.get("reason") != "compiler-artifact" or not msg.get("profile", {}).get("test") or not exe:
                continue
            if exe in seen:
                continue
            seen.add(exe)
            target = msg.get("target", {})
            manifest = msg.get("manifest_path", "")
            root = os.path.dirname(manifest)
            src = os.path.relpath(target.get("src_path", exe), root) if root else exe
            kind = "unittests " if "lib" in target.get("kind", []) or "bin" in target.get("kind", []) else ""
            features = ",".join(msg.get("features") or [])
            out.append({"exe": exe, "dir": root or ".", "label": f"{kind}{src} ({exe})",
                        "key": f"{target.get('name', '')}:{src}" + (f" [{features}]" if features else "")})
    return out


def machine_busy():
    """(busy, total) CPU ticks of the whole machine so far, from /proc/stat (None elsewhere)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return sum(ticks) - idle, sum(ticks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--durations", required=True)
    ap.add_argument("artifacts", nargs="+")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:split])
    args = argv[split + 1:]
    try:
        with open(a.durations, encoding="utf-8") as f:
            last = json.load(f)
    except (OSError, ValueError):
        last = {}
    todo, seen = [], set()
    for spec in a.artifacts:
        artifacts, _, filters = spec.partition("=")
        found = [b for b in binaries(artifacts) if b["exe"] not in seen]
        for b in found:
            b["filters"] = [f for f in filters.split(",") if f]
        todo += found
        seen.update(b["exe"] for b in todo)
    # Longest first (stable: unknown ones keep cargo's order, after the known).
    todo.sort(key=lambda b: -last.get(b["key"], 0.0))
    cargo = shutil.which("cargo") or "cargo"
    lock, failed, took, cpu = threading.Lock(), [], {}, {}
    queue = list(reversed(todo))

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                b = queue.pop()
            env = dict(os.environ, CARGO=cargo, CARGO_MANIFEST_DIR=os.path.abspath(b["dir"]))
            started = time.monotonic()
            with tempfile.TemporaryFile() as out:
                p = subprocess.Popen([b["exe"], *b["filters"], *args], cwd=b["dir"], env=env,
                                     stdout=out, stderr=subprocess.STDOUT)
                # wait4, not wait: the binary's own CPU time (and its waited-for children's).
                _, code, usage = os.wait4(p.pid, 0)
                p.returncode = os.waitstatus_to_exitcode(code)
                out.seek(0)
                output = out.read()
            seconds = time.monotonic() - started
            with lock:
                took[b["key"]] = round(seconds, 1)
                cpu[b["key"]] = usage.ru_utime + usage.ru_stime
                sys.stdout.write(f"     Running {b['label']}\n")
                sys.stdout.write(output.decode("utf-8", "replace"))
                if p.returncode != 0:
                    failed.append(b["label"])
                    sys.stdout.write(f"error: test failed (exit {p.returncode}): {b['label']}\n")
                sys.stdout.flush()

    began, busy_before = time.monotonic(), machine_busy()
    threads = [threading.Thread(target=worker) for _ in range(max(1, a.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        os.makedirs(os.path.dirname(os.path.abspath(a.durations)), exist_ok=True)
        with open(a.durations, "w", encoding="utf-8") as f:
            json.dump({**last, **took}, f, indent=0, sort_keys=True)
    except OSError as e:
        print(f"could not keep the durations: {e}", file=sys.stderr)
    # What the run cost: its wall time, the CPU time of the binaries (and the processes they
    # waited for: Chromium, the scripted servers they start), and how busy the machine was.
    wall, own = time.monotonic() - began, resource.getrusage(resource.RUSAGE_CHILDREN)
    line = f"test binaries: {len(todo)} in {wall:.0f} s, {own.ru_utime + own.ru_stime:.0f} s of CPU"
    busy_after = machine_busy()
    if busy_before and busy_after and busy_after[1] > busy_before[1]:
        share = (busy_after[0] - busy_before[0]) / (busy_after[1] - busy_before[1])
        line += f"; the machine's {os.cpu_count()} cores {share:.0%} busy"
    print(line)
    heaviest = sorted(cpu.items(), key=lambda kv: -kv[1])[:8]
    print("most CPU: " + ", ".join(f"{k.split(':')[0]} {v:.0f} s" for k, v in heaviest))
    for label in failed:
        print(f"FAILED: {label}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
