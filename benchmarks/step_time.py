"""A decode step's time at a number of rows, for prefix-scorer and for vLLM, on the same prompts.

    .venv/bin/python benchmarks/step_time.py --pretrained DIR --backend prefix-scorer [--profile]
    .venv-vllm/bin/python benchmarks/step_time.py --pretrained DIR --backend vllm [--profile]

For each row count (--rows) and prompt shape (short: a 64-token prefix shared by every row; long: a 1,024-token one;
each row then 24 tokens of its own, random ids from --seed), generates --steps + 1 tokens greedily without a stop
and 1 token, and reports (T(steps + 1) - T(1)) / steps: the decode step alone, prefill and start-up taken out. Drafts
cannot help random prompts, so prefix-scorer runs with max_draft_tokens 0 (one token a row a step, as vLLM). With
--profile, torch's profiler splits the longer run's time into matmuls, attention, sampling (log-softmax, argmax)
and the rest (vLLM in-process for that: VLLM_ENABLE_V1_MULTIPROCESSING=0). Prints one line per shape and writes
--json. For vLLM, set the environment benchmarks/peer_speed.py sets (vllm_environment).
"""

import argparse
import json
import os
import random
import sys
import time

CATEGORIES = (  # the first whose keys appear in an op's name (lower case) takes its time
    ("matmul", ("mm", "linear", "matmul", "gemm", "dnnl", "onednn")),
    ("attention", ("attention", "attn", "flash", "sdpa", "paged")),
    ("sampling", ("softmax", "argmax", "sample", "topk", "top_k", "max")),
)


def prompts_of(rows, prefix_len, own_len, vocab, seed):
    rng = random.Random(seed)
    prefix = [rng.randrange(1, vocab) for _ in range(prefix_len)]
    return [prefix + [rng.randrange(1, vocab) for _ in range(own_len)] for _ in range(rows)]


class PrefixScorerBackend:
    def __init__(self, path, dtype):
        import torch

        import prefix_scorer

        torch.set_num_threads(os.cpu_count() or 1)
        self.scorer = prefix_scorer.PrefixScorer.from_pretrained(path, device="cpu", dtype=dtype, max_draft_tokens=0,
                                                                 max_batch_rows=1024)

    def generate(self, prompts, tokens):
        outputs, _ = self.scorer.generate([{"prompt": p, "max_new_tokens": tokens} for p in prompts])
        return [o[0] for o in outputs]


class VllmBackend:
    def __init__(self, path, dtype):
        from vllm import LLM, SamplingParams

        self.params = SamplingParams
        self.llm = LLM(model=path, dtype=dtype, enable_prefix_caching=True, max_model_len=2048, max_num_seqs=256,
                       seed=0)

    def generate(self, prompts, tokens):
        params = self.params(max_tokens=tokens, temperature=0.0, ignore_eos=True)
        outs = self.llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
        return [list(o.outputs[0].token_ids) for o in outs]


def timed(run):
    start = time.perf_counter()
    out = run()
    return time.perf_counter() - start, out


def profiled(run):
    """Seconds of each category of the top-level ops `run` calls, and the wall time."""
    import torch

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        seconds, _ = timed(run)
    split = {name: 0.0 for name, _ in CATEGORIES}
    for event in prof.events():
        if event.cpu_parent is not None or event.name.startswith(("ProfilerStep", "[")):
            continue
        name = event.name.lower()
        category = next((c for c, keys in CATEGORIES if any(k in name for k in keys)), None)
        if category:
            split[category] += event.cpu_time_total / 1e6
    split["other"] = seconds - sum(split.values())
    return seconds, split


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pretrained", required=True)
    parser.add_argument("--backend", choices=("prefix-scorer", "vllm"), required=True)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--rows", default="1,4,16,24,64")
    parser.add_argument("--shapes", default="short,long")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    config = json.load(open(os.path.join(args.pretrained, "config.json")))
    backend = (PrefixScorerBackend if args.backend == "prefix-scorer" else VllmBackend)(args.pretrained, args.dtype)
    prefix_lens = {"short": 64, "long": 1024}
    backend.generate(prompts_of(2, 16, 4, config["vocab_size"], args.seed + 1), 4)  # warm-up
    report = []
    for shape in args.shapes.split(","):
        for rows in map(int, args.rows.split(",")):
            prompts = prompts_of(rows, prefix_lens[shape], 24, config["vocab_size"], args.seed)
            one, _ = timed(lambda: backend.generate(prompts, 1))
            many, out = timed(lambda: backend.generate(prompts, args.steps + 1))
            line = {"shape": shape, "rows": rows, "step_ms": 1e3 * (many - one) / args.steps, "first_token_s": one,
                    "tokens": out}
            text = f"{args.backend:>13} {shape:>5} prompts, {rows:>3} rows: {line['step_ms']:7.1f} ms a decode step"
            if args.profile:
                seconds, split = profiled(lambda: backend.generate(prompts, args.steps + 1))
                line["profile"] = {k: v / seconds for k, v in split.items()}
                text += " | " + ", ".join(f"{k} {100 * v / seconds:4.1f}%" for k, v in split.items())
            print(text, flush=True)
            report.append(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
