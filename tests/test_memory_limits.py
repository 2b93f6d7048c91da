"""The memory estimates count the process's own limit (``RLIMIT_AS``, ``ulimit -v``), not only
the machine's free memory: under a 4 GB limit, allocations of 5-13 GB are refused with the
estimate before anything is allocated, instead of failing in the allocator."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

resource = pytest.importorskip("resource")

CASES = {
    "dense jacobian 7.2 GB": "ga.jacobian(lambda t: 2 * t, torch.zeros(30_000, dtype=torch.float64))",
    "sparsity_pattern 5 GB": "ga.sparsity_pattern(lambda t: 2 * t, torch.zeros(25_000, dtype=torch.float64))",
    "SparseJacobian colouring 12.8 GB": (
        "ga.SparseJacobian(torch.sparse_coo_tensor(torch.tensor([[0], [0]]), "
        "torch.ones(1, dtype=torch.bool), (1, 200_000_000)))"),
}


def run_limited(code: str, limit: int = 4 * 2**30) -> subprocess.CompletedProcess:
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    script = textwrap.dedent(f"""
        import torch, gradarg as ga
        try:
            {code}
        except MemoryError as err:
            print("MemoryError:", err)
        """)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          preexec_fn=cap, timeout=300, check=False)


@pytest.mark.parametrize("name", list(CASES))
def test_a_size_past_the_process_limit_is_refused_with_its_estimate(name):
    done = run_limited(CASES[name])
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.startswith("MemoryError:"), (done.stdout, done.stderr[-800:])
    assert " GB" in done.stdout  # the estimate, said


def test_without_a_limit_nothing_is_capped():
    from gradarg._validate import address_space_left

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        assert address_space_left() is None
    else:
        assert address_space_left() is not None
