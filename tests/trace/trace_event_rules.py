#!/usr/bin/env python3
"""Checks a Trace Event Format file (the JSON array form) against the format's rules, as
ui.perfetto.dev and chrome://tracing read it, with Python's own JSON parser:

  - the file is one JSON array of objects (with its closing bracket);
  - every event has "ph", "pid" and "tid" (integers); every event but metadata a "name" and a
    numeric "ts" (microseconds) that never decreases on its thread;
  - "B"/"E" are balanced per thread, each "E" naming the "B" it closes, nothing left open;
  - instant events ("i") have a scope "s" of t, p or g;
  - every thread is named (thread_name metadata) and every process (process_name) before
    their first event;
  - counter events ("C") belong to their process (named before them), their "args" are
    numbers, and their ts never decreases on their counter track (pid, name).

Prints one JSON object with what it counted (events per phase and name, threads, the deepest
nesting per name, each counter track's last value per series and the sum of its samples) and exits 1 with the broken rules on stderr."""
import json
import sys


def check(events):
    errors = []
    counts = {}
    depth = {}
    stacks = {}
    last_ts = {}
    counters = {}
    counter_sums = {}
    named_threads = set()
    named_processes = set()
    if not isinstance(events, list):
        return ["the top level is not an array"], counts, depth, 0, counters, counter_sums
    for index, event in enumerate(events):
        where = "event %d" % index
        if not isinstance(event, dict):
            errors.append("%s: not an object" % where)
            continue
        phase = event.get("ph")
        pid, tid = event.get("pid"), event.get("tid")
        if not isinstance(pid, int) or not isinstance(tid, int):
            errors.append("%s: pid/tid missing or not integers" % where)
            continue
        thread = (pid, tid)
        if phase == "M":
            name = event.get("name")
            label = event.get("args", {}).get("name")
            if not isinstance(label, str):
                errors.append("%s: metadata without args.name" % where)
            if name == "thread_name":
                named_threads.add(thread)
            elif name == "process_name":
                named_processes.add(pid)
            continue
        name, ts = event.get("name"), event.get("ts")
        if not isinstance(name, str):
            errors.append("%s: no name" % where)
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            errors.append("%s: no numeric ts" % where)
            continue
        if phase == "C":
            args = event.get("args")
            if not isinstance(args, dict) or not args or any(
                    not isinstance(v, (int, float)) or isinstance(v, bool) for v in args.values()):
                errors.append("%s: counter without numeric args" % where)
                args = {}
            if pid not in named_processes:
                errors.append("%s: process %d has no process_name before it" % (where, pid))
            track = (pid, "C", name)
            if track in last_ts and ts < last_ts[track]:
                errors.append("%s: ts %r goes back from %r on counter %r" % (where, ts, last_ts[track], name))
            last_ts[track] = ts
            counts.setdefault("C", {})
            counts["C"][name] = counts["C"].get(name, 0) + 1
            for key, value in args.items():
                counters.setdefault(name, {})[key] = value  # the last value of each series
                sums = counter_sums.setdefault(name, {})
                sums[key] = sums.get(key, 0) + value
            continue
        if thread not in named_threads:
            errors.append("%s: thread %d/%d has no thread_name before it" % (where, pid, tid))
        if pid not in named_processes:
            errors.append("%s: process %d has no process_name before it" % (where, pid))
        if thread in last_ts and ts < last_ts[thread]:
            errors.append("%s: ts %r goes back from %r on thread %d" % (where, ts, last_ts[thread], tid))
        last_ts[thread] = ts
        counts.setdefault(phase, {})
        counts[phase][name] = counts[phase].get(name, 0) + 1
        stack = stacks.setdefault(thread, [])
        if phase == "B":
            stack.append(name)
            depth[name] = max(depth.get(name, 0), stack.count(name))
        elif phase == "E":
            if not stack:
                errors.append("%s: E %r with no open slice on thread %d" % (where, name, tid))
            else:
                opened = stack.pop()
                if name != opened:
                    errors.append("%s: E %r closes B %r on thread %d" % (where, name, opened, tid))
        elif phase == "i":
            if event.get("s") not in ("t", "p", "g"):
                errors.append("%s: instant event without scope t/p/g" % where)
        else:
            errors.append("%s: unexpected phase %r" % (where, phase))
    for (pid, tid), stack in stacks.items():
        if stack:
            errors.append("thread %d: %d slices never closed (%s)" % (tid, len(stack), stack[-1]))
    threads = len([key for key in last_ts if key[1] != "C"])
    return errors, counts, depth, threads, counters, counter_sums


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        try:
            events = json.load(f)
        except json.JSONDecodeError as error:
            print("not JSON: %s" % error, file=sys.stderr)
            return 1
    errors, counts, depth, threads, counters, counter_sums = check(events)
    print(json.dumps({"counts": counts, "depth": depth, "threads": threads, "counters": counters,
                      "counter_sums": counter_sums}, sort_keys=True))
    for error in errors[:20]:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
