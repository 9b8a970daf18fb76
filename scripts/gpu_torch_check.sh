#!/usr/bin/env bash
# The GPU checks of nllbench.torch in one short run, on a machine with a CUDA device and torch.
#
#   bash scripts/gpu_torch_check.sh [OUT_DIR]
#
# 1. what the machine is (GPU, driver, torch, numpy, numba);
# 2. the torch loss tests (tests/unit/torch) with NLLBENCH_REQUIRE_CUDA=1, so that the CUDA tests
#    (tests/unit/torch/test_set_nll_on_cuda.py: values and gradients on the device equal the CPU's)
#    fail instead of skipping when no device is seen;
# 3. benchmarks/bench_torch_loss.py on the GPU and on the CPU, at the documented size (batch 64,
#    N = 16) and at a training size (batch 256, N = 32, up to 32 truths).
# Logs go to OUT_DIR (default: a new folder under /tmp). Exit status: that of the tests.
set -uo pipefail
out=${1:-$(mktemp -d /tmp/gpu_torch_check.XXXXXX)}
mkdir -p "$out"
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export NLLBENCH_REQUIRE_TORCH=1 NLLBENCH_REQUIRE_CUDA=1
py=${PYTHON:-python3}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi: not found"
  lscpu | grep -E "Model name|^CPU\(s\)" || true
  "$py" -c "import sys, torch, numpy, numba, scipy; print('python', sys.version.split()[0], '| torch', torch.__version__, '| cuda', torch.version.cuda, '| device', torch.cuda.get_device_name() if torch.cuda.is_available() else None, '| numpy', numpy.__version__, '| numba', numba.__version__, '| scipy', scipy.__version__)"
} 2>&1 | tee "$out/machine.txt"
"$py" -m pytest tests/unit/torch -q -s -p no:cacheprovider -o addopts="-m 'not slow' --import-mode=importlib --durations=10" 2>&1 | tee "$out/pytest.txt"
status=${PIPESTATUS[0]}
for dev in cuda cpu; do
  "$py" benchmarks/bench_torch_loss.py --device "$dev" --rounds 7 --threads 1 2>&1 | tee "$out/bench_${dev}_64.txt"
  "$py" benchmarks/bench_torch_loss.py --device "$dev" --rounds 3 --threads 1 --batch 256 --outputs 32 --truths 32 2>&1 | tee "$out/bench_${dev}_256.txt"
done
echo "tests exit status: $status; logs in $out"
exit "$status"
