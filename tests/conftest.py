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


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
