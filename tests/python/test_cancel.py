"""Stopping a call: Ctrl-C (SIGINT) and cancel() stop it within one batch, and the scorer stays usable."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import prefix_scorer
from conftest import child_env
from prefix_scorer import _testing  # built and installed with the test suite (PREFIX_SCORER_BUILD_TESTS=ON)

PAIRS = [([5 + (q * 7 + i) % 400 for i in range(30 + q)], [c + 1]) for q in range(12) for c in range(4)]


def scorer_stopped_by(stop):
    """A scorer over `synthetic:tiny`, two rows a forward, whose second progress report calls `stop(scorer)`."""
    reports = []
    holder = {}

    def on_progress(done, total):
        reports.append(done)
        if len(reports) == 2:
            stop(holder["scorer"])

    holder["scorer"] = prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny", max_batch_rows=2,
                                                                   on_progress=on_progress)
    return holder["scorer"], reports


def assert_usable(scorer):
    """Nothing left cached by the stopped call, and the next call gives a fresh scorer's numbers."""
    assert scorer.stats["entries_held"] == 0
    want = prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny").loglikelihood(PAIRS)
    got = scorer.loglikelihood(PAIRS)
    assert [g[1] for g in got] == [w[1] for w in want]
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-5)


@pytest.fixture
def sigint_raises():
    """Python's own SIGINT handler, also where the test runner was started with SIGINT ignored (in the background)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_sigint_raises_keyboard_interrupt_within_one_batch_and_the_scorer_stays_usable(sigint_raises):
    scorer, reports = scorer_stopped_by(lambda _: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        scorer.loglikelihood(PAIRS)
    assert len(reports) == 2  # the signal was seen at the report that sent it: no further forward ran
    assert_usable(scorer)


def test_cancel_raises_cancelled():
    scorer, reports = scorer_stopped_by(lambda s: s.cancel())
    with pytest.raises(prefix_scorer.Cancelled, match="cancelled after"):
        scorer.loglikelihood(PAIRS)
    assert len(reports) == 2
    assert_usable(scorer)


def test_ctrl_c_stops_a_long_call_in_another_process():
    # 4,000 requests on synthetic:small run for minutes here; Ctrl-C must end the call within a batch or two. No
    # Python code runs during the call (no progress callback), so only the scorer's own check can see the signal.
    child = textwrap.dedent("""
        import signal, sys, prefix_scorer
        signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started with SIGINT ignored
        scorer = prefix_scorer.PrefixScorer.from_pretrained("synthetic:small", max_batch_rows=8)
        pairs = [([5 + (q * 7 + i) % 4000 for i in range(100 + q % 50)], [c + 1]) for q in range(1000) for c in range(4)]
        try:
            print("scoring", flush=True)
            scorer.loglikelihood(pairs)
            print("finished", flush=True)
        except KeyboardInterrupt:
            # A finished call adds to the totals; one stopped part way does not.
            early = scorer.stats["requests"] == 0
            print("interrupted", "early" if early else "at the end", len(scorer.loglikelihood(pairs[:4])))
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env())
    assert proc.stdout.readline().strip() == "scoring"
    time.sleep(1)  # into the call, which runs for minutes
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert out.strip() == "interrupted early 4", err


def test_the_benchmark_stops_on_sigint(bench):
    proc = subprocess.Popen([str(bench), "--model", "synthetic:small", "--mode", "naive"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.communicate(timeout=3)
    except subprocess.TimeoutExpired:
        pass
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "prefix-scorer-bench: interrupted"


@pytest.mark.parametrize("error", [MemoryError, RuntimeError])
def test_an_error_between_forwards_reaches_the_caller_and_the_scorer_stays_usable(error):
    def fail(_):
        raise error("injected")

    scorer, reports = scorer_stopped_by(fail)
    with pytest.raises(error, match="injected"):
        scorer.loglikelihood(PAIRS)
    assert len(reports) == 2
    assert_usable(scorer)


@pytest.mark.parametrize("fault, error", [("out_of_memory", torch.cuda.OutOfMemoryError), ("torch_error", RuntimeError)])
def test_an_error_inside_any_forward_keeps_its_type_and_context_and_the_scorer_stays_usable(fault, error):
    counter = prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny", max_batch_rows=2)
    counter.loglikelihood(PAIRS)
    forwards = counter.stats["forwards"]
    assert forwards > 3
    for scorer in failing_each_forward(forwards, fault, error, lambda s: s.loglikelihood(PAIRS), max_batch_rows=2):
        assert scorer.stats["entries_pinned"] == 0
        assert_usable(scorer)


def failing_each_forward(forwards, fault, error, call, **options):
    """For each of the `forwards` forwards in turn: a fresh scorer whose call fails there with `error` (the fault
    injected, the forward's shape in the message); yields the scorer after the failed call."""
    for nth in range(1, forwards + 1):
        scorer = prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny", **options)
        _testing.fail_forward(nth, fault)
        try:
            with pytest.raises(error, match=r"injected (?s:.)*in a forward of \d+ rows"):
                call(scorer)
        finally:
            _testing.fail_forward(0, fault)
        yield scorer


# Six prompts after one shared 40-token prefix, which a prefill wave of its own computes first.
PROMPTS = [{"prompt": [5 + i for i in range(40)] + [100 + (q * 7 + i) % 300 for i in range(2 + q)], "max_new_tokens": 6}
           for q in range(6)]


def test_sigint_stops_generation_within_one_step(sigint_raises):
    scorer, reports = scorer_stopped_by(lambda _: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        scorer.generate(PROMPTS)
    assert len(reports) == 2  # no forward ran after the report that sent the signal
    assert scorer.stats["entries_pinned"] == 0
    fresh = prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny").generate(PROMPTS)[0]
    assert [g[0] for g in scorer.generate(PROMPTS)[0]] == [g[0] for g in fresh]


@pytest.mark.parametrize("fault, error", [("out_of_memory", torch.cuda.OutOfMemoryError), ("torch_error", RuntimeError)])
def test_an_error_inside_any_generation_forward_reaches_the_caller_and_the_scorer_stays_usable(fault, error):
    counter = prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny", max_batch_rows=2, min_prefix_len=8)
    want, stats = counter.generate(PROMPTS)
    assert stats["prefix_tokens"] == 40
    forwards = stats["prefill_forwards"] + stats["decode_forwards"] + 1  # and the shared prefix's prefill
    assert forwards > 6
    for scorer in failing_each_forward(forwards, fault, error, lambda s: s.generate(PROMPTS), max_batch_rows=2,
                                       min_prefix_len=8):
        assert scorer.stats["entries_pinned"] == 0 and scorer.stats["entries_held"] == 0
        assert [g[0] for g in scorer.generate(PROMPTS)[0]] == [g[0] for g in want]
