# SPDX-License-Identifier: MIT
"""txscale: run txscale's sessions from Python: send, recv, the NDR search, the server.

A thin layer over libtxscale's JSON session boundary
(<txscale/session_json.h>, docs/library.md), with ctypes only::

    import txscale
    with txscale.Session("recv", bind="127.0.0.1", port=5201, time=5) as rx:
        rx.start()
        summary = txscale.run("send", dest="127.0.0.1", port=5201, dev="udp",
                              packets=1000, bitrate="10kpps")
        print(rx.wait()["received"])

Keywords are the long options of ``txscale KIND --help`` with ``-`` written
``_`` (``max_flows`` is ``--max-flows``), the values as the CLI takes them:
strings ("10kpps", "250ms", "0-1"), numbers, and True for a flag. send's
and ndr's destination is ``dest``. An ndr session's trials run the txscale
program: TXSCALE_BIN, or txscale in PATH. One option table in the library drives the CLI,
these keywords and --help: ``txscale.options(kind)`` lists it.

The library is loaded by its SONAME (libtxscale.so.0), or from the path in
the environment variable TXSCALE_LIB (a build tree's libtxscale.so).
"""
import ctypes
import errno as _errno
import json
import os
import re
import threading

__all__ = ["Session", "run", "options", "kinds", "Error", "ConfigError", "Timeout", "__version__"]

SONAME = "libtxscale.so.0"


def _load():
    path = os.environ.get("TXSCALE_LIB") or SONAME
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            "txscale: cannot load %s (%s): install libtxscale0 (the package python3-txscale depends on), "
            "or point TXSCALE_LIB at a build tree's libtxscale.so" % (path, e)) from e
    vp, cp, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    sigs = {
        "txs_version": (cp, []),
        "txs_session_kinds": (ctypes.POINTER(cp), []),
        "txs_session_new": (i, [ctypes.POINTER(vp), cp, cp, ctypes.c_char_p, ctypes.c_size_t]),
        "txs_session_start": (i, [vp]),
        "txs_session_stats_json": (i, [vp, ctypes.POINTER(vp)]),
        "txs_session_stop": (None, [vp]),
        "txs_session_wait": (i, [vp, i, ctypes.POINTER(cp)]),
        "txs_session_error": (cp, [vp]),
        "txs_session_free": (None, [vp]),
        "txs_session_str_free": (None, [vp]),
        "txs_session_options_json": (i, [cp, ctypes.POINTER(vp)]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


_lib = _load()

#: The library's version: the same as ``txscale --version`` prints.
__version__ = _lib.txs_version().decode()


class Error(Exception):
    """A session failed: .errno (positive), .message (the library's line),
    .summary (the run's summary dict, when the run made one)."""

    def __init__(self, errno, message, summary=None):
        super().__init__(message or os.strerror(errno))
        self.errno = errno
        self.message = message
        self.summary = summary


class ConfigError(Error, ValueError):
    """A refused config: .key is the keyword (the option's long name with
    '-' as '_'; 'dest' for the destination; None when the config as a whole
    was refused), .option the long option ('--max-flows')."""

    def __init__(self, errno, message, key=None):
        super().__init__(errno, message)
        self.key = key
        self.option = None if key is None or key == "dest" else "--" + key.replace("_", "-")


class Timeout(Error, TimeoutError):
    """wait(timeout) returned before the run ended."""


def _key_of(message):
    """The option a refusal names: 'bad value for -b/--bitrate: ...',
    'unknown option 'x' ...', '--time 0 ... needs --idle', 'bad value for dest'."""
    m = re.match(r"unknown option '([^']*)'", message)
    if m:
        return m.group(1).replace("-", "_")
    if message.startswith("bad value for dest") or message.startswith("no destination"):
        return "dest"
    m = re.search(r"--([a-z0-9][a-z0-9-]*)", message)
    if m:
        return m.group(1).replace("-", "_")
    return None


def _strerror(rc):
    return os.strerror(-rc) if rc < 0 else ""


def _take_str(vp):
    try:
        return ctypes.string_at(vp.value).decode()
    finally:
        _lib.txs_session_str_free(vp)


def kinds():
    """The session kinds the library runs: ['send', 'recv', 'ndr', 'server']."""
    out, p = [], _lib.txs_session_kinds()
    while p[len(out)]:
        out.append(p[len(out)].decode())
    return out


def options(kind):
    """The option table of a kind: a list of dicts with name, short,
    metavar, flag, default, help (the same lines as txscale KIND --help)."""
    vp = ctypes.c_void_p()
    rc = _lib.txs_session_options_json(kind.encode() if isinstance(kind, str) else None, ctypes.byref(vp))
    if rc < 0:
        raise ConfigError(-rc, "bad session kind %r: expected one of %s" % (kind, ", ".join(kinds())))
    return json.loads(_take_str(vp))


def _config_json(config):
    out = {}
    for k, v in config.items():
        name = k.replace("_", "-") if k != "dest" else k
        if v is None:
            continue  # the option's default
        if not isinstance(v, (str, int, float, bool)):
            raise ConfigError(_errno.EINVAL, "bad value for --%s: %r: expected a string, a number or a boolean"
                              % (name, v), k)
        out[name] = v
    return json.dumps(out)


class Session:
    """One session (send, recv, ndr, server): Session(kind, **config), then start(),
    stats() while it runs (any thread), stop() (any thread), wait() for
    the summary. A context manager: leaving it stops and frees the session."""

    def __init__(self, kind, **config):
        if not isinstance(kind, str):
            raise ConfigError(_errno.EINVAL, "bad session kind %r: expected one of %s" % (kind, ", ".join(kinds())))
        self.kind = kind
        self._lock = threading.Lock()
        self._s = None
        err = ctypes.create_string_buffer(1024)
        s = ctypes.c_void_p()
        rc = _lib.txs_session_new(ctypes.byref(s), kind.encode(), _config_json(config).encode(), err, len(err))
        msg = err.value.decode(errors="replace")
        if rc == -_errno.EINVAL:
            raise ConfigError(-rc, msg, _key_of(msg))
        if rc < 0:
            raise Error(-rc, msg or _strerror(rc))
        self._s = s
        self._summary = None
        self._started = False

    def _handle(self):
        if self._s is None:
            raise Error(_errno.EBADF, "the session was closed")
        return self._s

    def start(self):
        """Run the session on the library's own thread."""
        rc = _lib.txs_session_start(self._handle())
        if rc < 0:
            raise Error(-rc, "start: " + _strerror(rc))
        self._started = True
        return self

    def stats(self):
        """A snapshot of the counters (docs/json-schema.md, "session stats")."""
        vp = ctypes.c_void_p()
        rc = _lib.txs_session_stats_json(self._handle(), ctypes.byref(vp))
        if rc < 0:
            raise Error(-rc, "stats: " + _strerror(rc))
        return json.loads(_take_str(vp))

    def stop(self):
        """End the run early. Any thread; harmless after the end."""
        s = self._s
        if s is not None:
            _lib.txs_session_stop(s)

    def _wait_once(self, ms):
        out = ctypes.c_char_p()
        rc = _lib.txs_session_wait(self._handle(), ms, ctypes.byref(out))
        return rc, out.value

    def wait(self, timeout=None):
        """The summary dict once the run ends (docs/json-schema.md). Raises
        Timeout after timeout seconds, Error when the run failed (its
        summary in .summary). Ctrl-C (KeyboardInterrupt) stops the session,
        waits for its end and is raised again."""
        import time
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                ms = 100
                if deadline is not None:
                    ms = max(0, min(ms, int((deadline - time.monotonic()) * 1000)))
                rc, text = self._wait_once(ms)
                if rc != -_errno.ETIMEDOUT:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    raise Timeout(_errno.ETIMEDOUT, "the %s session still runs after %gs" % (self.kind, timeout))
        except KeyboardInterrupt:
            self.stop()
            while self._wait_once(100)[0] == -_errno.ETIMEDOUT:
                pass
            raise
        summary = json.loads(text.decode()) if text else None
        if rc == -_errno.EINVAL and text is None and not self._started:
            raise Error(-rc, "wait: the session was not started")
        if rc < 0:
            why = _lib.txs_session_error(self._s).decode(errors="replace").strip()
            lines = why.splitlines()
            if len(lines) > 3:  # a server's whole log: the last line says why; error() has the rest
                why = "%s (error() has %d lines before it)" % (lines[-1], len(lines) - 1)
            raise Error(-rc, why or _strerror(rc), summary)
        return summary

    def error(self):
        """What the run noted or what went wrong, one line each ('' if nothing)."""
        return _lib.txs_session_error(self._handle()).decode(errors="replace")

    def close(self):
        """Stop the run if it runs, wait for it, free the session."""
        with self._lock:
            s, self._s = self._s, None
        if s is not None:
            _lib.txs_session_free(s)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if getattr(self, "_s", None) is not None:
            self.close()


def run(kind, **config):
    """Create, start and wait for a session: its summary dict."""
    with Session(kind, **config) as s:
        s.start()
        return s.wait()
