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


def runs(routes: list[str]) -> list[tuple[str, int]]:
    """Consecutive calls of one route, as ``(route, calls)``."""
    out: list[tuple[str, int]] = []
    for route in routes:
        if out and out[-1][0] == route:
            out[-1] = (route, out[-1][1] + 1)
        else:
            out.append((route, 1))
    return out


def play(trial: speeds.RouteTrial, seconds) -> tuple[str | None, list[str]]:
    """Make ``trial``'s calls, ``seconds(route, i)`` each (``i``: the call's place in the
    trial); the winner and the routes called."""
    called: list[str] = []
    got = None
    for i in range(speeds.TRIAL_MAX_CALLS + 1):
        if not trial.pending:
            break
        route = trial.next_route()
        got = trial.record(route, seconds(route, i))
        called.append(route)
    return got, called


def test_short_calls_are_timed_more_often_than_long_ones():
    """A run lasts TRIAL_RUN calls when they are long, up to TRIAL_RUN_MAX while its timed
    calls add up to less than TRIAL_SECONDS."""
    _, called = play(speeds.RouteTrial("reverse"), lambda route, i: 1.0)
    assert runs(called) == [("forward", speeds.TRIAL_RUN), ("reverse", speeds.TRIAL_RUN)]
    _, called = play(speeds.RouteTrial("reverse"), lambda route, i: 1e-5)
    assert runs(called) == [("forward", speeds.TRIAL_RUN_MAX),
                            ("reverse", speeds.TRIAL_RUN_MAX)]
    step = speeds.TRIAL_SECONDS / 4  # 4 timed calls (5 in the run) reach TRIAL_SECONDS
    _, called = play(speeds.RouteTrial("reverse"), lambda route, i: step)
    assert runs(called) == [("forward", 5), ("reverse", 5)]


@settings(max_examples=300, deadline=None)
@given(first=st.sampled_from(["forward", "reverse"]),
       warm=st.floats(2e-5, 2e-4), apart=st.floats(0.06, 0.5),
       cold=st.floats(0.5, 3.0), noise=st.lists(st.floats(0.0, 0.02), min_size=64,
                                                max_size=64))
def test_a_near_tie_below_a_millisecond_goes_to_the_route_faster_once_warm(
        first, warm, apart, cold, noise):
    """Short calls (20-200 us) two routes apart by 6-50 %, each call of the process slower by
    a cold cost that halves from call to call (caches, the allocator, lazy set-up: up to 3x
    the warm time on the first call), noise below 2 %.  The other route runs first, in the
    cold: with runs of two timed calls (TRIAL_RUN_MAX = TRIAL_RUN) the trial kept the rule's
    route in 74 % of such draws where the other was faster by 25 %, in 19 % at 50 %."""
    other = "reverse" if first == "forward" else "forward"
    times = {other: warm, first: warm * (1 + apart)}  # the other route is the faster one

    def seconds(route, i):
        return times[route] * (1 + noise[i] + cold * 0.5 ** i)

    got, _ = play(speeds.RouteTrial(first), seconds)
    assert got == other


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


def spy_paths(monkeypatch) -> list[tuple[str, str | None]]:
    """(mode, path) of every batched call: the path a trial or a plan named (None: the
    tables)."""
    seen: list[tuple[str, str | None]] = []
    for mode, name in (("forward", "forward_vectorized"), ("reverse", "reverse_vectorized")):
        real = getattr(choose, name)

        def spy(*args, _real=real, _mode=mode, **kwargs):
            seen.append((_mode, kwargs.get("path")))
            return _real(*args, **kwargs)

        monkeypatch.setattr(choose, name, spy)
    return seen


def test_auto_times_each_eligible_path_then_keeps_one_and_remembers_it_on_disk(monkeypatch):
    fn, x = make(64, 64)  # tanh(W @ x): no older batching rule for tanh's backward
    want = torch.func.jacrev(fn)(x)
    timed: list[str] = []
    real_end = speeds.end_trial_call

    def end(fn_, xs, trial, route, seconds):
        timed.append(route)
        return real_end(fn_, xs, trial, route, seconds)

    monkeypatch.setattr(speeds, "end_trial_call", end)
    paths = spy_paths(monkeypatch)
    for _ in range(speeds.TRIAL_MAX_CALLS + 3):
        torch.testing.assert_close(gradarg.jacobian(fn, x), want)
    assert paths[0] == ("reverse", None)  # the rule: as many outputs as inputs, the tables
    # each candidate in a run of its own, the route of the rule last; the older paths are not
    # candidates (tanh has no older rule) and the double-VJP drops out (mv's double backward
    # has none either)
    assert [route for route, _ in runs(timed)] == ["forward:func", "reverse:func"]
    assert all(speeds.TRIAL_RUN <= n <= speeds.TRIAL_RUN_MAX for _, n in runs(timed))
    assert ("forward", "double") in paths and ("forward", "legacy") not in paths
    plan = speeds.PLANS.get(fn, ("auto", speeds.signature((x,))))
    assert plan in ("forward:func", "reverse:func")
    mode, _, path = plan.partition(":")
    assert paths[-3:] == [(mode, path)] * 3  # kept after the trial
    assert speeds.trial_of(fn, (x,)) is None
    name = speeds.route_key(fn, (x,))
    got = memory.recall("routes", name, speeds.ROUTES_VERSION)
    assert got is not None and got["route"] == plan
    assert os.path.dirname(memory.memory_dir("routes")).startswith(os.environ[
        "TORCHINDUCTOR_CACHE_DIR"])
    # another function with the same code and captured shapes: the remembered path at once
    fn2, _ = make(64, 64, seed=5)
    paths.clear()
    torch.testing.assert_close(gradarg.jacobian(fn2, x), torch.func.jacrev(fn2)(x))
    assert paths == [(mode, path)]
    assert speeds.trial_of(fn2, (x,)) is None


def test_the_older_paths_are_candidates_where_they_batch_every_node(monkeypatch):
    """sin(x @ W.T): every node has an older batching rule, so the trial times both
    modes through both batching paths (and the double-VJP, which applies to mm)."""
    w = torch.randn(64, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(3))

    def fn(x):
        return torch.sin(x @ w.T)

    x = torch.randn(2, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    timed: list[str] = []
    real_end = speeds.end_trial_call
    monkeypatch.setattr(speeds, "end_trial_call", lambda f, xs, t, r, s: (timed.append(r),
                                                                          real_end(f, xs, t, r, s)))
    want = torch.func.jacrev(fn)(x)
    for _ in range(speeds.TRIAL_MAX_CALLS + 1):
        torch.testing.assert_close(gradarg.jacobian(fn, x), want)
    assert set(timed) == {"reverse:legacy", "reverse:func", "forward:legacy", "forward:double",
                          "forward:func"}
    assert runs(timed)[-1][0] == "reverse:legacy"  # the rule's, last
    assert all(speeds.TRIAL_RUN <= n <= speeds.TRIAL_RUN_MAX for _, n in runs(timed))
    plan = speeds.PLANS.get(fn, ("auto", speeds.signature((x,))))
    assert plan in speeds.ROUTES


def test_a_trial_drops_a_path_that_does_not_apply_and_still_returns_the_jacobian():
    trial = speeds.RouteTrial("reverse:func", ["forward:double", "forward:func"])
    assert trial.order == ["forward:double"] * 3 + ["forward:func"] * 3 + ["reverse:func"] * 3
    assert trial.drop("forward:double") is None
    for route, t in zip(["forward:func"] * 3 + ["reverse:func"] * 3, [9, 2, 2, 9, 1, 3],
                        strict=True):
        got = trial.record(route, t)
    assert got == "reverse:func" and "forward:double" not in trial.times
    last = speeds.RouteTrial("reverse:legacy", ["forward:func"])
    for t in (5, 1, 1):
        assert last.record("forward:func", t) is None
    assert last.drop("reverse:legacy") == "forward:func"  # nothing left: the timed one wins


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
