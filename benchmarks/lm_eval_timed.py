"""lm-eval's own command line, with the seconds each kind of request takes.

    PYTHON benchmarks/lm_eval_timed.py --timings OUT.json -- --model vllm --model_args ... --tasks ...

Runs ``lm_eval``'s command line with the arguments after ``--`` in this Python (any venv with lm_eval; for
``--model prefix-scorer`` the project's, which registers it), and times every call lm-eval makes to the model's
``loglikelihood``, ``loglikelihood_rolling`` and ``generate_until``: the model's work, without loading it (vLLM's
start-up and compilation take longer than these small tasks). Writes {request kind: seconds, "total_s": seconds,
"other_s": the rest (loading, lm-eval's own work)} to OUT.json and prints it. benchmarks/peer_speed.py runs it once per backend.
"""

import functools
import json
import sys
import time

KINDS = ("loglikelihood", "loglikelihood_rolling", "generate_until")


def main():
    args = sys.argv[1:]
    if "--timings" not in args or "--" not in args:
        raise SystemExit(__doc__)
    out = args[args.index("--timings") + 1]
    lm_eval_args = args[args.index("--") + 1:]
    start = time.perf_counter()
    model = lm_eval_args[lm_eval_args.index("--model") + 1]
    if model == "prefix-scorer":
        import prefix_scorer.lm_eval  # noqa: F401  registers the backend
    import lm_eval.models  # noqa: F401
    from lm_eval.__main__ import cli_evaluate
    from lm_eval.api.registry import get_model

    timings = {kind: 0.0 for kind in KINDS}
    cls = get_model(model)
    for kind in KINDS:
        method = getattr(cls, kind)

        @functools.wraps(method)
        def timed(self, *a, _method=method, _kind=kind, **kw):
            begin = time.perf_counter()
            try:
                return _method(self, *a, **kw)
            finally:
                timings[_kind] += time.perf_counter() - begin

        setattr(cls, kind, timed)
    sys.argv = ["lm_eval", *lm_eval_args]
    try:
        cli_evaluate()
    finally:
        timings["total_s"] = time.perf_counter() - start
        timings["other_s"] = timings["total_s"] - sum(timings[k] for k in KINDS)
        with open(out, "w") as f:
            json.dump(timings, f, indent=1)
        print(json.dumps(timings), file=sys.stderr)


if __name__ == "__main__":
    main()
