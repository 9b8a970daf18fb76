"""Writers under hostile conditions: two commands racing for one output, a full disk, device nodes,
FIFOs and mount points, a user's file beside an output. Each case ends with no byte of user data
lost, no mixed result with exit status 0, and a one-line error naming the output and the cause.

A replaced output directory is swapped with its replacement in one ``renameat2`` exchange where the
kernel can; where it cannot, a writer killed between its two renames (simulated in a subprocess that
exits at that instant) leaves the old directory aside, and the next command puts it back.

Two commands are made to overlap deterministically: the first one runs with the testing hook
``NLLBENCH_TEST_HOLD_FIFO`` (it waits on a FIFO after taking its locks), the test starts the second
one once the first holds its lock, then releases the first.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import xarray as xr

import nllbench.store.exchange as exchange
from nllbench.cli import main
from nllbench.store import (
    MARKER,
    Output,
    check_output,
    committed_together,
    lock_name,
    read_scenario,
)
from nllbench.store.locks import HOLD_ENV

SIM = ["simulate", "--scenario", "williams15", "--steps", "3"]
EVALUATE = ["evaluate", "--q", "1"]
SCORE = ["score", "--existence-one", "--default-std", "1", "--q", "1"]


def run(args: list, capsys) -> tuple[int, str]:
    """(exit status, stderr) of one command run in this process."""
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (hidden ones included) with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """sim/ (2 seeds), post/ (PMB), met/ (a lone evaluate), tab/ (a lone aggregate), tracks/."""
    d = tmp_path_factory.mktemp("hostile")
    assert main([*SIM, "--seeds", "0", "1", "--output-dir", str(d / "sim")]) == 0
    flt = ["filter", "-q", "--filter", "pmb", "--input-dir", str(d / "sim")]
    assert main([*flt, "--output-dir", str(d / "post")]) == 0
    ev = [*EVALUATE, "--posterior-dir", str(d / "post"), "--scenario-dir", str(d / "sim")]
    assert main([*ev, "--output-dir", str(d / "met")]) == 0
    assert main(["aggregate", str(d / "met"), "--out-dir", str(d / "tab")]) == 0
    (d / "tracks").mkdir()
    for seed in (0, 1):
        truth = read_scenario(d / "sim" / f"seed{seed}.nc").truth
        rows = [
            dict(frame=k, id=j, x=x[0] + 0.5, y=x[1]) for k, X in enumerate(truth) for j, x in enumerate(X)
        ]
        pd.DataFrame(rows).to_csv(d / "tracks" / f"seed{seed}.csv", index=False)
    shutil.copy(d / "tracks" / "seed0.csv", d / "tracks.csv")
    return d


def overlap(tmp_path: Path, out: Path, first: list, second: list):
    """Run ``first`` (a subprocess) until it holds the lock of ``out``, run ``second`` to its end,
    then let ``first`` finish. Returns both CompletedProcess-like results (first, second)."""
    fifo = tmp_path / "hold.fifo"
    os.mkfifo(fifo)
    env = {**os.environ, HOLD_ENV: str(fifo)}
    cli = [sys.executable, "-m", "nllbench.cli"]
    a = subprocess.Popen([*cli, *map(str, first)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lock, deadline = lock_name(out), time.monotonic() + 300
        while a.poll() is None and time.monotonic() < deadline:
            if lock.exists() and f'"pid": {a.pid},' in lock.read_text():
                break
            time.sleep(0.02)
        assert a.poll() is None, "the first command ended before it held its lock"
        b = subprocess.run([*cli, *map(str, second)], capture_output=True, text=True, timeout=300)
        while a.poll() is None:  # release the first: open the FIFO for writing once it reads it
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                break
            except OSError as exc:
                assert exc.errno == errno.ENXIO
                time.sleep(0.02)
        out_a, err_a = a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    done = subprocess.CompletedProcess(a.args, a.returncode, out_a.decode(), err_a.decode())
    done.pid = a.pid
    return done, b


def refused_for_the_first(b, a_pid: int, option: str, out: Path) -> None:
    """The second command failed with one line naming the output and the first command."""
    lines = [line for line in b.stderr.splitlines() if "error" in line]
    assert b.returncode == 2 and len(lines) == 1 and "Traceback" not in b.stderr, b.stderr
    assert f"{option} {str(out)!r}: another nllbench command (pid {a_pid} on host" in lines[0]
    assert "is writing it" in lines[0]


@pytest.mark.slow
def test_two_evaluate_batches_into_one_directory_never_mix(data, tmp_path):
    out = tmp_path / "met"
    ev = [*EVALUATE, "--posterior-dir", data / "post", "--scenario-dir", data / "sim", "--output-dir", out]
    a, b = overlap(tmp_path, out, ev, [*ev, "--cutoff", "2"])
    assert a.returncode == 0, a.stderr
    refused_for_the_first(b, a.pid, "--output-dir", out)
    lone = files(data / "met")
    timed = {"summary.csv"}  # it holds compute times
    assert {k: v for k, v in files(out).items() if k not in timed} == {
        k: v for k, v in lone.items() if k not in timed
    }
    assert sorted(os.listdir(tmp_path)) == ["hold.fifo", "met"]


@pytest.mark.slow
def test_two_score_batches_into_one_directory_never_mix(data, tmp_path):
    out = tmp_path / "scored"
    sc = [*SCORE, "--tracks-dir", data / "tracks", "--scenario-dir", data / "sim", "--output-dir", out]
    a, b = overlap(tmp_path, out, sc, [*sc[:-2], "--cutoff", "2", "--output-dir", out])
    assert a.returncode == 0, a.stderr
    refused_for_the_first(b, a.pid, "--output-dir", out)
    assert sorted(os.listdir(tmp_path)) == ["hold.fifo", "scored"]
    assert main([str(x) for x in sc[:-1]] + [str(tmp_path / "lone")]) == 0
    timed = {"summary.csv"}  # it holds compute times
    assert {k: v for k, v in files(out).items() if k not in timed} == {
        k: v for k, v in files(tmp_path / "lone").items() if k not in timed
    }


def test_two_aggregates_into_one_directory_never_mix_and_the_marker_stays(data, tmp_path, capsys):
    out = tmp_path / "tab"
    agg = ["aggregate", data / "met", "--out-dir", out]
    a, b = overlap(tmp_path, out, agg, agg)
    assert a.returncode == 0, a.stderr
    refused_for_the_first(b, a.pid, "--out-dir", out)
    assert files(out) == files(data / "tab")
    assert json.loads((out / MARKER).read_text())["holds"] == "tables"
    code, err = run([*SIM, "--seeds", "0", "--output-dir", out], capsys)  # tables are not replaced
    assert code == 2 and "refusing to replace a directory of tables" in err
    assert files(out) == files(data / "tab")


def test_two_simulate_batches_into_one_directory_never_mix(data, tmp_path):
    out = tmp_path / "sim"
    a, b = overlap(
        tmp_path,
        out,
        [*SIM, "--seeds", "0", "1", "--output-dir", out],
        [*SIM, "--seeds", "7", "--output-dir", out],
    )  # noqa: E501
    assert a.returncode == 0, a.stderr
    refused_for_the_first(b, a.pid, "--output-dir", out)
    assert files(out) == files(data / "sim")
    assert sorted(os.listdir(tmp_path)) == ["hold.fifo", "sim"]


def test_a_lock_held_elsewhere_refuses_and_a_dead_holders_lock_is_taken_over(data, tmp_path, capsys):
    out = tmp_path / "s.nc"
    out.write_bytes(b"the old output")
    record = {
        "nllbench_lock": 1,
        "pid": 4242,
        "host": "elsewhere",
        "command": "nllbench simulate",
        "since": "then",
    }  # noqa: E501
    fd = os.open(lock_name(out), os.O_RDWR | os.O_CREAT)
    try:
        os.write(fd, json.dumps(record).encode())
        fcntl.flock(fd, fcntl.LOCK_EX)  # a live writer
        code, err = run([*SIM, "--seed", "0", "-o", out], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert f"-o {str(out)!r}: another nllbench command (pid 4242 on host elsewhere" in err
        assert out.read_bytes() == b"the old output"
    finally:
        os.close(fd)  # its process died: the kernel releases the lock; the file stays behind
    assert lock_name(out).exists()
    assert run([*SIM, "--seed", "0", "-o", out], capsys)[0] == 0
    assert sorted(os.listdir(tmp_path)) == ["s.nc"]  # the stale lock file is gone
    assert out.read_bytes() == (data / "sim" / "seed0.nc").read_bytes()


def test_a_users_file_named_like_the_summary_is_kept(data, tmp_path, capsys):
    out, summary = tmp_path / "m.nc", tmp_path / "m.summary.csv"
    summary.write_text("my own summary\n")
    score = ["score", data / "tracks.csv", data / "sim" / "seed0.nc", *SCORE[1:]]
    code, err = run([*score, "-o", out], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"--summary {str(summary)!r}: refusing to replace a file beside {str(out)!r}" in err
    assert sorted(os.listdir(tmp_path)) == ["m.summary.csv"] and summary.read_text() == "my own summary\n"
    assert run([*score, "-o", out, "--summary", summary], capsys)[0] == 0  # named: replaced
    assert run([*score, "-o", out], capsys)[0] == 0  # written with m.nc by nllbench: replaced
    summary.write_text(summary.read_text() + "my note\n")  # changed since: the user's now
    assert run([*score, "-o", out], capsys)[0] == 2
    assert summary.read_text().endswith("my note\n")


def test_a_users_file_named_like_a_figures_other_format_is_kept(data, tmp_path, capsys):
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    pdf.write_bytes(b"my own pdf")
    code, err = run(["plot", "clutter", "--tables", data / "tab", "-o", png], capsys)
    assert code == 2 and f"-o {str(pdf)!r}: refusing to replace a file beside {str(png)!r}" in err
    assert sorted(os.listdir(tmp_path)) == ["f.pdf"] and pdf.read_bytes() == b"my own pdf"
    pdf.unlink()
    assert run(["plot", "clutter", "--tables", data / "tab", "-o", png], capsys)[0] == 0
    assert run(["plot", "clutter", "--tables", data / "tab", "-o", png], capsys)[0] == 0  # its own


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_a_device_node_output_is_refused(data, tmp_path, capsys):
    code, err = run([*SIM, "--seed", "0", "-o", "/dev/null"], capsys)
    assert code == 2 and "-o '/dev/null': expected a regular file or a directory, got a character dev" in err
    assert Path("/dev/null").is_char_device()

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"out\.fifo': expected a regular file or a new path, got a FIFO"):
        check_output(fifo, "-o")
    (tmp_path / "real.nc").write_bytes(b"mine")
    (tmp_path / "link.nc").symlink_to(tmp_path / "real.nc")
    code, err = run([*SIM, "--seed", "0", "-o", tmp_path / "link.nc"], capsys)
    assert code == 2 and "link.nc': is a symbolic link" in err
    assert (tmp_path / "link.nc").is_symlink() and (tmp_path / "real.nc").read_bytes() == b"mine"


def test_a_fifo_input_is_refused_without_blocking(data, tmp_path):
    fifo = tmp_path / "tracks.csv"
    os.mkfifo(fifo)
    args = ["score", fifo, data / "sim" / "seed0.nc", *SCORE[1:], "-o", tmp_path / "m.nc"]
    proc = subprocess.run(
        [sys.executable, "-m", "nllbench.cli", *map(str, args)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert f"TRACKS {str(fifo)!r}: expected a regular file or a directory, got a FIFO" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["tracks.csv"]
    # a FIFO among the files of a directory input: refused before anything is read
    sim = tmp_path / "sim"
    shutil.copytree(data / "sim", sim)
    (sim / "seed1.nc").unlink()
    os.mkfifo(sim / "seed1.nc")
    ev = [*EVALUATE, "--posterior-dir", data / "post", "--scenario-dir", sim, "--output-dir", tmp_path / "m"]
    proc = subprocess.run(
        [sys.executable, "-m", "nllbench.cli", *map(str, ev)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert f"--scenario-dir {str(sim)!r}: holds 'seed1.nc', a FIFO (named pipe)" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["sim", "tracks.csv"]
    from nllbench.cli.common import seed_files

    with pytest.raises(ValueError, match=r"seed1\.nc': expected a regular file, got a FIFO"):
        seed_files(str(sim))


@pytest.fixture
def tmpfs(tmp_path):
    """A mount point: a 64 KiB tmpfs at tmp_path/mnt (root only), unmounted afterwards."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        # lazily: a NetCDF library that failed on the full disk may keep its (removed) file open
        subprocess.run(["umount", "-l", str(mnt)], check=True)


def test_a_mount_point_output_directory_is_refused(tmpfs, capsys):
    code, err = run([*SIM, "--seeds", "0", "--output-dir", tmpfs], capsys)
    assert code == 2 and f"--output-dir {str(tmpfs)!r}: is a mount point" in err
    assert sorted(os.listdir(tmpfs.parent)) == ["mnt"] and os.listdir(tmpfs) == []


def test_a_full_disk_is_named_and_the_old_output_stays(tmpfs, capsys):
    out = tmpfs / "s.nc"
    out.write_bytes(b"the old output")
    code, err = run(
        ["simulate", "--scenario", "williams15", "--steps", "400", "--seed", "0", "-o", out], capsys
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"-o {str(out)!r}: the disk is full (" in err and "Errno" not in err
    assert sorted(os.listdir(tmpfs)) == ["s.nc"] and out.read_bytes() == b"the old output"


def test_disk_full_errors_of_the_writers_name_the_output(tmp_path, capsys, monkeypatch):

    out = tmp_path / "s.nc"
    out.write_bytes(b"the old output")

    def enospc(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    batch = tmp_path / "sim"
    assert run([*SIM, "--seeds", "0", "--output-dir", batch], capsys)[0] == 0
    before = files(batch)
    monkeypatch.setattr(xr.Dataset, "to_netcdf", enospc)
    code, err = run([*SIM, "--seed", "0", "-o", out], capsys)
    assert code == 2 and f"-o {str(out)!r}: the disk is full (no space left on device)" in err
    assert sorted(os.listdir(tmp_path)) == ["s.nc", "sim"] and out.read_bytes() == b"the old output"
    code, err = run([*SIM, "--seeds", "0", "1", "--output-dir", batch], capsys)
    assert code == 2 and f"--output-dir {str(batch)!r}: the disk is full (no space left" in err
    assert sorted(os.listdir(tmp_path)) == ["s.nc", "sim"] and files(batch) == before

    def hdf_error(self, *args, **kwargs):
        raise RuntimeError("NetCDF: HDF error")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", hdf_error)
    code, err = run([*SIM, "--seed", "0", "-o", out], capsys)  # the disk has room: not called full
    assert code == 2 and err.strip() == "nllbench simulate: error: NetCDF: HDF error"
    full = os.statvfs_result((4096, 4096, 100, 0, 0, 100, 0, 0, 0, 255))
    monkeypatch.setattr(os, "statvfs", lambda path: full)
    code, err = run([*SIM, "--seed", "0", "-o", out], capsys)
    assert code == 2 and f"-o {str(out)!r}: the disk is full (NetCDF: HDF error with 0 KiB left" in err
    assert sorted(os.listdir(tmp_path)) == ["s.nc", "sim"] and out.read_bytes() == b"the old output"


def write_directory(path: Path, text: str, kind: str = "tables") -> None:
    """Write ``path`` as a directory holding ``new.csv`` (``text``) through the atomic writer."""
    with committed_together(Output(path, "--out-dir", directory=True, kind=kind)) as (tmp,):
        (tmp / "new.csv").write_text(text)


def test_a_directory_is_replaced_by_one_exchange_where_the_kernel_can(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x").touch()
    if not exchange.exchange_directories(tmp_path / "a", tmp_path / "b"):
        pytest.skip(f"renameat2(RENAME_EXCHANGE) is not supported on the file system of {tmp_path}")
    assert os.listdir(tmp_path / "b") == ["x"] and os.listdir(tmp_path / "a") == []
    out = tmp_path / "tab"
    with committed_together(Output(out, "--out-dir", directory=True, kind="tables")) as (tmp,):
        (tmp / "old.csv").write_text("old")
    calls, real = [], exchange.exchange_directories

    def spy(a, b):
        calls.append((Path(a), Path(b), sorted(os.listdir(b))))
        return real(a, b)

    monkeypatch.setattr(exchange, "exchange_directories", spy)
    monkeypatch.setattr(exchange, "aside_name", lambda *a: pytest.fail("moved aside despite the exchange"))
    write_directory(out, "new")
    assert [(c[1], c[2]) for c in calls] == [(out, [MARKER, "old.csv"])] and calls[0][0].name.startswith(".")
    assert sorted(os.listdir(out)) == [MARKER, "new.csv"] and (out / "new.csv").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "tab"]


@pytest.mark.parametrize("code", [errno.EIO, errno.EACCES, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP])
def test_a_failing_exchange_leaves_the_old_directory_and_an_unsupported_one_takes_two_renames(
    tmp_path, monkeypatch, code
):
    out = tmp_path / "tab"
    write_directory(out, "old")
    before = files(out)

    def failing(*args):
        ctypes.set_errno(code)
        return -1

    monkeypatch.setattr(exchange, "_renameat2", lambda: failing)
    if code in exchange.UNSUPPORTED:  # the two-rename route
        write_directory(out, "new")
        assert (out / "new.csv").read_text() == "new"
    else:
        with pytest.raises(OSError) as caught:
            write_directory(out, "new")
        assert caught.value.errno == code and caught.value.filename2 == str(out)
        assert files(out) == before
    assert sorted(os.listdir(tmp_path)) == ["tab"]


def test_a_failing_second_rename_puts_the_old_directory_back(tmp_path, monkeypatch):
    out = tmp_path / "tab"
    write_directory(out, "old")
    before, rename = files(out), os.replace

    def replace(src, dst):
        if Path(dst) == out and ".nllbench-partial." in Path(src).name:
            raise OSError(errno.EIO, os.strerror(errno.EIO), str(src))
        rename(src, dst)

    monkeypatch.setattr(exchange, "exchange_directories", lambda a, b: False)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="Input/output error"):
        write_directory(out, "new")
    assert files(out) == before and sorted(os.listdir(tmp_path)) == ["tab"]


KILLED_BETWEEN_RENAMES = """
import json, os, sys
from pathlib import Path
import nllbench.store.exchange as exchange
from nllbench.store import MARKER, Output, committed_together
out = Path(sys.argv[1])
kind = json.loads((out / MARKER).read_text())["holds"]
exchange.exchange_directories = lambda a, b: False  # a kernel or file system that cannot exchange
rename = os.replace
def replace(src, dst):
    if Path(dst) == out:  # the second rename: killed just before it
        os._exit(9)
    rename(src, dst)
os.replace = replace
with committed_together(Output(out, "--output-dir", directory=True, kind=kind)) as (tmp,):
    (tmp / "seed0.nc").write_text("the new run")
"""


@pytest.mark.parametrize("then", ["reader", "writer", "beside"])
def test_a_writer_killed_between_the_two_renames_loses_nothing(data, tmp_path, capsys, then):
    met = tmp_path / "met"
    shutil.copytree(data / "met", met)
    before = files(met)
    killed = subprocess.run([sys.executable, "-c", KILLED_BETWEEN_RENAMES, str(met)], capture_output=True)
    assert killed.returncode == 9, killed.stderr.decode()
    aside = [p for p in tmp_path.iterdir() if ".met.nllbench-old." in p.name]
    assert not met.exists() and len(aside) == 1 and files(aside[0]) == before
    if then == "reader":  # a command reading the metrics finds them in place
        assert run(["aggregate", met, "--out-dir", tmp_path / "tab"], capsys)[0] == 0
        assert (tmp_path / "tab" / "runs.csv").is_file()
    elif then == "writer":  # the next writer of met: failing, refused, then done
        with pytest.raises(RuntimeError, match="stop"):
            with committed_together(Output(met, "--output-dir", directory=True, kind="metrics files")):
                raise RuntimeError("stop")
        assert files(met) == before
        with pytest.raises(ValueError, match="refusing to replace a directory of metrics files"):
            write_directory(met, "tables")
        assert files(met) == before
        write_directory(met, "new", kind="metrics files")
        assert sorted(os.listdir(met)) == [MARKER, "new.csv"]
    else:  # a command writing beside it clears the killed run's leftovers
        with committed_together(Output(tmp_path / "other.csv", "-o")) as (tmp,):
            tmp.write_text("x")
    if then != "writer":
        assert files(met) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


KILLED_WRITER = """
import sys, time
from pathlib import Path
from nllbench.store import Output, committed_together
d = Path(sys.argv[1])
outputs = Output(d / "out.nc", "-o"), Output(d / "batch0", "--output-dir", directory=True)
with committed_together(*outputs) as (f, b):
    f.write_text("half")
    (b / "seed0.nc").write_text("half")
    print("writing", flush=True)
    time.sleep(120)
"""


def test_sigkill_during_a_write_leaves_temporaries_that_the_next_write_removes(tmp_path):
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    left = sorted(os.listdir(tmp_path))
    token = rf"{proc.pid}-[0-9a-f]{{8}}"
    expected = [r"\.batch0\.nllbench-lock", rf"\.batch0\.nllbench-partial\.{token}"]
    expected += [r"\.out\.nc\.nllbench-lock", rf"\.out\.nc\.nllbench-partial\.{token}"]
    assert len(left) == 4 and all(re.fullmatch(e, n) for e, n in zip(expected, left, strict=True)), left
    # names a user might choose beside the output are never taken for temporaries (earlier versions'
    # fixed and random-named temporaries included)
    mine = [".out.nc.nllbench-partial", ".out.nc.backup01", ".out.nc.k2j4_x9a.tmp"]
    for name in mine:
        (tmp_path / name).write_text("the user's")
    with committed_together(
        Output(tmp_path / "out.nc", "-o"), Output(tmp_path / "batch0", "--output-dir", directory=True)
    ) as (f, b):
        f.write_text("whole")
        (b / "seed0.nc").write_text("whole")
    assert sorted(os.listdir(tmp_path)) == sorted(["batch0", "out.nc", *mine])
    assert (tmp_path / "out.nc").read_text() == "whole"
