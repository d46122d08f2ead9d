"""The one safe writer (econ.safe_write) behind every output path: atomic, never over a file without --force,
clear errors without a traceback, no temporary file left behind (issue 12, finding 3 and the SIGKILL part of 9).

The SIGKILL tests run a writer in a subprocess and kill it: mid-write (the target must hold the previous file or
a whole new one, never a truncated one) and after the temporary file is complete but before the rename (the
previous file must be intact, and the next write must remove the dead writer's temporary file).
"""

from __future__ import annotations

import errno
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from econ import safe_write
from econ.cli import main
from econ.errors import InvalidInputError
from econ.io.scenario import Scenario, load_toml_file, save_toml_file

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
EXPORT = ["export", "cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "8", "--format", "csv"]
QUOTES = ["quotes", "check", "--model", "llama-3.1-8b", "--format", "csv"]


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _child(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, cwd=str(ROOT))


# ----------------------------------------------------------------------------------------- SIGKILL and SIGTERM

_LOOP_WRITER = """
    import sys
    from econ.safe_write import write_bytes
    target, n = sys.argv[1], int(sys.argv[2])
    blobs = [b"A" * n, b"B" * n]
    print("ready", flush=True)
    i = 0
    while True:
        write_bytes(blobs[i % 2], target, force=True)
        i += 1
"""


def test_sigkill_mid_write_never_leaves_a_truncated_file(tmp_path):
    """Killed at random moments while rewriting a 16 MB file: the target is always one whole version."""
    n = 16 << 20
    target = tmp_path / "quotes-check.csv"
    old = b"O" * n
    target.write_bytes(old)
    rng = random.Random(12)
    for _ in range(8):
        proc = _child(_LOOP_WRITER, str(target), str(n))
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        data = target.read_bytes()
        assert len(data) == n and data in (old, b"A" * n, b"B" * n)
    safe_write.write_bytes(b"final", target, force=True)  # the next write sweeps what the killed runs left
    assert _temps(tmp_path) == []
    assert target.read_bytes() == b"final"


_BLOCK_AT_FSYNC = """
    import os, sys, time
    from econ import safe_write
    def fsync(fd):
        print("fsync", flush=True)
        time.sleep(60)
    safe_write.os.fsync = fsync
    safe_write.write_bytes(b"N" * 4096, sys.argv[1], force=True)
"""


def test_sigkill_after_the_temp_file_keeps_the_previous_file_and_the_next_write_cleans_up(tmp_path):
    target = tmp_path / "out.xlsx"
    target.write_bytes(b"previous")
    proc = _child(_BLOCK_AT_FSYNC, str(target))
    assert proc.stdout.readline().strip() == "fsync"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert target.read_bytes() == b"previous"
    left = _temps(tmp_path)
    assert len(left) == 1 and left[0].startswith(f".out.xlsx.{proc.pid}.")  # the dead writer's file
    safe_write.write_bytes(b"next", target, force=True)
    assert _temps(tmp_path) == [] and target.read_bytes() == b"next"


def test_sigterm_mid_write_removes_the_temp_file(tmp_path):
    target = tmp_path / "out.csv"
    target.write_bytes(b"previous")
    proc = _child(_BLOCK_AT_FSYNC, str(target))
    assert proc.stdout.readline().strip() == "fsync"
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait() == 128 + signal.SIGTERM
    assert "Traceback" not in proc.stderr.read()
    assert target.read_bytes() == b"previous" and _temps(tmp_path) == []


def test_stale_temp_files_are_cleaned_only_when_their_writer_is_gone(tmp_path):
    target = tmp_path / "t.csv"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale_pid = tmp_path / f".t.csv.{dead_pid}.0123456789ab.tmp"
    live_pid = tmp_path / f".t.csv.{os.getppid()}.0123456789ab.tmp"  # a running process: kept
    old_style = tmp_path / ".t.csv.abcdefabcdef.tmp"  # no pid: removed once older than STALE_TEMP_AGE_S
    fresh_style = tmp_path / ".t.csv.fedcbafedcba.tmp"
    other = tmp_path / ".other.csv.0123456789ab.tmp"  # another target's: never touched
    for p in (stale_pid, live_pid, old_style, fresh_style, other):
        p.write_bytes(b"x")
    age = time.time() - safe_write.STALE_TEMP_AGE_S - 10
    os.utime(old_style, (age, age))
    safe_write.write_bytes(b"data", target)
    assert _temps(tmp_path) == sorted(p.name for p in (live_pid, fresh_style, other))


# ----------------------------------------------------------------------------------------- library errors

def test_refuses_to_overwrite_without_force_and_replaces_with_it(tmp_path):
    p = tmp_path / "a.csv"
    safe_write.write_bytes(b"one", p)
    with pytest.raises(InvalidInputError, match=r"a\.csv' exists; not overwriting it \(pass force=True"):
        safe_write.write_bytes(b"two", p)
    assert p.read_bytes() == b"one"
    safe_write.write_bytes(b"two", p, force=True)
    assert p.read_bytes() == b"two" and _temps(tmp_path) == []


def test_a_long_but_valid_name_still_gets_a_temp_file(tmp_path):
    p = tmp_path / ("x" * 250 + ".csv")  # 254 bytes: valid, but '.NAME.<pid>.<hex>.tmp' would not be
    safe_write.write_bytes(b"ok", p)
    assert p.read_bytes() == b"ok" and _temps(tmp_path) == []


@pytest.mark.parametrize("make, pattern", [
    pytest.param(lambda d: d, r"is a folder; give a file name", id="directory"),
    pytest.param(lambda d: d / "missing" / "x.csv", r"output folder .*missing.* does not exist", id="missing-parent"),
    pytest.param(lambda d: (d / "f").write_bytes(b"") or d / "f" / "x.csv", r"is a file, not a folder",
                 id="parent-is-a-file"),
    pytest.param(lambda d: d / ("n" * 300 + ".csv"), r"name is 304 bytes long; this file system allows at most 255",
                 id="name-too-long"),
    pytest.param(lambda d: "", r"empty", id="empty-name"),
    pytest.param(lambda d: str(d / "a\x00b.csv"), r"NUL", id="nul-in-name"),
])
def test_bad_targets_are_named_errors(tmp_path, make, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        safe_write.write_bytes(b"x", make(tmp_path))
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("err, words", [(errno.ENOSPC, "the disk is full"), (errno.EDQUOT, "quota"),
                                        (errno.EACCES, "no permission"), (errno.EROFS, "read-only"),
                                        (errno.EIO, "input/output error")])
@pytest.mark.parametrize("force", [False, True])
def test_os_failures_mid_write_leave_nothing_and_say_why(tmp_path, monkeypatch, err, words, force):
    target = tmp_path / "out.csv"
    if force:
        target.write_bytes(b"old")

    def fail(fd):
        raise OSError(err, os.strerror(err))
    monkeypatch.setattr(safe_write.os, "fsync", fail)
    with pytest.raises(InvalidInputError, match=rf"cannot write output file .*out\.csv.*{words}"):
        safe_write.write_bytes(b"new", target, force=force)
    monkeypatch.undo()
    assert _temps(tmp_path) == []
    assert (target.read_bytes() == b"old") if force else not target.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_a_clear_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(InvalidInputError, match="no permission"):
            safe_write.write_bytes(b"x", ro / "x.csv")
    finally:
        ro.chmod(0o755)


def test_scenario_save_uses_the_safe_writer(tmp_path):
    p = tmp_path / "s.toml"
    sc = Scenario(model="llama-3.1-8b", pue=1.2)
    save_toml_file(sc, p)
    assert load_toml_file(p)[0] == sc
    with pytest.raises(InvalidInputError, match=r"scenario file .*s\.toml' exists"):
        save_toml_file(Scenario(), p)
    save_toml_file(Scenario(), p, force=True)
    assert load_toml_file(p)[0] == Scenario() and _temps(tmp_path) == []


# ----------------------------------------------------------------------------------------- CLI

def _cli(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("base", [EXPORT, QUOTES], ids=["export", "quotes-check"])
@pytest.mark.parametrize("make, pattern", [
    pytest.param(lambda d: d, r"is a folder; give a file name", id="directory"),
    pytest.param(lambda d: d / "missing" / "x.csv", r"does not exist", id="missing-parent"),
    pytest.param(lambda d: d / ("n" * 300 + ".csv"), r"304 bytes long; this file system allows at most 255",
                 id="name-too-long"),
])
def test_cli_output_errors_are_one_line(tmp_path, capsys, base, make, pattern):
    code, _, err = _cli([*base, "-o", str(make(tmp_path))], capsys)
    assert code == 2 and re.search(pattern, err), err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("base", [EXPORT, QUOTES], ids=["export", "quotes-check"])
def test_cli_refuses_an_existing_file_in_its_own_words_and_force_replaces_it(tmp_path, capsys, base):
    out = tmp_path / "result.csv"
    out.write_text("keep me")
    code, _, err = _cli([*base, "-o", str(out)], capsys)
    assert code == 2 and "exists; not overwriting it (add --force to replace it)" in err
    assert out.read_text() == "keep me"
    code, _, _ = _cli([*base, "-o", str(out), "--force"], capsys)
    assert code == 0 and out.read_text().startswith(("model,", "quote_id,"))
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("base", [EXPORT, QUOTES], ids=["export", "quotes-check"])
def test_cli_full_disk_is_a_clear_error_and_keeps_the_previous_file(tmp_path, capsys, monkeypatch, base):
    out = tmp_path / "result.csv"
    out.write_text("previous")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(safe_write.os, "fsync", full)
    code, _, err = _cli([*base, "-o", str(out), "--force"], capsys)
    assert code == 2 and "the disk is full" in err and "previous file is intact" in err
    assert out.read_text() == "previous" and _temps(tmp_path) == []


def test_quotes_check_table_output_is_written_atomically_too(tmp_path, capsys):
    out = tmp_path / "check.txt"
    code, _, _ = _cli(["quotes", "check", "--model", "llama-3.1-8b", "--output", str(out)], capsys)
    assert code == 0 and "verdicts: " in out.read_text()
    code, _, err = _cli(["quotes", "check", "--model", "llama-3.1-8b", "--output", str(out)], capsys)
    assert code == 2 and "add --force" in err

