"""jacobian(method="auto") chooses its route by timing both where it runs (speeds.RouteTrial):
the trial's calls take each route in a row and return the Jacobian each time, only calls after
one by the same route are timed, the faster route is kept in this process and on disk per
processor, and a later function with the same code finds it there without a trial.  Small
Jacobians keep the rule (no trial).  Class: a route timed right after a call of the other one
pays for the switch (caches, the allocator), unequally; over generated steady times, switch
costs and noise the trial keeps the route that is faster once warm."""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg
from gradarg.core import choose, memory, speeds


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Route memories go to a fresh folder (never the user's inductor cache)."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))


def make(n_in: int, n_out: int, seed: int = 0):
    w = torch.randn(n_out, n_in, generator=torch.Generator().manual_seed(seed),
                    dtype=torch.float64)

    def fn(x):
        return torch.tanh(w @ x)

    return fn, torch.randn(n_in, generator=torch.Generator().manual_seed(1), dtype=torch.float64)


def spy_routes(monkeypatch) -> list[str]:
    """The route each call took: forward mode is ``choose._forward``, anything else reverse."""
    taken: list[str] = []
    real = choose._forward

    def forward(*args, **kwargs):
        taken.append("forward")
        return real(*args, **kwargs)

    monkeypatch.setattr(choose, "_forward", forward)
    return taken


def test_route_trial_keeps_the_faster_route_and_ignores_the_warm_up():
    trial = speeds.RouteTrial("reverse")
    assert trial.order == ["forward"] * 3 + ["reverse"] * 3  # the other route first, in a row
    times = {"forward": [9.0, 1.0, 3.0], "reverse": [7.0, 2.0, 2.5]}  # first of each: untimed
    got = None
    for route in trial.order:
        got = trial.record(route, times[route].pop(0))
    assert got == "forward" and trial.times == {"forward": [1.0, 3.0], "reverse": [2.0, 2.5]}
    slow = speeds.RouteTrial("forward")
    for route in slow.order:
        got = slow.record(route, 5.0 if route == "forward" else 1.0)
    assert got == "reverse"


@settings(max_examples=300, deadline=None)
@given(first=st.sampled_from(["forward", "reverse"]),
       steady=st.tuples(st.floats(1.0, 10.0), st.floats(1.0, 10.0)),
       switch=st.tuples(st.floats(0.0, 20.0), st.floats(0.0, 20.0)),
       cold=st.floats(0.0, 50.0), noise=st.lists(st.floats(0.0, 0.02), min_size=8, max_size=8))
def test_the_trial_keeps_the_route_faster_once_warm(first, steady, switch, cold, noise):
    """Generated calls: each route has a warm time, a cost paid by a call right after one of
    the other route (its own: forward mode's batching pays more than reverse mode's), a
    first-call cost, and noise below 2 %.  Where the warm times differ by more than the noise,
    the trial keeps the faster.  (Timed alternately, it kept the slower route whenever the
    faster one's switch cost outweighed the difference.)"""
    warm = dict(zip(("forward", "reverse"), steady, strict=True))
    pay = dict(zip(("forward", "reverse"), switch, strict=True))
    if abs(warm["forward"] - warm["reverse"]) <= 0.05 * max(warm.values()):
        return  # a tie within the noise: either route is right
    trial = speeds.RouteTrial(first)
    last, seen, got = first, {first}, None
    for i, route in enumerate(trial.order):
        t = warm[route] * (1 + noise[i])
        t += pay[route] if route != last else 0.0
        t += cold if route not in seen else 0.0
        got = trial.record(route, t)
        last = route
        seen.add(route)
    assert got == min(warm, key=warm.__getitem__)


def test_auto_times_both_routes_then_keeps_one_and_remembers_it_on_disk(monkeypatch):
    fn, x = make(64, 64)
    want = torch.func.jacrev(fn)(x)
    taken = []
    calls = speeds.TRIAL_CALLS + 3
    forward_calls = spy_routes(monkeypatch)
    for _ in range(calls):
        n_before = len(forward_calls)
        torch.testing.assert_close(gradarg.jacobian(fn, x), want)
        taken.append("forward" if len(forward_calls) > n_before else "reverse")
    trial_routes = taken[1:1 + speeds.TRIAL_CALLS]
    assert taken[0] == "reverse"  # the rule: as many outputs as inputs
    assert trial_routes == speeds.RouteTrial("reverse").order  # each route in a row
    plan = speeds.PLANS.get(fn, ("auto", speeds.signature((x,))))
    assert plan in ("forward", "reverse")
    assert taken[1 + speeds.TRIAL_CALLS:] == [plan, plan]  # kept after the trial
    name = speeds.route_key(fn, (x,))
    got = memory.recall("routes", name, speeds.ROUTES_VERSION)
    assert got is not None and got["route"] == plan
    assert os.path.dirname(memory.memory_dir("routes")).startswith(os.environ[
        "TORCHINDUCTOR_CACHE_DIR"])
    # another function with the same code and captured shapes: the remembered route at once
    fn2, _ = make(64, 64, seed=5)
    forward_calls.clear()
    torch.testing.assert_close(gradarg.jacobian(fn2, x), torch.func.jacrev(fn2)(x))
    assert (len(forward_calls) == 1) == (plan == "forward")
    assert speeds.trial_of(fn2, (x,)) is None


@pytest.mark.parametrize("route", ["forward", "reverse"])
def test_a_route_remembered_on_this_machine_is_taken_from_the_first_call(route, monkeypatch):
    fn, x = make(64, 80)  # the rule alone: forward (more outputs than inputs)
    memory.remember("routes", speeds.route_key(fn, (x,)), {"route": route},
                    speeds.ROUTES_VERSION)
    forward_calls = spy_routes(monkeypatch)
    torch.testing.assert_close(gradarg.jacobian(fn, x), torch.func.jacrev(fn)(x))
    assert forward_calls == (["forward"] if route == "forward" else [])
    assert speeds.trial_of(fn, (x,)) is None


def test_another_processor_does_not_read_this_ones_memory(monkeypatch):
    fn, x = make(64, 64)
    memory.remember("routes", speeds.route_key(fn, (x,)), {"route": "forward"},
                    speeds.ROUTES_VERSION)
    monkeypatch.setattr(memory, "machine", lambda: "another processor")
    assert speeds.stored_plan(fn, (x,)) is None


def test_small_jacobians_keep_the_rule_without_a_trial(monkeypatch):
    fn, x = make(16, 32)  # 512 entries
    forward_calls = spy_routes(monkeypatch)
    for _ in range(3):
        torch.testing.assert_close(gradarg.jacobian(fn, x), torch.func.jacrev(fn)(x))
    assert forward_calls == ["forward"] * 3 and speeds.trial_of(fn, (x,)) is None
    assert not os.path.exists(memory.memory_dir("routes"))


def test_no_trial_where_only_one_route_applies(monkeypatch):
    fn, x = make(64, 64)
    forward_calls = spy_routes(monkeypatch)
    for _ in range(speeds.TRIAL_CALLS + 1):
        gradarg.jacobian(fn, x, strict=True)
        gradarg.jacobian(fn, x, vectorize=False)
        gradarg.jacobian(fn, x, method="reverse")
    assert forward_calls == [] and speeds.trial_of(fn, (x,)) is None


def test_small_jacobians_never_read_the_disk(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the route memory was read for a small Jacobian")

    monkeypatch.setattr(memory, "recall", refuse)
    x = torch.randn(16, dtype=torch.float64)
    for k in range(3):  # a new function each call, as a loop over lambdas makes
        gradarg.jacobian(lambda u, k=k: torch.sin(u * k), x)
