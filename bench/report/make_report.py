#!/usr/bin/python3
"""Turn the raw runs of bench/run_all.sh into bench/results/: results.md (the Markdown
table, also printed), results.json (every run plus the summary) and ns_per_hit.png
(gnuplot, log scale). Standard library only; the chart needs gnuplot (gnuplot-nox).

    make_report.py RAW_DIR RESULTS_DIR
    make_report.py results.json RESULTS_DIR     (re-render an earlier run from its JSON)
"""
import json
import os
import statistics
import subprocess
import sys

TRACER_ORDER = ["untraced", "kernel_uprobes", "xprobe", "bpftrace", "uftrace", "ltrace", "gdb"]
MODE_LABELS = {
    "entry": "entry, 2 integer args",
    "entry_ret": "entry + return ($retval)",
    "string": "entry, string arg (a literal)",
    "heap_string": "entry, string arg (on the heap)",
}
MODE_ORDER = ["entry", "entry_ret", "string", "heap_string"]
ATTACH_ORDER = ["1", "100", "1000", "libc"]


def tracer_key(name):
    base = name.split("-")[0]
    return (TRACER_ORDER.index(base) if base in TRACER_ORDER else len(TRACER_ORDER), name)


PEER_NOTES = [
    "**kernel_uprobes**: definitions written to `uprobe_events` (file offsets from the ELF symbols), "
    "enabled in a tracefs instance of their own with `buffer_size_kb` sized for every event of the run; "
    "the trace is read after the run; `lost` = the instance's per-CPU overrun + dropped counters. "
    "The kernel emulates some first instructions (`push %rbx` of `work_str`) and single-steps others "
    "out of line (`lea` of `work`), so its cost differs a lot between the two functions.",
    "**xprobe**: `xprobe trace --summary -e DEF... -o FILE -- work_bench ...` with the same definitions "
    "(symbol names instead of offsets); events counted in FILE; drops and misses from its exit summary.",
    "**bpftrace**: `uprobe:`/`uretprobe:` printing the same fields with `printf` into `-o FILE`, "
    "workload started by `-c` after every probe is attached; `Lost N events` lines are summed.",
    "**uftrace**: `uftrace record -P work` (dynamic patching) on the same binary, built without `-pg` or "
    "`-fpatchable-function-entry`: this works (uftrace 0.13 is built with capstone). It records in the "
    "process (no trap), always both entry and exit; arguments with `-A`, return value with `-R`; counted "
    "from `uftrace replay`.",
    "**ltrace**: `ltrace -x work -L -F prototypes` (`-f` with threads); it always breaks on the return "
    "too, so its entry-only rows pay for a return probe as well.",
    "**gdb**: `gdb -batch` with `dprintf *work,...`; gdb has no return probe, so `$rax` is printed by a "
    "dprintf on `work`'s `ret` instruction.",
]


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_machine(path):
    machine = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition("=")
                machine[key] = value
    return machine


def ok(run):
    return "status" not in run or run["status"] == "ok"


def fmt_ns(value):
    if value is None:
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}"


def fmt_ms(us):
    return "—" if us is None else f"{us / 1000:,.1f}"


def summarize_hits(runs):
    """One summary per (tracer, mode, threads); ns/hit against the untraced median."""
    baselines = {}
    for run in runs:
        if run.get("tracer") == "untraced" and ok(run):
            baselines.setdefault((run["mode"], run["threads"]), []).append(run["loop_ns"])
    baseline = {key: statistics.median(values) for key, values in baselines.items()}

    groups = {}
    for run in runs:
        if "mode" not in run:  # a failed run records only its arguments
            mode, threads = (run.get("args", "?").split() + ["?", "?"])[:2]
            run = dict(run, mode=mode, threads=int(threads) if threads.isdigit() else threads)
        groups.setdefault((run["tracer"], run["mode"], run["threads"]), []).append(run)

    summaries = []
    for (tracer, mode, threads), group in groups.items():
        good = [r for r in group if ok(r)]
        failed = [r for r in group if not ok(r)]
        summary = {"tracer": tracer, "mode": mode, "threads": threads, "runs": len(good),
                   "failed_runs": [r["status"] for r in failed]}
        base = baseline.get((mode, threads))
        if good:
            n = good[0]["n"]
            summary["n"] = n
            summary["loop_ns_median"] = statistics.median(r["loop_ns"] for r in good)
            if base is not None:
                per_hit = [(r["loop_ns"] - base) / n for r in good]
                summary.update(ns_per_hit_median=statistics.median(per_hit),
                               ns_per_hit_min=min(per_hit), ns_per_hit_max=max(per_hit))
            summary["events_min"] = min(r["events"] for r in good)
            summary["expected"] = good[0]["expected"]
            summary["lost_max"] = max(r.get("lost", 0) for r in good)
            summary["complete"] = all(r["events"] == r["expected"] and r.get("lost", 0) == 0 for r in good)
            notes = sorted({r["note"] for r in good if r.get("note")})
            if notes:
                summary["note"] = "; ".join(notes)
        summaries.append(summary)

    kernel = {(s["mode"], s["threads"]): s for s in summaries
              if s["tracer"] == "kernel_uprobes" and s.get("complete")}
    for s in summaries:
        k = kernel.get((s["mode"], s["threads"]))
        if s.get("complete") and k and k.get("ns_per_hit_median", 0) > 0 and "ns_per_hit_median" in s:
            s["ratio_to_kernel"] = s["ns_per_hit_median"] / k["ns_per_hit_median"]
    summaries.sort(key=lambda s: (MODE_ORDER.index(s["mode"]) if s["mode"] in MODE_ORDER else 9,
                                  str(s["threads"]), tracer_key(s["tracer"])))
    return summaries


def ratio_matrix(summaries):
    """Tracer × configuration: median ns/hit as a multiple of the kernel's uprobes."""
    configs = []
    for s in summaries:
        if (s["mode"], s["threads"]) not in configs:
            configs.append((s["mode"], s["threads"]))
    tracers = sorted({s["tracer"] for s in summaries if s["tracer"] not in ("untraced",)}, key=tracer_key)
    by_key = {(s["tracer"], s["mode"], s["threads"]): s for s in summaries}
    short = {"entry": "entry", "entry_ret": "entry+ret", "string": "string", "heap_string": "heap string"}
    lines = ["| tracer | " + " | ".join(f"{short.get(m, m)}, {t}T" for m, t in configs) + " |",
             "|---|" + "---:|" * len(configs)]
    for tracer in tracers:
        cells = []
        for mode, threads in configs:
            s = by_key.get((tracer, mode, threads))
            if not s or not s.get("runs"):
                cells.append("—")
            elif not s.get("complete"):
                cells.append("⚠ lost events")
            elif s.get("ratio_to_kernel") is not None:
                cells.append(f"{s['ratio_to_kernel']:.2f}×")
            else:
                cells.append("—")
        lines.append(f"| {tracer} | " + " | ".join(cells) + " |")
    return lines


def hit_table(summaries, availability, n):
    lines = [
        f"N = {n:,} calls of `work` (or `work_str`) per run, the same N for every tracer; "
        "with 4 threads the N calls are split over the threads. "
        "ns/hit = (traced loop time − untraced loop time) / N, median of the runs (min, max); "
        "for entry + return one hit is one call, which records two events.",
        "",
        "| probe | threads | tracer | ns/hit | min | max | × kernel uprobes | events recorded | notes |",
        "|---|---:|---|---:|---:|---:|---:|---|---|",
    ]
    for s in summaries:
        if s["tracer"] == "untraced":
            events = "—"
            value = f"{s['loop_ns_median'] / s['n']:.1f} (loop ns/call)" if "n" in s else "—"
            lines.append(f"| {MODE_LABELS.get(s['mode'], s['mode'])} | {s['threads']} | untraced | "
                         f"{value} | | | | {events} | baseline |")
            continue
        if not s["runs"]:
            lines.append(f"| {MODE_LABELS.get(s['mode'], s['mode'])} | {s['threads']} | {s['tracer']} | — | | | | — | "
                         f"{s['failed_runs'][0] if s['failed_runs'] else 'no run'} |")
            continue
        if s.get("complete"):
            events = f"{s['events_min']:,} / {s['expected']:,} ✓"
        else:
            events = f"⚠ LOST: {s['events_min']:,} / {s['expected']:,} (dropped {s['lost_max']:,})"
        ratio = s.get("ratio_to_kernel")
        ratio_text = f"{ratio:.2f}" if ratio is not None else ("not comparable" if not s.get("complete") else "—")
        notes = [s.get("note", "")]
        if s["failed_runs"]:
            notes.append(f"{len(s['failed_runs'])} run(s) failed: {s['failed_runs'][0]}")
        lines.append(
            f"| {MODE_LABELS.get(s['mode'], s['mode'])} | {s['threads']} | {s['tracer']} | "
            f"{fmt_ns(s.get('ns_per_hit_median'))} | {fmt_ns(s.get('ns_per_hit_min'))} | "
            f"{fmt_ns(s.get('ns_per_hit_max'))} | {ratio_text} | {events} | {'; '.join(x for x in notes if x)} |")
    unavailable = [a for a in availability if a["status"] != "ok"]
    for a in sorted(unavailable, key=lambda a: tracer_key(a["tracer"])):
        lines.append(f"| all | 1, 4 | {a['tracer']} | — | | | | — | {a['status']} |")
    return lines


def summarize_attach(runs):
    baseline_runs = [r["ready_us"] for r in runs if r.get("tracer") == "untraced" and ok(r)]
    baseline = statistics.median(baseline_runs) if baseline_runs else 0
    groups = {}
    for run in runs:
        if run.get("tracer") == "untraced":
            continue
        probes = str(run.get("probes", run.get("args", "?").split()[0] if run.get("args") else "?"))
        groups.setdefault((run["tracer"], probes), []).append(run)
    summaries = []
    for (tracer, probes), group in groups.items():
        measured = [r for r in group if r.get("ready_us", 0) > 0]
        s = {"tracer": tracer, "probes": probes, "runs": len(measured),
             "statuses": sorted({r.get("status", "ok") for r in group})}
        if measured:
            live = [r["ready_us"] - baseline for r in measured]
            s.update(live_us_median=statistics.median(live), live_us_min=min(live), live_us_max=max(live))
            s["requested"] = measured[0].get("requested")
            s["attached"] = measured[0].get("attached")
            s["hits_min"] = min(r.get("hits", 0) for r in measured)
            s["expected_hits"] = measured[0].get("expected_hits")
            # xprobe starts the program itself: its tear-down is timed from the program's main
            # to xprobe's exit, which includes the (sub-millisecond) run of attach_target.
            detach = [r.get("detach_us", r.get("run_and_detach_us")) for r in measured
                      if "detach_us" in r or "run_and_detach_us" in r]
            if detach:
                s["detach_us_median"] = statistics.median(detach)
            s["all_live"] = all(r.get("hits", 0) >= r.get("expected_hits", 1) for r in measured)
        summaries.append(s)
    summaries.sort(key=lambda s: (ATTACH_ORDER.index(s["probes"]) if s["probes"] in ATTACH_ORDER else 9,
                                  tracer_key(s["tracer"])))
    return baseline, summaries


def attach_table(baseline, summaries, availability):
    lines = [
        "Live = the traced program runs with every probe in place. The clock starts when the "
        "tracer starts (kernel: the first write to `uprobe_events`) and stops when `attach_target`'s "
        "`main` begins; kernel and bpftrace start `attach_target` once they are ready (bpftrace: its "
        "BEGIN probe fired, which bpftrace triggers after attaching every other probe; kernel: "
        "definitions written in one go and the group enabled), xprobe starts it itself. "
        f"The untraced launch-to-main time ({baseline / 1000:.1f} ms, median) is subtracted. "
        "Probes 1/100/1000: `probe_target_NNN` of attach_target, each called once by main, so the hit "
        "count checks that all were live; libc: every function symbol of libc.so.6 (`.dynsym`, one per "
        "address for the kernel; bpftrace's and xprobe's own glob `libc.so.6:*`), where only ≥1 hit "
        "can be checked. Detach = the tracer's tear-down after the program ran (kernel: disable + "
        "remove the events; bpftrace: SIGINT until exit; xprobe: from the program's main until xprobe has exited, "
        "the program's own sub-millisecond run included).",
        "",
        "| probes | tracer | requested / attached | live after (ms) | min | max | runs | all live? | detach (ms) | status |",
        "|---|---|---|---:|---:|---:|---:|---|---:|---|",
    ]
    for s in summaries:
        if not s["runs"]:
            lines.append(f"| {s['probes']} | {s['tracer']} | — | — | | | 0 | — | — | {'; '.join(s['statuses'])} |")
            continue
        attached = s.get("attached")
        req = f"{s.get('requested')} / {attached if attached not in (None, '') else '?'}"
        live = "✓" if s["all_live"] else f"⚠ {s['hits_min']} of {s['expected_hits']} hit"
        if s["probes"] == "libc" and s["all_live"]:
            live = f"≥1 hit ({s['hits_min']:,})"
        lines.append(f"| {s['probes']} | {s['tracer']} | {req} | {fmt_ms(s['live_us_median'])} | "
                     f"{fmt_ms(s['live_us_min'])} | {fmt_ms(s['live_us_max'])} | {s['runs']} | {live} | "
                     f"{fmt_ms(s.get('detach_us_median'))} | {'; '.join(s['statuses'])} |")
    for a in availability:
        if a["status"] != "ok" and a["tracer"] in ("xprobe", "kernel_uprobes", "bpftrace"):
            lines.append(f"| all | {a['tracer']} | — | — | | | 0 | — | — | {a['status']} |")
    return lines


def throughput_table(runs):
    lines = [
        "xprobe records entry events (`a`, `b`) of `work` into a file (-o); `work_bench --delay-ns D` "
        "spins D ns between calls to offer a lower rate. Recorded rate = events / loop time, median of "
        "the runs (min, max). `work` is a jump-optimized probe (the default engine): the thread is never "
        "stopped, the agent records into the program's 8 MiB ring and xprobe drains it concurrently; a "
        "burst the ring cannot hold is dropped and counted (the dropped column). Peak RSS by GNU time (the larger of "
        "xprobe's and its child's; the workload alone stays near 1.5 MB), largest over the runs.",
        "",
        "| threads | delay between calls (ns) | calls | recorded events/s | min | max | runs | all events recorded? | dropped | peak RSS (MB) | trace file (MB) |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    groups = {}
    for r in runs:
        groups.setdefault((r.get("threads", 0), r.get("delay_ns", 0)), []).append(r)
    best = None
    for (threads, delay), group in sorted(groups.items()):
        good = [r for r in group if ok(r)]
        if not good:
            lines.append(f"| {threads} | {delay} | — | — | | | 0 | — | — | — | {group[0]['status']} |")
            continue
        rates = [r["events"] / (r["loop_ns"] / 1e9) for r in good if r["loop_ns"]]
        complete = all(r["events"] == r["expected"] and r.get("lost", 0) == 0 for r in good)
        rate = statistics.median(rates)
        rss = max(r["max_rss_kb"] for r in good) / 1024
        if complete and (best is None or rate > best[0]):
            best = (rate, threads, delay, rss)
        events = "✓" if complete else "⚠ LOST: " + ", ".join(f"{r['events']:,}/{r['expected']:,}" for r in good)
        lines.append(f"| {threads} | {delay:,} | {good[0]['n']:,} | {rate:,.0f} | {min(rates):,.0f} | "
                     f"{max(rates):,.0f} | {len(good)} | {events} | {max(r.get('lost', 0) for r in good):,} | "
                     f"{rss:.1f} | {good[0]['trace_bytes'] / 1e6:.1f} |")
    if best:
        lines += ["", f"Largest sustained rate without a dropped event: **{best[0]:,.0f} events/s** "
                  f"({best[1]} thread(s), delay {best[2]} ns), peak RSS {best[3]:.1f} MB."]
    return lines


def write_chart(summaries, results_dir, n):
    """Clustered bars: one cluster per (probe, threads), one bar per tracer, log scale."""
    tracers = sorted({s["tracer"] for s in summaries if s["tracer"] != "untraced" and s.get("ns_per_hit_median")},
                     key=tracer_key)
    configs = []
    for s in summaries:
        key = (s["mode"], s["threads"])
        if key not in configs:
            configs.append(key)
    if not tracers or not configs:
        return None
    values = {(s["tracer"], s["mode"], s["threads"]): s for s in summaries}
    incomplete = {s["tracer"] for s in summaries if s.get("runs") and not s.get("complete")}
    headers = [f'"{t} (LOST EVENTS)"' if t in incomplete else f'"{t}"' for t in tracers]
    data_path = os.path.join(results_dir, ".ns_per_hit.dat")
    with open(data_path, "w") as f:
        f.write("config " + " ".join(headers) + "\n")
        for mode, threads in configs:
            label = {"entry": "entry", "entry_ret": "entry+ret", "string": "string", "heap_string": "heap string"}.get(mode, mode)
            row = [f'"{label}, {threads}T"']
            for t in tracers:
                s = values.get((t, mode, threads))
                v = s.get("ns_per_hit_median") if s else None
                row.append(f"{v:.3f}" if v and v > 0 else "-")
            f.write(" ".join(row) + "\n")
    png = os.path.join(results_dir, "ns_per_hit.png")
    script = f"""
set terminal pngcairo size 1200,650 font "DejaVu Sans,11" noenhanced
set output "{png}"
set title "ns per hit (median of the runs), work_bench, N = {n:,} calls per run; lower is better"
set ylabel "ns per hit (log scale)"
set logscale y
set format y "%.0s%c"
set yrange [10:*]
set grid ytics mytics
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set datafile missing "-"
plot for [i=2:{len(tracers) + 1}] "{data_path}" using i:xtic(1) title columnheader(i)
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"make_report: no chart ({error})", file=sys.stderr)
        return None
    finally:
        os.unlink(data_path)
    return png


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    raw_dir, results_dir = sys.argv[1:]
    os.makedirs(results_dir, exist_ok=True)
    if os.path.isfile(raw_dir):
        with open(raw_dir) as f:
            earlier = json.load(f)
        machine, availability = earlier["machine"], earlier["availability"]
        hit_runs, attach_runs = earlier["per_hit"]["runs"], earlier["attach"]["runs"]
        throughput_runs, decoder = earlier["throughput"]["runs"], earlier["decoder_markdown"]
    else:
        machine = read_machine(os.path.join(raw_dir, "machine.txt"))
        availability = read_jsonl(os.path.join(raw_dir, "availability.jsonl"))
        hit_runs = read_jsonl(os.path.join(raw_dir, "hit.jsonl"))
        attach_runs = read_jsonl(os.path.join(raw_dir, "attach.jsonl"))
        throughput_runs = read_jsonl(os.path.join(raw_dir, "throughput.jsonl"))
        decoder_path = os.path.join(raw_dir, "decoder.md")
        decoder = open(decoder_path).read().strip() if os.path.exists(decoder_path) else None

    hit_summaries = summarize_hits(hit_runs)
    attach_baseline, attach_summaries = summarize_attach(attach_runs)

    md = ["# xprobe benchmarks", ""]
    md.append(f"Measured {machine.get('date', '?')} at commit {machine.get('commit', '?')} on "
              f"{machine.get('model', '?')} ({machine.get('cpus', '?')} CPUs"
              f"{', ' + machine['hypervisor'] + ' guest' if machine.get('hypervisor') else ''}), "
              f"Linux {machine.get('kernel', '?')}, {machine.get('os', '?')}. "
              f"Peers: {machine.get('bpftrace', '?')}, {machine.get('ltrace', '?')}, "
              f"{machine.get('gdb', '?')}, {machine.get('uftrace', '?')}. "
              f"Load average (1, 5, 15 min): {machine.get('load', '?')} — the machine is shared, "
              "so compare ratios within one run rather than absolute times across runs. "
              f"`./run bench` (bench/run_all.sh) wrote this file.")
    if machine.get("quick") == "1":
        md += ["", "**Quick run (--quick): small N, fewer attach sizes; not for comparison.**"]
    md += ["", "## Per-hit cost", "",
           "Median ns/hit of each tracer as a multiple of the kernel's uprobes on the same probe "
           "(lower is better; details below):", ""]
    md += ratio_matrix(hit_summaries)
    md.append("")
    md += hit_table(hit_summaries, availability, int(machine.get("n", 0) or 0))
    md += ["", "![ns per hit](ns_per_hit.png)", "", "How each tracer was run:", ""]
    md += [f"- {note}" for note in PEER_NOTES]
    md.append("")
    md += ["## Attach cost", ""]
    if attach_summaries or attach_runs:
        md += attach_table(attach_baseline, attach_summaries, availability)
        md += ["", f"Runs: {machine.get('runs', '?')} for 1 and 100 probes, {machine.get('attach_runs_large', '?')} "
               "for 1000 and libc (the kernel's and bpftrace's tear-down costs tens of ms per probe here)."]
    else:
        md.append("Not run.")
    md += ["", "## Event throughput (xprobe)", ""]
    if throughput_runs:
        md += throughput_table(throughput_runs)
    else:
        xprobe_status = next((a["status"] for a in availability if a["tracer"] == "xprobe"), "not run")
        md.append(f"Not measured: xprobe {xprobe_status}.")
    md += ["", "## Decoder throughput", ""]
    md.append(decoder if decoder else "Not measured: bench/decoder_bench.sh does not exist yet.")
    md.append("")

    text = "\n".join(md)
    with open(os.path.join(results_dir, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(results_dir, "results.json"), "w") as f:
        json.dump({"machine": machine, "availability": availability,
                   "per_hit": {"summary": hit_summaries, "runs": hit_runs},
                   "attach": {"untraced_launch_to_main_us": attach_baseline,
                              "summary": attach_summaries, "runs": attach_runs},
                   "throughput": {"runs": throughput_runs},
                   "decoder_markdown": decoder}, f, indent=1)
    chart = write_chart(hit_summaries, results_dir, int(machine.get("n", 0) or 0))
    print(text)
    print(f"\nwritten: {results_dir}/results.md, results.json" + (", ns_per_hit.png" if chart else " (no chart)"))


if __name__ == "__main__":
    main()
