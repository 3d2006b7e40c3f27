#!/usr/bin/python3
"""Attach and detach cost of many probes on a running process (issue 16, goal 5).

The target is a running gdb (`gdb -batch -ex 'shell sleep ...'`, waiting for its shell): a
stripped object with ~20,000 functions, each an .eh_frame FDE. The probe points are the
first SIZE FDE starts (as readelf prints them; file offsets, as uprobe_events takes them),
one named event each (p:GROUP/fN /usr/bin/gdb:0xOFFSET), for every tracer:

  xprobe, xprobe --engine trap  `xprobe trace -p PID -f DEFS --ctl`. Attached = the moment
                                xprobe says "control socket" on stderr: it does so after every
                                probe is planted, just before it resumes the process.
                                Detached = from SIGINT until xprobe has exited (the probes
                                out, the process let go, the profile printed).
  kernel                        the kernel's uprobe_events: the definitions in one write, then
                                `1 > enable` of the group in a tracefs instance of our own
                                (attached); detached = `0 > enable` and the removal of the
                                group's events in one write.

The oracle is the process's own memory, read through /proc/PID/mem: while attached, every
probed address must hold bytes that differ from the file's (a breakpoint or a jump), and
after the detach every one must hold the file's bytes again. A run whose check fails
prints the count and is marked so.

  bench/attach_many.py BUILD [--sizes 1000,10000] [--runs 3] [--tracers xprobe,xprobe-trap,kernel]
  (root; BUILD is a Release build with XPROBE_BENCH=ON)
"""
import argparse
import fcntl
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

OBJECT = "/usr/bin/gdb"
TRACEFS = "/sys/kernel/tracing"


def fde_starts(path):
    """The pc_begin of every FDE of .eh_frame, sorted and unique (readelf is the oracle)."""
    out = subprocess.run(["readelf", "--debug-dump=frames", path], capture_output=True, text=True, check=True).stdout
    starts = set()
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 6 and words[3] == "FDE" and words[5].startswith("pc="):
            starts.add(int(words[5][3:].split("..")[0], 16))
    return sorted(starts)


def file_offset_map(path):
    """(vaddr, size, offset) of each PT_LOAD, from readelf -lW."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True).stdout
    loads = []
    for line in out.splitlines():
        words = line.split()
        if words and words[0] == "LOAD":
            loads.append((int(words[2], 16), int(words[4], 16), int(words[1], 16)))
    return loads


def to_offset(loads, address):
    for vaddr, size, offset in loads:
        if vaddr <= address < vaddr + size:
            return address - vaddr + offset
    raise SystemExit(f"{address:#x} is in no PT_LOAD of {OBJECT}")


def load_base(pid, path):
    """Where the object's file offset 0 is mapped in the process."""
    real = os.path.realpath(path)
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            words = line.split()
            if len(words) >= 6 and os.path.realpath(words[5]) == real:
                start = int(words[0].split("-")[0], 16)
                return start - int(words[2], 16)
    raise SystemExit(f"{path} is not mapped in process {pid}")


def count_changed(pid, base, offsets, original):
    """How many probed addresses hold other bytes than the file's (their first 5 bytes: a breakpoint or a jump changes one of them)."""
    changed = 0
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for offset in offsets:
            mem.seek(base + offset)
            if mem.read(5) != original[offset:offset + 5]:
                changed += 1
    return changed


def now_ms():
    return time.monotonic() * 1000.0


def run_xprobe(xprobe, engine, pid, defs, workdir):
    env = dict(os.environ, XDG_RUNTIME_DIR=workdir)
    args = [xprobe, "trace", "-p", str(pid), "-f", defs, "-o", "/dev/null", "--ctl"]
    if engine:
        args.append(f"--engine={engine}")
    start = now_ms()
    tracer = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
    said = []
    for line in tracer.stderr:
        said.append(line)
        if "control socket" in line:
            break
    attached = now_ms()
    if tracer.poll() is not None or not said or "control socket" not in said[-1]:
        tracer.wait()
        raise RuntimeError(f"xprobe did not attach: {''.join(said)[-300:]}")
    return tracer, attached - start, said


def finish_xprobe(tracer):
    start = now_ms()
    tracer.send_signal(signal.SIGINT)
    rest = tracer.stderr.read()
    tracer.wait()
    return now_ms() - start, rest, tracer.returncode


class Kernel:
    def __init__(self):
        self.group = f"xprobe_attach_many_{os.getpid()}"
        self.instance = f"{TRACEFS}/instances/{self.group}"
        self.lock = open("/run/lock/xprobe-kernel-tracefs.lock", "a")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        os.mkdir(self.instance)

    def write(self, text):
        fd = os.open(f"{TRACEFS}/uprobe_events", os.O_WRONLY | os.O_APPEND)
        try:
            data = text.encode()
            done = 0
            while done < len(data):
                done += os.write(fd, data[done:])
        finally:
            os.close(fd)

    def attach(self, lines):
        start = now_ms()
        self.write("".join(line.replace("plantbench/", f"{self.group}/") for line in lines))
        with open(f"{self.instance}/events/{self.group}/enable", "w") as enable:
            enable.write("1")
        return now_ms() - start

    def detach(self, count):
        start = now_ms()
        with open(f"{self.instance}/events/{self.group}/enable", "w") as enable:
            enable.write("0")
        self.write("".join(f"-:{self.group}/f{i}\n" for i in range(1, count + 1)))
        return now_ms() - start

    def close(self):
        try:
            os.rmdir(self.instance)
        except OSError:
            pass
        fcntl.flock(self.lock, fcntl.LOCK_UN)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tracers", default="xprobe,xprobe-trap,kernel")
    parser.add_argument("--kernel-runs", type=int, default=1, help="the kernel's removal is slow: fewer runs")
    options = parser.parse_args()
    xprobe = os.path.join(options.build, "src/cli/xprobe")
    sizes = [int(s) for s in options.sizes.split(",")]
    tracers = options.tracers.split(",")

    loads = file_offset_map(OBJECT)
    offsets = [to_offset(loads, a) for a in fde_starts(OBJECT)]
    with open(OBJECT, "rb") as f:
        original = f.read()
    print(f"# {OBJECT}: {len(offsets)} FDE starts; load average {open('/proc/loadavg').read().split()[:3]}", flush=True)
    workdir = tempfile.mkdtemp(prefix="xprobe-attach-many.")
    target = subprocess.Popen(["gdb", "-batch", "-ex", "shell sleep 100000"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(1.0)  # gdb is up and waiting for its shell
        base = load_base(target.pid, OBJECT)
        results = {}
        for size in sizes:
            if size > len(offsets):
                raise SystemExit(f"{OBJECT} has only {len(offsets)} FDEs")
            chosen = offsets[:size]
            lines = [f"p:plantbench/f{i + 1} {OBJECT}:{offset:#x}\n" for i, offset in enumerate(chosen)]
            defs = os.path.join(workdir, f"defs{size}")
            with open(defs, "w") as f:
                f.writelines(lines)
            for tracer_name in tracers:
                runs = options.kernel_runs if tracer_name == "kernel" else options.runs
                for run in range(runs):
                    status = "ok"
                    if tracer_name == "kernel":
                        kernel = Kernel()
                        try:
                            attach_ms = kernel.attach(lines)
                            live = count_changed(target.pid, base, chosen, original)
                            detach_ms = kernel.detach(size)
                        finally:
                            kernel.close()
                    else:
                        engine = "trap" if tracer_name == "xprobe-trap" else None
                        tracer, attach_ms, _ = run_xprobe(xprobe, engine, target.pid, defs, workdir)
                        live = count_changed(target.pid, base, chosen, original)
                        detach_ms, rest, rc = finish_xprobe(tracer)
                        if rc != 0:
                            status = f"xprobe exited {rc}: {rest.strip().splitlines()[-1:]}"
                    left = count_changed(target.pid, base, chosen, original)
                    if live != size or left != 0:
                        status = f"CHECK FAILED: {live} of {size} patched while attached, {left} left after"
                    if target.poll() is not None:
                        raise SystemExit(f"gdb died (exit {target.returncode}) under {tracer_name}")
                    results.setdefault((tracer_name, size), []).append((attach_ms, detach_ms))
                    print(f"{tracer_name} probes={size} run={run + 1} attach_ms={attach_ms:.1f} "
                          f"detach_ms={detach_ms:.1f} patched={live} left={left} {status}", flush=True)
        print("\n| tracer | probes | attach ms (median, min-max) | detach ms (median, min-max) |")
        print("|---|---:|---:|---:|")
        for (tracer_name, size), values in results.items():
            attach = [a for a, _ in values]
            detach = [d for _, d in values]
            print(f"| {tracer_name} | {size:,} | {statistics.median(attach):.0f} ({min(attach):.0f}-{max(attach):.0f}) "
                  f"| {statistics.median(detach):.0f} ({min(detach):.0f}-{max(detach):.0f}) |")
    finally:
        os.killpg(target.pid, signal.SIGKILL)
        target.wait()
        subprocess.run(["rm", "-rf", workdir])


if __name__ == "__main__":
    main()
