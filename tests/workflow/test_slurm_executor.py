"""The .test workflow through Snakemake's SLURM executor on a real one-node SLURM.

The test installs Debian's SLURM and munge (root), starts a cluster on
localhost with scripts/slurm_local.sh, runs the workflow through the SLURM
executor, compares every output with the local run's, and stops exactly what
it started. It runs in CI (CI=true) or with NLLBENCH_SLURM_TEST=1, as root on
a Debian machine; elsewhere it is skipped with the reason. Every command has a
hard timeout that kills, so it never hangs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from support.paths import ROOT

SCRIPT = ROOT / "scripts" / "slurm_local.sh"
RESULT_DIRS = ("paper", "scenarios", "posteriors", "metrics", "tables", "figures")


def _skip_reason() -> str | None:
    if not (os.environ.get("CI") == "true" or os.environ.get("NLLBENCH_SLURM_TEST") == "1"):
        return "runs in CI or with NLLBENCH_SLURM_TEST=1 (installs Debian packages, starts daemons as root)"
    if os.geteuid() != 0:
        return "needs root to install and start SLURM"
    if shutil.which("apt-get") is None and shutil.which("slurmctld") is None:
        return "needs Debian's apt-get (or an installed SLURM)"
    if Path("/etc/slurm/slurm.conf").exists() and not Path("/etc/slurm/slurm.conf").is_symlink():
        return "a SLURM configuration already exists on this machine; not starting a second cluster"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[slurm]')"
    return None


pytestmark = [pytest.mark.slurm, pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))]


def run(cmd, timeout, **kw):
    """subprocess.run with a hard timeout (SIGKILL of the whole command)."""
    return subprocess.run(["timeout", "-s", "KILL", str(timeout), *cmd], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    state = tmp_path_factory.mktemp("slurm")
    env = {**os.environ, "NLLBENCH_SLURM_DIR": str(state)}
    proc = run(["bash", str(SCRIPT), "install"], 600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run(["bash", str(SCRIPT), "start"], 180, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    try:
        yield {**env, "SLURM_CONF": str(state / "slurm.conf")}
    finally:
        run(["bash", str(SCRIPT), "stop"], 120, env=env)


def files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for d in RESULT_DIRS for p in (root / d).rglob("*") if p.is_file()}


def test_workflow_through_slurm_equals_local_run(slurm_cluster, test_run, tmp_path):
    results = tmp_path / "results"
    cmd = [
        "snakemake",
        "--workflow-profile",
        "profiles/slurm",
        "--configfile",
        ".test/config/config.yaml",
        "--config",
        f"results={results}",
        "--jobs",
        "4",
        "--default-resources",
        "slurm_account=nllbench",
        "slurm_partition=debug",
        "runtime=10",
        "mem_mb=1000",
        "cpus_per_task=1",
    ]
    proc = run(cmd, 1500, cwd=ROOT, env=slurm_cluster)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    assert "SLURM jobid" in proc.stdout + proc.stderr  # the jobs really went through SLURM
    local, remote = files(test_run), files(results)
    assert remote == local
    for rel in sorted(local):
        a, b = test_run / rel, results / rel
        if rel.endswith(".nc"):
            x, y = xr.open_dataset(a), xr.open_dataset(b)
            assert set(x.data_vars) == set(y.data_vars), rel
            for v in x.data_vars:
                np.testing.assert_array_equal(x[v].values, y[v].values, err_msg=rel)
            assert set(x.attrs) == set(y.attrs), rel
            for k, val in x.attrs.items():
                assert np.array_equal(np.asarray(val), np.asarray(y.attrs[k])), (rel, k)
        elif rel == "figures/timing.caption.txt":
            continue  # the timing figure's caption quotes the measured times (machine-dependent)
        elif rel.endswith((".csv", ".txt")):
            assert a.read_bytes() == b.read_bytes(), rel
        elif Path(rel).name.startswith(".snakemake"):
            continue  # Snakemake's own markers of directory outputs
        else:  # figures: drawn from equal tables
            assert b.stat().st_size > 0, rel
