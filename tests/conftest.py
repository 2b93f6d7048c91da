import os

import pytest
import torch
from hypothesis import HealthCheck, settings

# Property tests: few examples, no deadline (the first call of a route compiles batching rules),
# derandomized so that a run is reproducible, and no example database in the working tree.
settings.register_profile(
    "gradarg",
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("gradarg")

# GRADARG_HYPOTHESIS=long: the same property tests with many more examples, run by hand
# (e.g. GRADARG_HYPOTHESIS=long pytest tests/check/test_fd_reliability.py -n 0).
settings.register_profile("gradarg-long", settings.get_profile("gradarg"), max_examples=1000)
# GRADARG_HYPOTHESIS=random: new examples at every run (not derandomized), to look for what the
# fixed ones miss; a failure prints its example, which then becomes an @example of its test.
settings.register_profile("gradarg-random", settings.get_profile("gradarg"), derandomize=False)
if os.environ.get("GRADARG_HYPOTHESIS") in ("long", "random"):
    settings.load_profile(f"gradarg-{os.environ['GRADARG_HYPOTHESIS']}")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


# Tests marked slow (a second bug, seed or dtype of a behaviour that CI checks once at the same
# size, or at a smaller size) run only with GRADARG_SLOW_TESTS=1, by hand:
# GRADARG_SLOW_TESTS=1 nox -s tests.  CI (.ci/run) runs the rest within its time.
def pytest_collection_modifyitems(config, items):
    if os.environ.get("GRADARG_SLOW_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="slow: GRADARG_SLOW_TESTS=1 runs it")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
