"""lm-evaluation-harness's own wall time with ``--model hf`` and with ``--model prefix-scorer`` on one checkpoint.

    .venv/bin/python benchmarks/harness_speed.py                       # a random-weight Llama, CPU, fp32
    .venv/bin/python benchmarks/harness_speed.py --pretrained DIR --device cuda --dtype bfloat16

Runs a local MMLU-style task (tests/data/lm_eval_tasks, 5-shot; ``--tasks`` picks others there, such as the
generative 8-shot ``gsm8k_8shot``, whose generated answers must then be equal too) through
``lm_eval.simple_evaluate`` once per backend in this process, after loading each model, and prints the load and
evaluation times, the ratio of the evaluation times and of load and evaluation together, and whether the metrics
agree. Without ``--pretrained`` it saves a random-weight Llama checkpoint (``--hidden`` wide, ``--layers`` deep,
the fixtures' tokenizer) to a temporary folder first. Nothing is downloaded.
"""

import argparse
import contextlib
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TASKS = ROOT / "tests" / "data" / "lm_eval_tasks"
TOKENIZER = ROOT / "tests" / "data" / "tokenizer"


def make_checkpoint(folder, hidden, layers):
    """A random-weight LlamaForCausalLM of the given size over the fixtures' 500-token tokenizer."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=512, hidden_size=hidden, intermediate_size=3 * hidden,
                                      num_hidden_layers=layers, num_attention_heads=hidden // 64,
                                      num_key_value_heads=max(1, hidden // 256), max_position_embeddings=4096,
                                      bos_token_id=0, eos_token_id=1, tie_word_embeddings=True)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(TOKENIZER / name, pathlib.Path(folder) / name)


def evaluate(lm, tasks, task_manager):
    import lm_eval

    start = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):
        results = lm_eval.simple_evaluate(model=lm, tasks=tasks, task_manager=task_manager, log_samples=True)
    seconds = time.perf_counter() - start
    # Generated answers by task and document (loglikelihood responses are compared through the accuracies).
    answers = {task: {s["doc_id"]: s["resps"] for s in samples}
               for task, samples in results["samples"].items()
               if samples and isinstance(samples[0]["resps"][0][0], str)}
    return seconds, results["results"], answers


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pretrained", help="a Hugging Face checkpoint folder (default: a random-weight Llama)")
    parser.add_argument("--hidden", type=int, default=512, help="width of the random-weight model")
    parser.add_argument("--layers", type=int, default=6, help="depth of the random-weight model")
    parser.add_argument("--tasks", default="tiny_mmlu", help="comma-separated tasks of tests/data/lm_eval_tasks")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--batch-size", type=int, default=8, help="lm-eval's batch_size, for both backends")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    for key in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(key, "1")

    import torch
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from prefix_scorer.lm_eval import PrefixScorerLM

    if args.device == "cpu":
        torch.set_num_threads(os.cpu_count() or 1)
    with tempfile.TemporaryDirectory() as scratch:
        pretrained = args.pretrained or os.path.join(scratch, "model")
        if not args.pretrained:
            make_checkpoint(pretrained, args.hidden, args.layers)
        os.chdir(TASKS)  # the tasks name their data relative to their folder
        task_manager = TaskManager(include_path=str(TASKS))
        tasks = args.tasks.split(",")
        figures = {}
        backends = {
            "hf": lambda: HFLM(pretrained=pretrained, device=args.device, dtype=args.dtype, batch_size=args.batch_size),
            "prefix-scorer": lambda: PrefixScorerLM(pretrained=pretrained, device=args.device, dtype=args.dtype,
                                                    batch_size=args.batch_size),
        }
        for name, make in backends.items():
            start = time.perf_counter()
            lm = make()
            load = time.perf_counter() - start
            seconds, results, answers = evaluate(lm, tasks, task_manager)
            figures[name] = {"load_s": load, "evaluate_s": seconds, "results": results, "answers": answers}
            del lm
    hf, ours = figures["hf"], figures["prefix-scorer"]
    ratio = hf["evaluate_s"] / ours["evaluate_s"]
    same = all(ours["results"][task].get(key) == value for task, metrics in hf["results"].items()
               for key, value in metrics.items() if key.startswith(("acc", "exact_match")))
    same = same and ours["answers"] == hf["answers"]
    print(f"model {args.pretrained or f'random Llama, hidden {args.hidden}, {args.layers} layers'} | "
          f"{args.device} {args.dtype} | tasks {args.tasks} | batch_size {args.batch_size}")
    for name, f in figures.items():
        print(f"  {name:>13}: load {f['load_s']:6.2f} s, evaluate {f['evaluate_s']:7.2f} s")
    for task, metrics in sorted(hf["results"].items()):
        for key, value in metrics.items():
            if key.startswith(("acc", "exact_match")) and "stderr" not in key:
                print(f"  {task} {key}: hf {value:.4f}, prefix-scorer {ours['results'][task].get(key, float('nan')):.4f}")
    answers = f", generated answers {'equal' if ours['answers'] == hf['answers'] else 'DIFFER'}" if hf["answers"] else ""
    print(f"  prefix-scorer evaluates {ratio:.2f}x faster than hf; accuracies {'equal' if same else 'DIFFER'}{answers}")
    end_to_end = (hf["load_s"] + hf["evaluate_s"]) / (ours["load_s"] + ours["evaluate_s"])
    print(f"  end to end (load and evaluate): {end_to_end:.2f}x")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"ratio": ratio, "end_to_end_ratio": end_to_end,
                                                       "accuracies_equal": same, **figures},
                                                      indent=1, default=str))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
