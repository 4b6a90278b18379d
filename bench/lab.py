#!/usr/bin/env python3
"""txscale lab: reproduce the seed experiments as ratios, compare with peers,
write a Markdown report with CSV/JSON data and gnuplot PNG plots.

    bench/lab.py [--quick] [--threads 1,2] [--cpus 0-1] [--out DIR] [--only LIST]

Every experiment runs the project's own benchmark commands (txscale bench ...,
bench/peers, txscale send --profile, txscale ndr) and records their JSON rows.
A section whose tool or device is unavailable says so and why. Thread counts
and CPU lists are parameters, so the same command runs on a 64-core machine.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, timeout=900, env=None):
    """Run cmd (list); returns (rc, stdout, stderr)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"
    except FileNotFoundError as e:
        return 127, "", str(e)


def json_rows(text):
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return rows


class Progress:
    """One status line on stderr: experiment, step, elapsed, time left."""

    def __init__(self, plan):
        self.plan = plan  # list of (experiment, n_steps, est_seconds)
        self.t0 = time.monotonic()
        self.done_est = 0.0
        self.total_est = sum(p[2] for p in plan)
        self.tty = sys.stderr.isatty()

    def step(self, exp_idx, step, nsteps, what):
        name = self.plan[exp_idx][0]
        el = time.monotonic() - self.t0
        frac = min(self.done_est / self.total_est, 0.99) if self.total_est else 0
        left = (el / frac - el) if frac > 0.05 else self.total_est - self.done_est
        bar_n = int(frac * 24)
        bar = "#" * bar_n + "." * (24 - bar_n)
        msg = (f"[{bar}] {exp_idx + 1}/{len(self.plan)} {name}: step {step}/{nsteps} {what}"
               f"  elapsed {int(el) // 60}:{int(el) % 60:02d}  left ~{int(left) // 60}:{int(left) % 60:02d}")
        if self.tty:
            sys.stderr.write("\r\033[K" + msg[:150])
        else:
            sys.stderr.write(msg + "\n")
        sys.stderr.flush()

    def advance(self, est):
        self.done_est += est

    def finish(self):
        if self.tty:
            sys.stderr.write("\n")


def gnuplot_bars(png, title, ylabel, categories, series, logscale=False):
    """Clustered bar chart: categories on x, one bar per series."""
    if not shutil.which("gnuplot"):
        return False
    dat = png[:-4] + ".dat"
    with open(dat, "w") as f:
        f.write("cat " + " ".join(s.replace(" ", "_") for s in series) + "\n")
        for c in categories:
            f.write(c.replace(" ", "_") + " " + " ".join(
                ("%g" % series[s].get(c)) if series[s].get(c) is not None else "NaN" for s in series) + "\n")
    cols = len(series)
    script = f"""
set terminal pngcairo size 900,520 noenhanced font ',10'
set output '{png}'
set title '{title}'
set ylabel '{ylabel}'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:*]
{"set logscale y; set yrange [*:*]" if logscale else ""}
set xtics rotate by -20
plot '{dat}' using 2:xtic(1) title columnhead(2)""" + "".join(
        f", '' using {i + 2} title columnhead({i + 2})" for i in range(1, cols)) + "\n"
    rc, _, err = sh(["gnuplot"], timeout=60) if False else (None, None, None)
    p = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if p.returncode != 0:
        sys.stderr.write(f"lab: gnuplot failed for {png}: {p.stderr}\n")
        return False
    return True


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out)


def fmt(v, nd=2):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


class Lab:
    def __init__(self, args):
        self.a = args
        self.txs = os.path.join(ROOT, args.build, "txscale")
        self.out = args.out
        self.sections = []
        self.summary = []
        self.data = {}
        os.makedirs(self.out, exist_ok=True)

    # -- helpers -------------------------------------------------------
    def have_bench(self, name):
        rc, out, err = sh([self.txs, "bench", "--help"])
        return any(l.split()[:1] == [name] for l in out.splitlines() + err.splitlines())

    def save(self, name, rows):
        self.data[name] = rows
        with open(os.path.join(self.out, name + ".json"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        if rows:
            keys = []
            for r in rows:
                for k in r:
                    if k not in keys and not isinstance(r[k], (dict, list)):
                        keys.append(k)
            with open(os.path.join(self.out, name + ".csv"), "w") as f:
                f.write(",".join(keys) + "\n")
                for r in rows:
                    f.write(",".join(str(r.get(k, "")) for k in keys) + "\n")

    def section(self, title, body):
        self.sections.append(f"## {title}\n\n{body}\n")

    def unavailable(self, title, why):
        self.section(title, f"**Not measured in this run:** {why}\n")
        self.summary.append(f"{title}: not measured ({why})")

    # -- report --------------------------------------------------------
    def machine(self):
        cpu = "unknown"
        try:
            with open("/proc/cpuinfo") as f:
                for l in f:
                    if l.startswith("model name"):
                        cpu = l.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        return (f"{socket.gethostname()}: {os.cpu_count()} CPUs ({cpu}), kernel {platform.release()}, "
                f"{platform.system()} {platform.machine()}")

    def write_report(self, started, duration):
        p = os.path.join(self.out, "report.md")
        mode = "quick (smoke) run" if self.a.quick else "full run"
        with open(p, "w") as f:
            f.write(f"# txscale lab report\n\n")
            f.write(f"- date: {started.strftime('%Y-%m-%d %H:%M UTC')}\n- machine: {self.machine()}\n")
            f.write(f"- mode: {mode}, threads {self.a.threads}"
                    f"{', CPUs ' + self.a.cpus if self.a.cpus else ''}; took {duration:.0f} s\n")
            f.write(f"- command: `{' '.join(sys.argv)}`\n\n")
            f.write("Numbers are ratios measured in this one run (median of several repetitions), "
                    "against the kernel-faithful reference or a peer tool. Raw rows: the .json/.csv files "
                    "beside this report.\n\n")
            f.write("## Summary\n\n" + "\n".join("- " + s for s in self.summary) + "\n\n")
            for s in self.sections:
                f.write(s + "\n")
        return p
