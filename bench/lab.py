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
    def cpu_args(self, n=None):
        """-A CPUS for txscale commands: the user's CPU list, else (when the
        command runs n threads) CPUs 0..n-1, one thread per CPU as the lab's
        figures were taken (send runs unpinned by default)."""
        if self.a.cpus:
            return ["-A", self.a.cpus]
        if n and n <= (os.cpu_count() or 1):
            return ["-A", ",".join(str(i) for i in range(n))]
        return []

    def cpus_expanded(self):
        """The CPU list as plain comma-separated numbers (0-2,5 -> 0,1,2,5)."""
        out = []
        for part in self.a.cpus.split(","):
            if "-" in part:
                lo, hi = part.split("-")
                out += [str(c) for c in range(int(lo), int(hi) + 1)]
            elif part:
                out.append(part)
        return ",".join(out)

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


# ---------------------------------------------------------------------------
# experiments: each returns nothing; fills sections/summary; est = seconds
# ---------------------------------------------------------------------------
SEED_IDENT = {"cas-loop": 3.4, "atomic": 12.8, "percpu-segment": 14.3}  # Mpps, 32 cores, seed 000


def exp_ident(lab, prog, idx):
    title = "1. IP ID allocators (seed 000-002: ip_idents_reserve)"
    if not lab.have_bench("ident"):
        return lab.unavailable(title, "`txscale bench ident` is not built")
    runs = "3" if lab.a.quick else "7"
    ops = "2M" if lab.a.quick else "20M"
    rows = []
    for i, mode in enumerate(["--hot", "--spread"]):
        prog.step(idx, i + 1, 3, f"bench ident {mode}")
        cmd = [lab.txs, "bench", "ident", "--strategies", "cas-loop,atomic,percpu-segment,lease,flow",
               "--threads", lab.a.threads, mode, "--json", "--runs", runs, "--ops", ops] + lab.cpu_args()
        rc, out, err = sh(cmd)
        if rc != 0:
            return lab.unavailable(title, f"`{' '.join(cmd[1:])}` failed: {err.strip()[:200]}")
        rows += json_rows(out)
    lab.save("ident", rows)
    tmax = max(r["threads"] for r in rows)
    hot = {(r["strategy"], r["threads"]): r for r in rows if r.get("hot")}
    threads = sorted({r["threads"] for r in rows})
    strategies = [s for s in ["cas-loop", "atomic", "percpu-segment", "lease", "flow"]
                  if any(k[0] == s for k in hot)]
    body = ["One hot bucket (every core sends to one destination, as in the seed's iperf3 test): "
            "Mops/s total and ns per ID per thread.\n"]
    body.append(md_table(["strategy"] + [f"{t} thr Mops/s" for t in threads] + [f"{tmax} thr ns/op"],
                         [[s] + [fmt(hot.get((s, t), {}).get("mops")) for t in threads]
                          + [fmt(hot.get((s, tmax), {}).get("ns_per_op"))] for s in strategies]))

    def ratio(a, b):
        x, y = hot.get((a, tmax), {}).get("mops"), hot.get((b, tmax), {}).get("mops")
        return x / y if x and y else None

    body.append(f"\nRatios at {tmax} threads on one hot bucket, against the seed's 32-core figures "
                "(3.4 / 12.8 / 14.3 Mpps):\n")
    body.append(md_table(["ratio", "seed (32 cores, kernel)", f"txscale ({tmax} threads, user space)"], [
        ["atomic / cas-loop", fmt(12.8 / 3.4), fmt(ratio("atomic", "cas-loop"))],
        ["percpu-segment / cas-loop", fmt(14.3 / 3.4), fmt(ratio("percpu-segment", "cas-loop"))],
        ["percpu-segment / atomic", fmt(14.3 / 12.8), fmt(ratio("percpu-segment", "atomic"))],
        ["lease / atomic", "-", fmt(ratio("lease", "atomic"))],
        ["lease / cas-loop", "-", fmt(ratio("lease", "cas-loop"))],
        ["lease / percpu-segment", "-", fmt(ratio("lease", "percpu-segment"))],
    ]))
    series = {f"{t} threads": {s: hot.get((s, t), {}).get("mops") for s in strategies} for t in threads}
    if gnuplot_bars(os.path.join(lab.out, "ident.png"), "IP ID reserve, one hot bucket", "Mops/s (log)",
                    strategies, series, logscale=True):
        body.append("\n![ident](ident.png)\n")
    spread = [r for r in rows if not r.get("hot")]
    if spread:
        body.append("\n2048 buckets (spread destinations):\n")
        body.append(md_table(["strategy", "threads", "Mops/s", "ns/op"],
                             [[r["strategy"], r["threads"], fmt(r["mops"]), fmt(r["ns_per_op"])] for r in spread]))
    # reuse distance on the real clock (paced threads, one destination)
    rt = max(2, min(tmax, 2))
    rates = "100k,0" if lab.a.quick else "1k,10k,100k,0"
    prog.step(idx, 3, 3, f"bench ident --reuse at {rates}")
    cmd = [lab.txs, "bench", "ident", "--reuse", "--strategies", "atomic,lease,percpu-segment", "--threads",
           str(rt), "--rates", rates, "--reuse-ids", "140000" if lab.a.quick else "150000", "--json"] + lab.cpu_args(rt)
    rc, out, err = sh(cmd)
    reuse = json_rows(out) if rc == 0 else []
    if reuse:
        lab.save("ident-reuse", reuse)
        body.append(f"\nReuse distance for one destination on the real clock ({rt} paced threads, IDs merged by "
                    "time; `bench ident --reuse`): IDs of that destination between two uses of an ID "
                    "(the kernel's window is 65536). docs/results/ident-wire.md has the same from a capture.\n")
        body.append(md_table(["strategy", "rate/thread", "min", "p1", "median", "wasted"],
                             [[r["strategy"], r["rate_per_thread"] or "max", r["min"], r["p1"], r["median"],
                               r["wasted"]] for r in reuse]))
    else:
        body.append(f"\n`{' '.join(cmd[1:])}` failed: {err.strip()[:200]}\n")
    lease_min = min((r["min"] for r in reuse if r["strategy"] == "lease"), default=None)
    lab.section(title, "\n".join(body))
    lab.summary.append(f"IP ID, {tmax} threads, hot bucket: lease = {fmt(ratio('lease', 'atomic'))}x atomic, "
                       f"{fmt(ratio('lease', 'cas-loop'))}x cas-loop, {fmt(ratio('lease', 'percpu-segment'))}x "
                       f"percpu-segment; real-time reuse distance of lease, smallest over the rates: {lease_min}")


def exp_linksel(lab, prog, idx):
    title = "2. Bonding round-robin counter (seed 003: rr_tx_counter)"
    if not lab.have_bench("linksel"):
        return lab.unavailable(title, "`txscale bench linksel` is not built")
    prog.step(idx, 1, 1, "bench linksel")
    cmd = [lab.txs, "bench", "linksel", "--threads", lab.a.threads, "--links", "4", "--json"] + lab.cpu_args()
    rc, out, err = sh(cmd)
    if rc != 0:
        return lab.unavailable(title, f"`{' '.join(cmd[1:])}` failed: {err.strip()[:200]}")
    rows = json_rows(out)
    lab.save("linksel", rows)
    tmax = max(r["threads"] for r in rows)
    body = ["ns per selection, imbalance (max/min link share over windows of 1000 packets) and Jain's "
            "fairness index, 4 links.\n",
            md_table(["mode", "scope", "threads", "ns/op", "imbalance", "Jain"],
                     [[r.get("mode"), r.get("scope", "-"), r["threads"], fmt(r.get("ns_per_op")),
                       fmt(r.get("imbalance"), 3), fmt(r.get("jain"), 4)] for r in rows])]
    rr = {(r.get("scope"), r["threads"]): r for r in rows if r.get("mode") == "balance-rr"}
    sh_ = rr.get(("shared", tmax), {}).get("ns_per_op")
    pc = rr.get(("percore", tmax), {}).get("ns_per_op")
    st = rr.get(("staggered", tmax), {}).get("ns_per_op")
    r1 = sh_ / pc if sh_ and pc else None
    r2 = sh_ / st if sh_ and st else None
    body.append(f"\nAt {tmax} threads: shared / percore = {fmt(r1)}x, shared / staggered = {fmt(r2)}x "
                "(seed: CPU load 50% -> 10%, i.e. 5x, on a 100 Gbit/s 64-byte test).\n")
    cats = sorted({f"{r.get('mode')}/{r.get('scope', '-')}" for r in rows})
    threads = sorted({r["threads"] for r in rows})
    series = {f"{t} threads": {f"{r.get('mode')}/{r.get('scope', '-')}": r.get("ns_per_op")
                               for r in rows if r["threads"] == t} for t in threads}
    if gnuplot_bars(os.path.join(lab.out, "linksel.png"), "link selection cost", "ns per selection (log)",
                    cats, series, logscale=True):
        body.append("![linksel](linksel.png)\n")
    lab.section(title, "\n".join(body))
    lab.summary.append(f"Bonding rr at {tmax} threads: percore {fmt(r1)}x, staggered {fmt(r2)}x faster than "
                       f"the shared counter; staggered imbalance "
                       f"{fmt(rr.get(('staggered', tmax), {}).get('imbalance'), 3)} vs shared "
                       f"{fmt(rr.get(('shared', tmax), {}).get('imbalance'), 3)}")


SEED_UDPV6_TX = 2240481  # tx/s per core, dummy netdev, 16-byte datagrams (seed 004)


def exp_sendmsg(lab, prog, idx):
    title = "3. sendmsg path (seed 004: udpv6_sendmsg over a dummy netdev)"
    if not lab.have_bench("sendmsg"):
        return lab.unavailable(title, "`txscale bench sendmsg` is not built")
    prog.step(idx, 1, 2, "bench sendmsg")
    n = "2M" if lab.a.quick else "20M"
    runs = "3" if lab.a.quick else "7"
    cmd = [lab.txs, "bench", "sendmsg", "-n", n, "--runs", runs, "--json"] + lab.cpu_args(1)
    rc, out, err = sh(cmd)
    if rc != 0:
        return lab.unavailable(title, f"`{' '.join(cmd[1:])}` failed: {err.strip()[:200]}")
    rows = [r for r in json_rows(out) if "calls_per_s" in r]  # ratio rows are derived again below
    prog.step(idx, 2, 2, "callgrind instructions per call")
    ipc = {}
    if shutil.which("valgrind"):
        rc, out2, err2 = sh(["bash", "bench/sendmsg-callgrind", lab.txs, "50000" if lab.a.quick else "200000"])
        for line in out2.splitlines():
            parts = line.replace(":", "").split()
            if len(parts) >= 3 and parts[0].startswith("IPv"):
                ipc[(int(parts[0][3:]), parts[1] == "connected")] = float(parts[2])
    for r in rows:
        r["instructions_per_call"] = ipc.get((r.get("family"), r.get("connected")))
    lab.save("sendmsg", rows)
    body = ["16-byte payloads into the dummy device, one core; calls/s is the median of the runs. "
            "Instructions per call from callgrind (`bench/sendmsg-callgrind`), setup excluded.\n",
            md_table(["family", "destination", "M calls/s per core", "x seed (2.24 M tx/s)", "instructions/call"],
                     [[f"IPv{r['family']}", "connected" if r["connected"] else "per call",
                       fmt(r["calls_per_s"] / 1e6), fmt(r["calls_per_s"] / SEED_UDPV6_TX, 1),
                       fmt(r.get("instructions_per_call"), 0)] for r in rows])]
    by = {(r["family"], r["connected"]): r["calls_per_s"] for r in rows}
    ratios = []
    for conn in (True, False):
        if by.get((4, conn)) and by.get((6, conn)):
            ratios.append((conn, by[(4, conn)] / by[(6, conn)]))
    body.append("\nIPv6 / IPv4 cost ratio (time per call): " + ", ".join(
        f"{'connected' if c else 'unconnected'} {fmt(x)}" for c, x in ratios) + "\n")
    v6 = by.get((6, True))
    lab.section(title, "\n".join(body))
    lab.summary.append(f"sendmsg: IPv6 connected {fmt((v6 or 0) / 1e6)} M calls/s per core = "
                       f"{fmt((v6 or 0) / SEED_UDPV6_TX, 1)}x the seed's udpv6_sendmsg figure; IPv6/IPv4 cost "
                       + ", ".join(f"{fmt(x)}" for _, x in ratios))


def load_json_any(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return []
    text = text.strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return []
    return json_rows(text)


def exp_e2e(lab, prog, idx):
    title = "4. End to end on a veth: txscale devices beside trafgen, iperf3 and sockperf"
    if os.geteuid() != 0:
        return lab.unavailable(title, "needs root to create the network namespaces (scripts/netns-lab)")
    rows = []
    notes = []
    threads = lab.a.threads.split(",")[:1] if lab.a.quick else lab.a.threads.split(",")
    peers_args = (["--threads", ",".join(threads)] + (["--quick"] if lab.a.quick else []) +
                  (["--cpus", lab.cpus_expanded()] if lab.a.cpus else []))
    # bench/peers twice: receiver drop in the stack (route work on the sender's
    # CPU, as a plain veth peer costs) and in XDP (each sender's own cost)
    runs = [("bench/peers", "peers", peers_args + ["--name", "labe2e"]),
            ("bench/peers", "peers-xdp", peers_args + ["--name", "labe2x", "--sink", "xdp"]),
            ("bench/peers-ring", "peers-ring", ["--threads", " ".join(threads)] +
             (["--quick"] if lab.a.quick else []))]
    for i, (s, name, extra) in enumerate(runs):
        if not os.path.exists(os.path.join(ROOT, s)):
            continue
        prog.step(idx, i + 1, len(runs), f"{s} {' '.join(extra[-2:]) if name == 'peers-xdp' else ''}")
        out = os.path.join(lab.out, name + ".json")
        rc, so, se = sh(["bash", s, "--txscale", lab.txs, "--out", out] + extra, timeout=1800)
        if rc != 0:
            notes.append(f"`{s}` exited {rc}: {(se or so).strip()[-300:]}")
            continue
        rows += load_json_any(out)
    if not rows:
        return lab.unavailable(title, "; ".join(notes) or "no peer benchmark script ran")
    lab.save("e2e", rows)
    body = ["16-byte UDP payloads from one namespace to another over a veth pair, every tool counted "
            "on the receiver's veth RX counter over the same window; median of alternating rounds.\n",
            md_table(["tool", "device", "receiver sink", "threads", "pps", "pps per core"],
                     [[r.get("tool"), r.get("device"), r.get("sink", "stack"), r.get("threads"),
                       fmt(float(r.get("pps", 0)), 0),
                       fmt(float(r.get("pps_per_core", r.get("pps", 0) / max(r.get("threads", 1), 1))), 0)]
                      for r in rows])]

    def pick(tool, dev_sub, t, sink):
        for r in rows:
            if (r.get("tool") == tool and dev_sub in str(r.get("device")) and r.get("threads") == t
                    and r.get("sink", "stack") == sink):
                return r.get("pps")
        return None

    lines = []
    for t in sorted({r.get("threads") for r in rows}):
        for sink in ("stack", "xdp"):
            pairs = [("txscale udp (sendmmsg) / iperf3", "sendmmsg", "iperf3", ""),
                     ("txscale udp:gso / iperf3", "gso", "iperf3", ""),
                     ("txscale udp (sendmmsg) / sockperf", "sendmmsg", "sockperf", ""),
                     ("txscale packet / trafgen", "packet", "trafgen", ""),
                     ("txscale xdp / trafgen", "xdp", "trafgen", ""),
                     ("txscale xdp / txscale packet", "xdp", "txscale", "packet")]
            for name, dev_a, tool_b, dev_b in pairs:
                a, b = pick("txscale", dev_a, t, sink), pick(tool_b, dev_b, t, sink)
                if a and b:
                    lines.append([name, sink, t, fmt(a / b)])
    if lines:
        body.append("\nRatios measured in this run:\n")
        body.append(md_table(["ratio", "receiver sink", "threads", "value"], lines))
        lab.summary.append("End to end: " + "; ".join(f"{l[0]} = {l[3]}x ({l[2]} thr, {l[1]} sink)"
                                                      for l in lines if l[2] == 1))
    def cat(r):
        return f"{r.get('tool')} {str(r.get('device')).split(' ')[0]}"
    cats = []
    for r in rows:
        if r.get("threads") == 1 and cat(r) not in cats:
            cats.append(cat(r))
    series = {f"1 thread, {sink} sink": {cat(r): r.get("pps", 0) / 1e3 for r in rows
                                         if r.get("threads") == 1 and r.get("sink", "stack") == sink}
              for sink in ("stack", "xdp")}
    if cats and gnuplot_bars(os.path.join(lab.out, "e2e.png"), "16-byte UDP over veth, 1 sender core",
                             "kpps", cats, series):
        body.append("\n![e2e](e2e.png)\n")
    if notes:
        body.append("\nNotes: " + "; ".join(notes) + "\n")
    lab.section(title, "\n".join(body))


def exp_profile(lab, prog, idx):
    title = "5. Where the time goes (the seed's perf report, in user space)"
    rc, out, err = sh([lab.txs, "send", "--help"])
    if "--profile" not in out:
        return lab.unavailable(title, "`txscale send --profile` is not built")
    strategies = ["cas-loop", "atomic", "percpu-segment", "lease", "flow"]
    tmax = max(int(t) for t in lab.a.threads.split(","))
    n = "10M" if lab.a.quick else "50M"
    rows = []
    for i, s in enumerate(strategies):
        prog.step(idx, i + 1, len(strategies), f"send --profile --ident {s}")
        cmd = [lab.txs, "send", "--dev", "dummy", "--profile", "-n", n, "-P", str(tmax), "-i", "0", "-J",
               "--ident", s, "198.18.0.2"] + lab.cpu_args(tmax)
        rc, out, err = sh(cmd)
        summ = [r for r in json_rows(out) if r.get("type") == "summary"]
        if rc != 0 or not summ or "profile" not in summ[-1]:
            return lab.unavailable(title, f"`{' '.join(cmd[1:])}` failed: {err.strip()[:200]}")
        p = summ[-1]["profile"]
        row = {"strategy": s, "threads": tmax, "pps": summ[-1].get("pps")}
        for st, v in p.get("stages", {}).items():
            row[f"{st}_share"] = v.get("share")
            row[f"{st}_ns_per_pkt"] = v.get("ns_per_pkt")
        rows.append(row)
    lab.save("profile", rows)
    stages = [k[:-6] for k in rows[0] if k.endswith("_share")]
    body = [f"`txscale send --profile` on the dummy device, {tmax} threads, one destination (one hot ID bucket), "
            "16-byte payloads: share of sampled cycles per stage of the walk. The seed's perf report had "
            "`ip_idents_reserve` at 63% with the cmpxchg loop and 17% after the revert to atomic_add_return.\n",
            md_table(["--ident", "Mpps"] + [f"{s} %" for s in stages] + ["ident ns/pkt"],
                     [[r["strategy"], fmt((r.get("pps") or 0) / 1e6)] +
                      [fmt(100 * (r.get(f"{s}_share") or 0), 1) for s in stages] +
                      [fmt(r.get("ident_ns_per_pkt"))] for r in rows])]
    series = {s: {r["strategy"]: 100 * (r.get(f"{s}_share") or 0) for r in rows} for s in stages}
    if gnuplot_bars(os.path.join(lab.out, "profile.png"), f"share of cycles per stage, {tmax} threads, hot bucket",
                    "% of sampled cycles", [r["strategy"] for r in rows], series):
        body.append("\n![profile](profile.png)\n")
    lab.section(title, "\n".join(body))
    by = {r["strategy"]: r for r in rows}
    lab.summary.append("Profile, ident share of the walk: " + ", ".join(
        f"{s} {fmt(100 * (by[s].get('ident_share') or 0), 1)}%" for s in strategies if s in by))


def exp_ndr(lab, prog, idx):
    title = "6. Zero-loss rate search (NDR)"
    rc, out, err = sh([lab.txs, "--help"])
    if not any(l.split()[:1] == ["ndr"] for l in out.splitlines()):
        return lab.unavailable(title, "`txscale ndr` is not built")
    if os.geteuid() != 0:
        return lab.unavailable(title, "needs root to create the network namespaces (scripts/netns-lab)")
    rows = []
    lab_name = "labndr"
    rc, so, se = sh(["bash", "scripts/netns-lab", "up", "--name", lab_name])
    if rc != 0:
        return lab.unavailable(title, f"netns-lab up failed: {se.strip()[:200]}")
    try:
        # the default receive buffer (~270 of these datagrams) makes the NDR a
        # measure of the receiver's scheduling; 32 MiB shows the path itself
        cases = [("4", "198.18.0.2", None), ("6", "2001:2::2", None), ("4", "198.18.0.2", "33554432")]
        for i, (fam, dst, rcvbuf) in enumerate(cases):
            prog.step(idx, i + 1, len(cases), f"ndr IPv{fam}{' rcvbuf ' + rcvbuf if rcvbuf else ''}")
            cmd = [lab.txs, "ndr", "--dev", "udp", "-l", "16", "--send-netns", f"{lab_name}-a",
                   "--recv-netns", f"{lab_name}-b", "--trial", "1" if lab.a.quick else "3",
                   "--precision", "5" if lab.a.quick else "1", "-J", dst]
            if rcvbuf:
                cmd[2:2] = ["--recv-args", f"--rcvbuf {rcvbuf}"]
            rc, out, err = sh(cmd, timeout=900)
            res = [r for r in json_rows(out) if r.get("type") == "ndr"]
            trials = [r for r in json_rows(out) if r.get("type") == "trial"]
            if rc != 0 or not res:
                rows.append({"family": int(fam), "rcvbuf": rcvbuf or "default",
                             "error": (err or out).strip()[-200:]})
                continue
            r = dict(res[-1])
            r["family"] = int(fam)
            r["rcvbuf"] = rcvbuf or "default"
            r["n_trials"] = len(trials)
            rows.append(r)
    finally:
        sh(["bash", "scripts/netns-lab", "down", "--name", lab_name])
    lab.save("ndr", rows)
    ok = [r for r in rows if "rate_pps" in r]
    if not ok:
        return lab.unavailable(title, "; ".join(r.get("error", "") for r in rows))
    body = ["`txscale ndr --dev udp -l 16` between two namespaces over a veth: binary search for the highest "
            "rate at which `txscale recv` counts zero loss.\n",
            md_table(["family", "receiver buffer", "NDR pps", "limited by", "precision %", "trial s", "trials"],
                     [[f"IPv{r['family']}", r["rcvbuf"], fmt(float(r["rate_pps"]), 0), r.get("limited_by", "loss"),
                       r.get("precision_pct"), r.get("trial_s"), r.get("n_trials")] for r in ok]),
            "\nWith the default receive buffer every failing trial lost its packets at the receiving "
            "socket (RcvbufErrors), none at the interface or backlog: on 2 shared cores the NDR then "
            "measures how long the receiver thread waits for a CPU. See docs/ndr.md.\n"]
    lab.section(title, "\n".join(body))
    lab.summary.append("NDR (udp device, veth, 16 B): " + ", ".join(
        f"IPv{r['family']} rcvbuf {r['rcvbuf']} {fmt(float(r['rate_pps']) / 1e3, 0)} kpps" for r in ok))


def exp_failover(lab, prog, idx):
    title = "7. Failover and outages, read by the receiver"
    if os.geteuid() != 0:
        return lab.unavailable(title, "needs root to create the network namespaces (scripts/netns-lab)")
    lab_name = "labfo"
    rc, so, se = sh(["bash", "scripts/netns-lab", "up", "--name", lab_name, "--links", "2"])
    if rc != 0:
        return lab.unavailable(title, f"netns-lab up failed: {se.strip()[:200]}")
    A, B = f"{lab_name}-a", f"{lab_name}-b"
    tmp = os.path.join(lab.a.out, "failover.tmp")
    os.makedirs(tmp, exist_ok=True)
    rows = []
    # (case, sender device and options, receiver input, what is taken down in A, seconds down)
    cases = [("active-backup, tx0 down", ["--dev", "packet:tx0+tx1", "--bond", "active-backup"],
              ["--dev", "packet:rx0,rx1", "--outage-min", "100us"], "tx0", None),
             ("one link, 200 ms down", ["--dev", "udp", "-B", "198.18.0.1"],
              ["--dev", "udp", "-B", "198.18.0.2"], "tx0", 0.2)]
    trials = 1 if lab.a.quick else 3
    try:
        for c, (name, sargs, rargs, link, down) in enumerate(cases):
            for t in range(trials):
                prog.step(idx, c * trials + t + 1, len(cases) * trials, f"{name} #{t + 1}")
                for i in (0, 1):
                    sh(["ip", "-n", A, "link", "set", f"tx{i}", "up"])
                time.sleep(0.3)
                for i in (0, 1):  # a link set down lost its neighbour entry
                    rc, mac, _ = sh(["ip", "netns", "exec", B, "cat", f"/sys/class/net/rx{i}/address"])
                    sh(["ip", "-n", A, "neigh", "replace", f"198.18.{i}.2", "lladdr", mac.strip(), "dev", f"tx{i}",
                        "nud", "permanent"])
                sumf, recvf = os.path.join(tmp, "send.json"), os.path.join(tmp, "recv.json")
                for f in (sumf, recvf):
                    if os.path.exists(f):
                        os.unlink(f)
                rp = subprocess.Popen(["ip", "netns", "exec", B, lab.txs, "recv", "-p", "5201", "-i", "0", "-J",
                                       "--idle", "2", "-t", "60", "--sender-summary", sumf] + rargs,
                                      stdout=open(recvf, "w"), stderr=subprocess.DEVNULL, cwd=ROOT)
                time.sleep(0.5)
                sp = subprocess.Popen(["ip", "netns", "exec", A, lab.txs, "send", "-i", "0", "-b", "50k" if not down else "10k",
                                       "-n", "150000" if not down else "30000", "-l", "32", "-p", "5201",
                                       "--summary-file", sumf] + sargs + ["198.18.0.2"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
                time.sleep(1.0)
                if down:
                    # the receiver's side goes down, so the sender keeps its route and its sequence
                    sh(["ip", "-n", B, "link", "set", "rx0", "down"])
                    time.sleep(down)
                    sh(["ip", "-n", B, "link", "set", "rx0", "up"])
                else:
                    sh(["ip", "-n", A, "link", "set", link, "down"])
                sp.wait(timeout=120)
                rp.wait(timeout=120)
                summ = [r for r in json_rows(open(recvf).read()) if r.get("type") == "summary"]
                if not summ:
                    rows.append({"case": name, "trial": t + 1, "error": "no recv summary"})
                    continue
                o = summ[-1].get("outage", {})
                rows.append({"case": name, "trial": t + 1, "outages": o.get("count"),
                             "longest_ms": o.get("longest_ns", 0) / 1e6, "longest_missing": o.get("longest_missing"),
                             "lost": summ[-1].get("lost"), "bursts": o.get("burst_count"),
                             "loss_duration_ms": o.get("loss_duration_ns", 0) / 1e6, "down_s": down})
    finally:
        sh(["bash", "scripts/netns-lab", "down", "--name", lab_name])
        shutil.rmtree(tmp, ignore_errors=True)
    lab.save("failover", rows)
    ok = [r for r in rows if "outages" in r]
    if not ok:
        return lab.unavailable(title, "; ".join(r.get("error", "") for r in rows))
    body = ["`txscale recv` reports each outage (a silence with datagrams missing inside it) as it sees it; "
            "no capture is needed. Active-backup over two veth links (`send --dev packet:tx0+tx1 --bond "
            "active-backup -b 50k`, recv on both peers with `--outage-min 100us`) with tx0 set down; and one "
            "link whose receiving end goes down for 200 ms (`-b 10k`, default threshold). A switch that lost "
            "nothing is a delay, not an outage (0 below). tests/integration/failover.sh and recv_outage.sh "
            "hold these figures against a capture.\n",
            md_table(["case", "trial", "outages", "longest ms", "missing in it", "lost", "loss bursts",
                      "loss duration ms"],
                     [[r["case"], r["trial"], r["outages"], fmt(r["longest_ms"], 3), r["longest_missing"], r["lost"],
                       r["bursts"], fmt(r["loss_duration_ms"], 3)] for r in ok])]
    lab.section(title, "\n".join(body))
    fo = [r for r in ok if r["down_s"] is None]
    fl = [r for r in ok if r["down_s"]]
    parts = []
    if fo:
        parts.append("active-backup switch outage median " +
                     fmt(statistics.median(r["longest_ms"] for r in fo), 3) + " ms")
    if fl:
        parts.append("200 ms link-down outage median " + fmt(statistics.median(r["longest_ms"] for r in fl), 1) + " ms")
    lab.summary.append("Failover (recv's outage): " + ", ".join(parts))


EXPERIMENTS = [
    ("ident", exp_ident, 240),
    ("linksel", exp_linksel, 20),
    ("sendmsg", exp_sendmsg, 40),
    ("e2e", exp_e2e, 60),
    ("profile", exp_profile, 20),
    ("ndr", exp_ndr, 60),
    ("failover", exp_failover, 40),
]


def main():
    ap = argparse.ArgumentParser(description="txscale lab: the seed experiments as ratios, with plots")
    ap.add_argument("--quick", action="store_true", help="smoke run, under 2 minutes on 2 cores")
    ap.add_argument("--threads", default=None, help="thread counts, e.g. 1,2,4 (default 1,2 or 1,N)")
    ap.add_argument("--cpus", default="", help="CPU list to pin to, e.g. 0-15 (default: all allowed)")
    ap.add_argument("--out", default=None, help="report folder (default docs/results/<date>-<host>)")
    ap.add_argument("--only", default="", help="comma-separated experiments: " +
                    ",".join(e[0] for e in EXPERIMENTS))
    ap.add_argument("--build", default="build", help="build folder holding the txscale binary")
    a = ap.parse_args()
    ncpu = len(os.sched_getaffinity(0))
    if a.threads is None:
        a.threads = "1,2" if ncpu <= 2 else f"1,2,{ncpu}" if ncpu < 8 else f"1,2,{ncpu // 2},{ncpu}"
    started = datetime.datetime.utcnow()
    if a.out is None:
        a.out = os.path.join(ROOT, "docs", "results",
                             f"{started.strftime('%Y-%m-%d')}-{socket.gethostname()}{'-quick' if a.quick else ''}")
    lab = Lab(a)
    if not os.access(lab.txs, os.X_OK):
        sys.exit(f"lab: no txscale binary at {lab.txs} (run make build)")
    exps = [e for e in EXPERIMENTS if not a.only or e[0] in a.only.split(",")]
    if a.quick:
        exps = [(n, f, max(5, est // 3)) for n, f, est in exps]
    prog = Progress([(n, 1, est) for n, _, est in exps])
    t0 = time.monotonic()
    for i, (name, fn, est) in enumerate(exps):
        prog.step(i, 0, 1, "starting")
        try:
            fn(lab, prog, i)
        except Exception as e:  # a broken experiment must not lose the others
            lab.unavailable(name, f"lab error: {type(e).__name__}: {e}")
        prog.advance(est)
    prog.finish()
    dur = time.monotonic() - t0
    path = lab.write_report(started, dur)
    print(f"lab: report {os.path.relpath(path, ROOT)} ({dur:.0f} s)")
    for s in lab.summary:
        print("  - " + s)


if __name__ == "__main__":
    main()
