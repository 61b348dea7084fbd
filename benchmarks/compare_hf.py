#!/usr/bin/env python3
"""The same workload through Hugging Face transformers and prefix_scorer, in one process, on one device.

Three timings on the requests prefix-scorer-bench generates (same seed, same shapes), with the same random
weights (a transformers model saved as safetensors and loaded by prefix_scorer):

- hf-lmeval: one full forward per distinct context + continuation[:-1], log-probs of every position (what
  lm-evaluation-harness's HF backend runs); best of --lmeval-batches.
- hf-prefix: each shared prefix prefilled once, its KV cache repeated for a batch of suffixes, log-probs of the
  scored rows only; best of --prefix-batches. The shared prefix is a request's first --prefix-len tokens
  (mmlu-shape) or its context less the last token (hellaswag-shape).
- prefix-scorer: PrefixScorer.loglikelihood.

Needs torch, transformers and prefix_scorer installed (pip install --no-build-isolation .):

    python3 benchmarks/compare_hf.py --bench prefix-scorer-bench --shape llama-1b --workload mmlu-shape \\
        --device cuda --dtype bfloat16
"""

import argparse
import copy
import json
import os
import subprocess
import tempfile
import time
from collections import OrderedDict

import torch  # before prefix_scorer, so that both use torch's libraries
import transformers

import prefix_scorer


def timed(device, fn):
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start, result


def rows_of(requests):
    """Distinct inputs (context + continuation[:-1]) and, per input, the requests that read it."""
    rows = OrderedDict()
    for i, r in enumerate(requests):
        rows.setdefault(tuple(r["context"] + r["continuation"][:-1]), []).append(i)
    return rows


def score_rows(logprobs, row_len, requests, ids, out):
    """Fills out[i] for the requests `ids` reading a row of `row_len` tokens whose log-probs are `logprobs`."""
    for i in ids:
        cont = requests[i]["continuation"]
        lp = logprobs[row_len - len(cont):row_len]
        target = torch.tensor(cont, device=lp.device)
        out[i] = (lp.gather(1, target[:, None]).sum().item(), bool((lp.argmax(-1) == target).all()))


@torch.inference_mode()
def hf_lmeval(model, requests, batch, device):
    rows = sorted(rows_of(requests).items(), key=lambda kv: -len(kv[0]))
    out = [None] * len(requests)
    for start in range(0, len(rows), batch):
        chunk = rows[start:start + batch]
        width = len(chunk[0][0])
        ids = torch.zeros(len(chunk), width, dtype=torch.long)
        mask = torch.zeros(len(chunk), width, dtype=torch.long)
        for j, (row, _) in enumerate(chunk):
            ids[j, :len(row)] = torch.tensor(row)
            mask[j, :len(row)] = 1
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
        logprobs = torch.log_softmax(logits.float(), -1)
        for j, (row, readers) in enumerate(chunk):
            score_rows(logprobs[j], len(row), requests, readers, out)
    return out


@torch.inference_mode()
def hf_prefix(model, requests, batch, device, prefix_len):
    by_prefix = OrderedDict()
    for row, readers in rows_of(requests).items():
        cut = prefix_len if prefix_len > 0 else len(requests[readers[0]]["context"]) - 1
        by_prefix.setdefault(row[:cut], []).append((row, readers))
    out = [None] * len(requests)
    for prefix, rows in by_prefix.items():
        p = len(prefix)
        cache = model(input_ids=torch.tensor([prefix], device=device), use_cache=True).past_key_values
        rows.sort(key=lambda kv: -len(kv[0]))
        for start in range(0, len(rows), batch):
            chunk = rows[start:start + batch]
            width = len(chunk[0][0]) - p
            ids = torch.zeros(len(chunk), width, dtype=torch.long)
            mask = torch.ones(len(chunk), p + width, dtype=torch.long)
            for j, (row, _) in enumerate(chunk):
                ids[j, :len(row) - p] = torch.tensor(row[p:])
                mask[j, len(row):] = 0
            rows_cache = copy.deepcopy(cache)
            rows_cache.batch_repeat_interleave(len(chunk))
            positions = torch.arange(p, p + width, device=device).expand(len(chunk), width)
            hidden = model.model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions,
                                 past_key_values=rows_cache).last_hidden_state
            for j, (row, readers) in enumerate(chunk):
                n = max(len(requests[i]["continuation"]) for i in readers)
                last = hidden[j, len(row) - p - n:len(row) - p]
                logprobs = torch.log_softmax(model.lm_head(last).float(), -1)
                score_rows(logprobs, n, requests, readers, out)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="the prefix-scorer-bench binary")
    parser.add_argument("--shape", default="llama-1b")
    parser.add_argument("--workload", default="mmlu-shape", choices=["mmlu-shape", "hellaswag-shape"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--prefix-len", type=int, default=600, help="mmlu-shape's shared prefix length")
    parser.add_argument("--lmeval-batches", default="16,32,64")
    parser.add_argument("--prefix-batches", default="32,128,256")
    parser.add_argument("--questions", type=int, help="questions per subject (the workload's own number if not given)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)

    with tempfile.TemporaryDirectory() as tmp:
        req_path, cfg_path = os.path.join(tmp, "requests.jsonl"), os.path.join(tmp, "config.json")
        questions = ["--questions", str(args.questions)] if args.questions else []
        subprocess.run([args.bench, "--model", f"synthetic:{args.shape}", "--workload", args.workload, *questions,
                        "--seed", str(args.seed), "--dump-requests", req_path, "--dump-config", cfg_path,
                        "--device", args.device, "--dtype", args.dtype], check=True)
        requests = [json.loads(line) for line in open(req_path)]
        config = transformers.AutoConfig.from_pretrained(tmp)
        torch.manual_seed(args.seed)
        with torch.device(args.device):  # random weights drawn where they run, not on the host
            model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=dtype,
                                                                  attn_implementation="sdpa").eval()
        model.save_pretrained(os.path.join(tmp, "model"))
        scorer = prefix_scorer.PrefixScorer.from_pretrained(os.path.join(tmp, "model"), device=args.device,
                                                            dtype=args.dtype)

    pairs = [(r["context"], r["continuation"]) for r in requests]
    prefix_len = args.prefix_len if args.workload == "mmlu-shape" else 0
    timed(args.device, lambda: scorer.loglikelihood(pairs))  # warm-up
    results = {"prefix-scorer": timed(args.device, lambda: scorer.loglikelihood(pairs))}
    results["hf-lmeval"] = min((timed(args.device, lambda b=b: hf_lmeval(model, requests, b, args.device))
                                for b in map(int, args.lmeval_batches.split(","))), key=lambda r: r[0])
    results["hf-prefix"] = min((timed(args.device, lambda b=b: hf_prefix(model, requests, b, args.device, prefix_len))
                                for b in map(int, args.prefix_batches.split(","))), key=lambda r: r[0])

    ours = results["prefix-scorer"]
    report = {"shape": args.shape, "workload": args.workload, "device": args.device, "dtype": args.dtype,
              "requests": len(requests), "modes": {}}
    for name, (seconds, scores) in results.items():
        diff = max(abs(a[0] - b[0]) for a, b in zip(scores, ours[1]))
        agree = sum(a[1] == b[1] for a, b in zip(scores, ours[1])) / len(scores)
        report["modes"][name] = {"seconds": seconds, "ratio_to_prefix_scorer": seconds / ours[0],
                                 "max_abs_logprob_diff": diff, "is_greedy_agreement": agree}
        print(f"{name:>14} {seconds:8.3f} s  {seconds / ours[0]:6.2f}x  max|diff| {diff:.3e}  greedy {agree:.1%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
