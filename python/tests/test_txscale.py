# SPDX-License-Identifier: MIT
"""The Python package over the JSON session boundary: the refusals of the C
tests through Python (ConfigError naming the option), the version, a
loopback send+recv pair with exact counts, stats and stop from another
thread, wait's timeout, and Ctrl-C in wait stopping the session.

Run by ctest (python_pytest) with TXSCALE_LIB = the build's libtxscale.so,
TXSCALE_BIN = its txscale, PYTHONPATH = python/."""
import _thread
import os
import socket
import subprocess
import threading
import time

import pytest

import txscale


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_version_is_the_cli_version():
    out = subprocess.run([os.environ["TXSCALE_BIN"], "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["txscale", txscale.__version__]


def test_loaded_by_soname_name():
    lib = os.environ.get("TXSCALE_LIB")
    if lib:  # the build tree's link points at the file named by the SONAME
        assert os.path.basename(os.path.realpath(lib)).startswith(txscale.SONAME)


def test_kinds_and_options():
    assert txscale.kinds() == ["send", "recv", "ndr", "server"]
    names = [o["name"] for o in txscale.options("send")]
    assert names[0] == "dest" and "bitrate" in names and "pace-slack" in names
    assert "json" not in names and "client" not in names  # the CLI's own
    recv = {o["name"]: o for o in txscale.options("recv")}
    assert recv["window"]["default"] == "4096" and recv["verify"]["flag"] is True
    with pytest.raises(txscale.ConfigError):
        txscale.options("stamp")


REFUSALS = [
    ("send", dict(dest="127.0.0.1", bitrate="x"), "bitrate", "bad value for --bitrate: 'x'"),
    ("send", dict(dest="127.0.0.1", bitrate=-5), "bitrate", "bad value for --bitrate: '-5'"),
    ("send", dict(dest="127.0.0.1", rate="10kpps"), "rate", "unknown option 'rate' for a send session"),
    ("send", dict(dest="127.0.0.1", json=True), "json", "unknown option 'json'"),
    ("send", dict(dest="127.0.0.1", port=0), "port", "bad value for --port: '0'"),
    ("send", dict(dest="127.0.0.1", port=70000), "port", "bad value for --port: '70000'"),
    ("send", dict(dest="127.0.0.1", time=-1), "time", "bad value for --time: '-1'"),
    ("send", dict(dest="127.0.0.1", parallel=300), "parallel", "bad value for --parallel: '300'"),
    ("send", dict(dest="127.0.0.1", ttl=300), "ttl", "bad value for --ttl: '300'"),
    ("send", dict(dest="127.0.0.1", tos=999), "tos", "bad value for --tos: '999'"),
    ("send", dict(dest="127.0.0.1", burst=100000), "burst", "bad value for --burst: '100000'"),
    ("send", dict(dest="127.0.0.1", ipv4="yes"), "ipv4", "bad value for --ipv4: a flag takes true or false"),
    ("send", dict(dest="127.0.0.1", affinity="9999"), "affinity", "--affinity: bad CPU list '9999'"),
    ("send", dict(dest="127.0.0.1", pace_slack="x"), "pace_slack", "--pace-slack"),
    ("send", dict(dest="127.0.0.1", port=[1]), "port", "bad value for --port: [1]"),
    ("send", dict(dest=5), "dest", "bad value for dest"),
    ("send", dict(), "dest", "no destination"),
    ("recv", dict(dest="127.0.0.1"), "dest", "unknown option 'dest' for a recv session"),
    ("recv", dict(time=0), "time", "--time 0"),
    ("recv", dict(window=100), "window", "bad value for --window: '100'"),
    ("recv", dict(max_flows=0), "max_flows", "bad value for --max-flows: '0'"),
    ("recv", dict(idle="NaN"), "idle", "bad value for --idle: 'NaN'"),
    ("recv", dict(rx_timestamps="sometimes"), "rx_timestamps", "bad value for --rx-timestamps: 'sometimes'"),
    ("ndr", dict(), "dest", "no destination"),
    ("ndr", dict(dest="127.0.0.1", lo="10k"), "lo", "bad value for --lo: datagrams/s only"),
    ("ndr", dict(dest="127.0.0.1", remote="127.0.0.1"), "remote", "--remote is not an ndr session's"),
    ("ndr", dict(dest="127.0.0.1", max_trials=1000), "max_trials", "bad value for --max-trials: '1000'"),
    ("server", dict(stamp="x"), "stamp", "bad value for --stamp: 'x'"),
    ("server", dict(max_time=0, control_port=1), "max_time", "bad value for --max-time: '0'"),
    ("server", dict(dest="127.0.0.1"), "dest", "unknown option 'dest' for a server session"),
]


@pytest.mark.parametrize("kind,config,key,says", REFUSALS)
def test_refused(kind, config, key, says):
    with pytest.raises(txscale.ConfigError) as ei:
        txscale.Session(kind, **config)
    e = ei.value
    assert isinstance(e, ValueError) and isinstance(e, txscale.Error)
    assert says in str(e) and "\n" not in str(e)
    assert e.key == key
    assert e.errno == 22


def test_refused_kind():
    for kind in ("stamp", None, 5):
        with pytest.raises(txscale.ConfigError):
            txscale.Session(kind)


def test_device_refusal_is_an_error():
    with pytest.raises(txscale.Error) as ei:
        txscale.Session("send", dest="127.0.0.1", dev="nosuchdev")
    assert "nosuchdev" in str(ei.value)


def test_wait_before_start_and_closed():
    s = txscale.Session("recv", bind="127.0.0.1", port=free_port(), time=1)
    with pytest.raises(txscale.Error):
        s.wait(timeout=0.1)
    s.close()
    s.close()
    s.stop()  # harmless
    with pytest.raises(txscale.Error):
        s.stats()


def test_loopback_pair_exact_counts():
    port = free_port()
    with txscale.Session("recv", bind="127.0.0.1", port=port, time=20, expect="2k", idle="2s") as rx:
        assert rx.stats()["state"] == "new"
        rx.start()
        seen = []
        done = threading.Event()

        def reader():  # stats from another thread while the run goes
            while not done.is_set():
                seen.append(rx.stats()["received"])
                time.sleep(0.005)

        t = threading.Thread(target=reader)
        t.start()
        sent = txscale.run("send", dest="127.0.0.1", port=port, dev="udp", packets=2000, bitrate="20kpps",
                           length=64, gso="off")
        got = rx.wait(timeout=20)
        done.set()
        t.join()
    assert sent["type"] == "summary" and sent["kind"] == "send"
    assert sent["packets"] == 2000
    assert got["kind"] == "recv"
    assert got["received"] == 2000 and got["unique"] == 2000 and got["lost"] == 0 and got["duplicates"] == 0
    assert got["bytes"] == 2000 * 64
    assert seen and seen == sorted(seen)


def test_stop_from_another_thread_and_timeout():
    with txscale.Session("recv", bind="127.0.0.1", port=free_port(), time=30) as rx:
        rx.start()
        t0 = time.monotonic()
        with pytest.raises(txscale.Timeout):
            rx.wait(timeout=0.2)
        assert time.monotonic() - t0 >= 0.19
        threading.Timer(0.2, rx.stop).start()
        summary = rx.wait(timeout=10)
        assert time.monotonic() - t0 < 5
        assert summary["received"] == 0


def test_ctrl_c_in_wait_stops_the_session():
    s = txscale.Session("send", dest="198.18.0.2", time=30, bitrate="1kpps")  # dummy device
    s.start()
    threading.Timer(0.3, _thread.interrupt_main).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        s.wait()
    assert time.monotonic() - t0 < 5
    st = s.stats()
    assert st["state"] == "done" and 50 <= st["packets"] <= 5000
    s.close()


def test_run_returns_summary():
    summary = txscale.run("send", dest="198.18.0.2", packets=100)
    assert summary["packets"] == 100 and summary["device"].startswith("dummy")


def test_one_table_for_cli_and_keywords():
    """Every session key is a long option of the CLI's --help (the same
    table), and every --help option the session table lacks is one of the
    CLI's own (output, files, control channel, metrics)."""
    cli_own = {"client", "json", "summary-file", "dry-run", "server", "reverse", "bidir", "control-port",
               "auth-file", "ctl-timeout", "remote-parallel", "remote-cpus", "remote-rcvbuf", "remote-dev",
               "metrics", "metrics-file", "metrics-linger", "metrics-flows", "ready-fd", "help", "iperf2"}
    import re
    cli_own |= {"remote", "metrics-listen"}
    for kind in ("send", "recv", "ndr", "server"):
        text = subprocess.run([os.environ["TXSCALE_BIN"], kind, "--help"], capture_output=True, text=True,
                              check=True).stdout
        cli = set(re.findall(r"^\s+(?:-\w, )?\s*--([a-z0-9-]+)", text, re.M))
        keys = {o["name"] for o in txscale.options(kind)} - {"dest"}
        assert keys <= cli, keys - cli
        assert cli - keys <= cli_own, (cli - keys) - cli_own
        for o in txscale.options(kind):  # the help texts are the CLI's
            if o["name"] != "dest" and o["name"] != "dev":
                assert o["help"][:40] in text.replace("\n", " ") or o["help"][:40] in text


def test_ndr_session_search_on_loopback():
    """The NDR search as a session: its trials (the txscale program's
    children, TXSCALE_BIN) on loopback, stats from another thread while it
    runs, and the summary txscale ndr -J ends with. Every rate up to 20k
    datagrams/s passes here, so the search ends at its upper bound."""
    port = free_port()
    with txscale.Session("ndr", dest="127.0.0.1", port=port, lo="2kpps", hi="20kpps", trial="0.3",
                         precision=5, max_trials=6) as s:
        s.start()
        trials = []
        while True:
            st = s.stats()
            trials.append(st["trials"])
            if st["state"] == "done":
                break
            time.sleep(0.05)
        summary = s.wait(timeout=60)
    assert summary["type"] == "ndr" and summary["outcome"] == "hi-passes"
    assert summary["rate_pps"] == 20000 and summary["trials"] >= 1
    assert trials == sorted(trials) and trials[-1] == summary["trials"]
    assert st["last_trial"]["type"] == "trial" and st["last_trial"]["pass"] is True


def test_ndr_session_stops():
    with txscale.Session("ndr", dest="127.0.0.1", port=free_port(), lo="1kpps", hi="2kpps", trial=20) as s:
        s.start()
        time.sleep(0.5)
        t0 = time.monotonic()
        s.stop()
        with pytest.raises(txscale.Error) as ei:
            s.wait(timeout=20)
        assert time.monotonic() - t0 < 10
        assert "interrupted after 0 trials" in str(ei.value)


def test_server_session_serves_a_txscale_and_an_iperf3_client():
    """A server session in this process: a txscale client (the CLI) runs a
    test against it; its summaries come back from the session's process
    into stats and the summary; a stock iperf3 client is served too."""
    ctl = free_port()
    with txscale.Session("server", bind="127.0.0.1", control_port=ctl, no_iperf2=True, max_time=30) as srv:
        assert srv.stats()["port"] == ctl
        srv.start()
        out = subprocess.run([os.environ["TXSCALE_BIN"], "send", "-c", "127.0.0.1", "--control-port", str(ctl),
                              "-n", "2000", "-b", "20kpps", "-i", "0"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "txscale's protocol" in out.stdout
        assert "received 2000, lost 0 (0%) exact" in out.stdout
        have_iperf3 = subprocess.run(["sh", "-c", "command -v iperf3"], capture_output=True).returncode == 0
        if have_iperf3:
            ip3 = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(ctl), "-u", "-l", "100", "-b", "800K",
                                  "-t", "1", "-J"], capture_output=True, text=True, timeout=60)
            assert ip3.returncode == 0, ip3.stdout[-500:] + ip3.stderr
        deadline = time.monotonic() + 20
        want = 2 if have_iperf3 else 1
        while time.monotonic() < deadline:
            st = srv.stats()
            if st["tests"] >= want and st["active"] == 0:
                break
            time.sleep(0.05)
        assert st["state"] == "running" and st["sessions"] == want and st["tests"] >= want, st
        srv.stop()
        summary = srv.wait(timeout=20)
        log = srv.error()  # the server's log, from whichever of its processes
        assert "listening on 127.0.0.1 port %d" % ctl in log and "session 1 (127.0.0.1)" in log, log
    assert summary["kind"] == "server" and summary["sessions"] == want and summary["exit_status"] == 0
    recv = [t for t in summary["summaries"] if t["protocol"] == "txscale" and t["role"] == "receiver"]
    assert len(recv) == 1 and recv[0]["client"] == "127.0.0.1"
    r = recv[0]["summary"]
    assert r["received"] == 2000 and r["lost"] == 0 and r["lost_exact"]
    if have_iperf3:
        ip = [t for t in summary["summaries"] if t["protocol"] == "iperf3"]
        assert ip and ip[0]["summary"]["lost"] == 0 and ip[0]["summary"]["received"] > 0


def test_server_session_busy_and_one_off():
    """--one-off: the session ends with its one client's session; a second
    client meanwhile is told the server is busy, and the refusal is counted."""
    ctl = free_port()
    srv = txscale.Session("server", bind="127.0.0.1", control_port=ctl, no_iperf2=True, one_off=True)
    srv.start()
    first = subprocess.Popen([os.environ["TXSCALE_BIN"], "send", "-c", "127.0.0.1", "--control-port", str(ctl),
                              "-n", "3000", "-b", "2kpps", "-i", "0"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 10
    while srv.stats()["active"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    second = subprocess.run([os.environ["TXSCALE_BIN"], "send", "-c", "127.0.0.1", "--control-port", str(ctl),
                             "-n", "10", "-i", "0"], capture_output=True, text=True, timeout=30)
    assert second.returncode == 1 and "the server is busy" in second.stderr, second.stdout + second.stderr
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 0, out
    summary = srv.wait(timeout=30)
    srv.close()
    assert summary["sessions"] == 1 and summary["refused"] == 1 and summary["exit_status"] == 0


def test_server_session_leaves_our_children_alone():
    """A server session reaps its own processes only: a child of this
    program that ends while the server runs keeps its exit status for us
    (the server's waitpid(-1) took it, and Python then read 0)."""
    with txscale.Session("server", bind="127.0.0.1", control_port=free_port(), no_iperf2=True) as srv:
        srv.start()
        kids = [subprocess.Popen(["sh", "-c", "exit %d" % (3 + k)]) for k in range(3)]
        time.sleep(0.5)  # several of the server's rounds (100 ms each) while they are zombies
        assert [k.wait(timeout=10) for k in kids] == [3, 4, 5]
        srv.stop()
        srv.wait(timeout=20)


def test_server_session_stamp_counts():
    """A server session with its STAMP reflector: the reflector's counts in
    stats and in the summary."""
    ctl, refl = free_port(), free_port()
    with txscale.Session("server", bind="127.0.0.1", control_port=ctl, no_iperf2=True, stamp=str(refl)) as srv:
        srv.start()
        out = subprocess.run([os.environ["TXSCALE_BIN"], "stamp", "send", "127.0.0.1", "-p", str(refl), "-n", "50",
                              "-b", "1kpps"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        assert srv.stats()["stamp"]["reflected"] == 50
        srv.stop()
        summary = srv.wait(timeout=20)
    assert summary["stamp"]["received"] == 50 and summary["stamp"]["reflected"] == 50
    assert summary["stamp"]["sessions"] == 1


def test_ndr_session_refuses_at_new():
    """What the search checks before its first trial (the sender's options
    and device, the receiver's input) is refused when the session is made,
    naming it; the program for the trials is found first."""
    with pytest.raises(txscale.ConfigError) as ei:
        txscale.Session("ndr", dest="127.0.0.1", port=free_port(), dev="bogus")
    assert "bogus" in str(ei.value)
    with pytest.raises(txscale.ConfigError) as ei:
        txscale.Session("ndr", dest="198.18.0.2", port=free_port())  # not an address of this namespace
    assert "give --recv-netns NS" in str(ei.value)
    with pytest.raises(txscale.ConfigError) as ei:
        txscale.Session("ndr", dest="nonsense")
    assert ei.value.key == "dest"


@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_client_against_a_listener_that_closes(delay):
    """A TCP service that accepts and closes, at once (nothing read: FIN) or
    after our opener arrived (unread: a reset): the client says what it met,
    one line, exit 1, never a bare 'Connection reset by peer'."""
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(2)
    port = lst.getsockname()[1]

    def serve():
        c, _ = lst.accept()
        time.sleep(delay)
        c.close()

    th = threading.Thread(target=serve)
    th.start()
    try:
        out = subprocess.run([os.environ["TXSCALE_BIN"], "send", "-c", "127.0.0.1", "--control-port", str(port),
                              "-n", "10"], capture_output=True, text=True, timeout=30)
    finally:
        th.join(10)
        lst.close()
    assert out.returncode == 1, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert f"the server at 127.0.0.1 port {port} closed the connection unanswered" in lines[0], out.stderr
    assert "reset by peer" not in out.stderr
