#!/usr/bin/env python3
"""Checks a Trace Event Format file (the JSON array form) against the format's rules, as
ui.perfetto.dev and chrome://tracing read it, with Python's own JSON parser:

  - the file is one JSON array of objects (with its closing bracket);
  - every event has "ph", "pid" and "tid" (integers); every event but metadata a "name" and a
    numeric "ts" (microseconds) that never decreases on its thread;
  - "B"/"E" are balanced per thread, each "E" naming the "B" it closes, nothing left open;
  - instant events ("i") have a scope "s" of t, p or g;
  - every thread is named (thread_name metadata) and every process (process_name) before
    their first event.

Prints one JSON object with what it counted (events per phase and name, threads, the deepest
nesting per name) and exits 1 with the broken rules on stderr."""
import json
import sys


def check(events):
    errors = []
    counts = {}
    depth = {}
    stacks = {}
    last_ts = {}
    named_threads = set()
    named_processes = set()
    if not isinstance(events, list):
        return ["the top level is not an array"], counts, depth, 0
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
    return errors, counts, depth, len(last_ts)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        try:
            events = json.load(f)
        except json.JSONDecodeError as error:
            print("not JSON: %s" % error, file=sys.stderr)
            return 1
    errors, counts, depth, threads = check(events)
    print(json.dumps({"counts": counts, "depth": depth, "threads": threads}, sort_keys=True))
    for error in errors[:20]:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
