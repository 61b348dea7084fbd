"""lm-evaluation-harness from PyPI end to end: its own evaluator and command line on the local tasks of
tests/data/lm_eval_tasks, with ``--model prefix-scorer`` against lm-eval's own ``--model hf`` on the same tiny
checkpoint (transformers from the local folder): the same metrics, and per-sample loglikelihoods within 1e-4."""

import json
import math
import pathlib
import re
import subprocess
import sys

import pytest

from conftest import DATA, assert_paired, child_env, foreign_checkpoint
from lora_adapters import make_adapter

import lm_eval
import accelerate  # noqa: F401  lm-eval's hf backend needs it

from lm_eval.tasks import TaskManager  # noqa: E402

from prefix_scorer.lm_eval import PrefixScorerLM  # noqa: E402

TASK_DIR = DATA / "lm_eval_tasks"
MODEL = DATA / "models" / "llama3"
TASKS = ["tiny_mmlu", "tiny_hellaswag", "tiny_wikitext", "tiny_edge", "tiny_gsm8k"]
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
# Metrics that are exponentials or ratios of summed logprobs: equal up to the logprobs' own float32 difference.
SUMMED = ("word_perplexity", "byte_perplexity", "bits_per_byte")


@pytest.fixture(scope="module")
def task_manager():
    return TaskManager(include_path=str(TASK_DIR))


@pytest.fixture(autouse=True)
def offline_in_task_dir(monkeypatch):
    # The task files name their local JSON data relative to their own folder.
    monkeypatch.chdir(TASK_DIR)
    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)


def evaluate(task_manager, model, model_args="", **kwargs):
    return lm_eval.simple_evaluate(model=model, model_args=model_args, tasks=TASKS, task_manager=task_manager,
                                   batch_size=1, device="cpu", log_samples=True, **kwargs)


def per_sample(results):
    """{(task, doc_id): [(logprob, is_greedy), logprob or text per request]}."""
    return {(task, s["doc_id"]): s["filtered_resps"] for task, samples in results["samples"].items() for s in samples}


# What lm-eval writes of the model and its tokenizer beside the metrics.
MODEL_INFO = ("model_num_parameters", "model_dtype", "model_revision", "model_sha")
TOKENIZER_INFO = ("tokenizer_pad_token", "tokenizer_eos_token", "tokenizer_bos_token", "eot_token_id", "max_length")


def assert_same_results(ours, theirs):
    for key in MODEL_INFO:
        assert str(ours["config"][key]) == str(theirs["config"][key]), key
    for key in TOKENIZER_INFO:
        assert ours[key] == theirs[key], key
    for task, metrics in theirs["results"].items():
        for key, value in metrics.items():
            if "stderr" in key or not isinstance(value, float):
                continue
            if key.split(",")[0] in SUMMED:
                assert ours["results"][task][key] == pytest.approx(value, rel=1e-4), (task, key)
            else:
                assert ours["results"][task][key] == value, (task, key)
    ours_samples, theirs_samples = per_sample(ours), per_sample(theirs)
    assert ours_samples.keys() == theirs_samples.keys() and theirs_samples
    for key, resps in theirs_samples.items():
        for got, want in assert_paired(ours_samples[key], resps, str(key)):
            if isinstance(want, str):  # generate_until: the text, filtered
                assert got == want, key
            elif isinstance(want, (tuple, list)):  # loglikelihood: (logprob, is_greedy)
                assert got[0] == pytest.approx(want[0], abs=1e-4), key
                assert bool(got[1]) == bool(want[1]), key
            else:  # loglikelihood_rolling: a document's sum, which the hf backend adds up in float32 (an ulp is
                # 2.4e-4 at 2048): within 1e-4 or a few float32 ulps of its size
                assert float(got) == pytest.approx(float(want), abs=1e-4, rel=1e-6), key


@pytest.mark.parametrize("extra", ["", "add_bos_token=True", "max_length=32"])
def test_same_metrics_and_samples_as_lm_eval_hf(task_manager, extra):
    model_args = f"pretrained={MODEL},dtype=float32" + (f",{extra}" if extra else "")
    theirs = evaluate(task_manager, "hf", model_args)
    ours = evaluate(task_manager, "prefix-scorer", model_args)
    assert_same_results(ours, theirs)
    assert {"tiny_mmlu_anatomy", "tiny_mmlu_astronomy", "tiny_mmlu_virology"} <= ours["results"].keys()
    if not extra:  # tiny_edge's last two documents offer the llama3 fixture's greedy continuations (1 and 3 tokens)
        greedy = [r for r in per_sample(theirs)[("tiny_edge", 6)] + per_sample(theirs)[("tiny_edge", 7)] if r[1]]
        assert len(greedy) == 2
    assert len(ours["samples"]["tiny_mmlu_anatomy"]) == 6
    if extra == "max_length=32":  # truncation made the windows differ from the untruncated run's
        assert not math.isclose(ours["results"]["tiny_wikitext"]["bits_per_byte,none"],
                                evaluate(task_manager, "prefix-scorer",
                                         f"pretrained={MODEL},dtype=float32")["results"]["tiny_wikitext"][
                                    "bits_per_byte,none"], rel_tol=1e-3)


@pytest.mark.parametrize("model", [MODEL, DATA / "models" / "gemma3"], ids=["llama3", "gemma3-multimodal"])
def test_peft_adapter_gives_lm_eval_hf_numbers(task_manager, tmp_path, model):
    """peft=ADAPTER: lm-eval's hf backend runs peft's unmerged LoRA layers, prefix-scorer merges them at load. hf
    first resizes the embeddings to the tokenizer's length (the fixture's 512 rows to its 500 tokens), and so does
    prefix-scorer: the log-softmax is over 500 tokens. On a multimodal checkpoint the adapter also adapts the vision
    tower, which text never reaches."""
    adapter = make_adapter(model, tmp_path / "adapter", r=4, lora_alpha=16, target_modules="all-linear")
    model_args = f"pretrained={model},dtype=float32"
    theirs = evaluate(task_manager, "hf", f"{model_args},peft={adapter}")
    ours = evaluate(task_manager, "prefix-scorer", f"{model_args},peft={adapter}")
    assert_same_results(ours, theirs)
    assert ours["config"]["peft_sha"] == theirs["config"]["peft_sha"]
    base = per_sample(evaluate(task_manager, "prefix-scorer", model_args))
    moved = [abs(got[0] - was[0]) for key, resps in per_sample(ours).items() if key[0] == "tiny_mmlu_anatomy"
             for got, was in assert_paired(resps, base[key])]
    assert max(moved) > 1e-2  # the adapter is in the numbers


def test_real_checkpoint_gives_lm_eval_hf_metrics(task_manager, real_checkpoint):
    """Trained weights (SmolLM2-135M-Instruct): the same metrics and samples as hf, generated answers included."""
    model_args = f"pretrained={real_checkpoint},dtype=float32"
    theirs = evaluate(task_manager, "hf", model_args)
    ours = evaluate(task_manager, "prefix-scorer", model_args)
    print()
    for task, metrics in sorted(theirs["results"].items()):
        shown = [key for key in metrics if key.split(",")[0] in ("acc", "acc_norm", "exact_match", "word_perplexity")]
        print(task, "; ".join(f"{key} hf {metrics[key]:.4g} prefix-scorer {ours['results'][task][key]:.4g}"
                              for key in shown))
    assert_same_results(ours, theirs)


def run_command_line(launcher, tmp_path, device="cpu", model_args=f"pretrained={MODEL},dtype=float32", **env):
    """``launcher + [-m prefix_scorer.lm_eval ...]`` on the local tasks; the finished process."""
    return subprocess.run(
        [*launcher, "-m", "prefix_scorer.lm_eval", "--model", "prefix-scorer", "--model_args", model_args,
         "--tasks", ",".join(TASKS), "--include_path", ".", "--device", device, "--batch_size", "4",
         "--output_path", str(tmp_path), "--log_samples"],
        cwd=TASK_DIR, env=child_env(**env), capture_output=True, text=True, timeout=600)


def read_output(tmp_path):
    """The results and samples lm-eval wrote under --output_path, shaped as simple_evaluate returns them."""
    (results_file,) = tmp_path.glob("*/results_*.json")
    results = json.loads(results_file.read_text())
    results["samples"] = {}
    for samples_file in tmp_path.glob("*/samples_*.jsonl"):
        task = samples_file.name[len("samples_"):].rsplit("_", 1)[0]
        samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
        for s in samples:  # the files hold responses as text
            s["filtered_resps"] = [[float(r[0]), r[1] == "True"] if isinstance(r, list)
                                   else r if task.startswith("tiny_gsm8k") else float(r)
                                   for r in s["filtered_resps"]]
        results["samples"][task] = samples
    return results


def test_command_line_matches_lm_eval_hf(task_manager, tmp_path):
    theirs = evaluate(task_manager, "hf", f"pretrained={MODEL},dtype=float32")
    proc = run_command_line([sys.executable], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_same_results(read_output(tmp_path), theirs)


LAUNCHERS = {
    "torchrun": [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"],
    # accelerate's multi-GPU launch (torch.distributed underneath), here on the CPU with no GPU visible
    "accelerate": [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
                   "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"],
}


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_two_ranks_match_one_process(task_manager, tmp_path, launcher):
    single = evaluate(task_manager, "prefix-scorer", f"pretrained={MODEL},dtype=float32")
    proc = run_command_line(LAUNCHERS[launcher], tmp_path, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "rank 0 of 2 on cpu" in proc.stderr and "rank 1 of 2 on cpu" in proc.stderr
    both = read_output(tmp_path)  # written by rank 0, with rank 1's samples gathered into it
    assert_same_results(both, single)
    assert both["n-samples"] == single["n-samples"]


def test_ranks_without_a_gpu_stop_with_their_rank_named(tmp_path):
    proc = run_command_line(LAUNCHERS["torchrun"], tmp_path, device="cuda", CUDA_VISIBLE_DEVICES="")
    assert proc.returncode != 0
    # The first rank to fail names itself; torchrun may stop the other before it says the same.
    assert re.search(r"rank (\d): device=cuda but LOCAL_RANK \1 has no GPU \(0 visible\)", proc.stderr), proc.stderr[-3000:]


def test_each_rank_takes_its_local_gpu_or_the_one_its_launcher_gave_it():
    from prefix_scorer.distributed import rank_device

    assert rank_device("cuda", 3, 3, 8) == "cuda:3"  # one process per GPU of an 8-GPU node
    assert rank_device("cuda", 3, 3, 1) == "cuda:0"  # CUDA_VISIBLE_DEVICES per rank: its one GPU
    with pytest.raises(RuntimeError, match=r"rank 5: device=cuda but LOCAL_RANK 5 has no GPU \(4 visible\)"):
        rank_device("cuda", 5, 5, 4)


def test_a_group_of_another_size_is_refused(monkeypatch):
    import socket

    import torch.distributed as dist

    from prefix_scorer.distributed import DataParallel

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(port))
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        monkeypatch.setenv("WORLD_SIZE", "2")
        monkeypatch.setenv("RANK", "0")
        with pytest.raises(RuntimeError, match="rank 0: the process group has rank 0 of 1, but WORLD_SIZE is 2"):
            DataParallel("cpu")
    finally:
        dist.destroy_process_group()


def test_use_cache_answers_the_second_run_from_the_cache(task_manager, tmp_path):
    cache = str(tmp_path / "requests")
    first_lm = PrefixScorerLM(pretrained=str(MODEL))
    first = evaluate(task_manager, first_lm, use_cache=cache)
    assert first_lm.scorer.stats["requests"] > 0
    again_lm = PrefixScorerLM(pretrained=str(MODEL))
    again = evaluate(task_manager, again_lm, use_cache=cache)
    assert again_lm.scorer.stats["requests"] == 0  # every request answered by the cache
    assert_same_results(again, first)


def generations(results, task):
    """{doc_id: (raw responses, filtered responses)} of a generative task's samples."""
    return {s["doc_id"]: (s["resps"], s["filtered_resps"]) for s in results["samples"][task]}


@pytest.mark.parametrize("model,extra", [("llama3", ""), ("llama3", "max_length=40"), ("qwen3", "")])
def test_generate_until_gives_lm_eval_hf_texts(task_manager, model, extra):
    # max_length=40 left-truncates every prompt to 40 - 24 tokens, as the hf backend does.
    model_args = f"pretrained={DATA / 'models' / model},dtype=float32" + (f",{extra}" if extra else "")
    kwargs = dict(model_args=model_args, tasks=["tiny_gsm8k", "tiny_mmlu"], task_manager=task_manager, batch_size=1,
                  device="cpu", log_samples=True)
    theirs = lm_eval.simple_evaluate(model="hf", **kwargs)
    ours = lm_eval.simple_evaluate(model="prefix-scorer", **kwargs)
    want, got = generations(theirs, "tiny_gsm8k"), generations(ours, "tiny_gsm8k")
    assert got == want and len(want) == 6
    texts = [resps[0][0] for resps, _ in want.values()]
    assert any(t.strip() for t in texts)  # something was generated, not six empty strings
    assert ours["results"]["tiny_gsm8k"] == theirs["results"]["tiny_gsm8k"]
    assert ours["results"]["tiny_mmlu"]["acc,none"] == theirs["results"]["tiny_mmlu"]["acc,none"]  # a mixed run


def test_generate_until_refuses_what_it_cannot_do_by_name():
    lm = PrefixScorerLM(pretrained=str(MODEL))

    class Req:
        def __init__(self, context, gen_kwargs):
            self.args = (context, gen_kwargs)

    with pytest.raises(ValueError, match=r"request 1: .*\['num_beams'\]"):
        lm.generate_until([Req("a", {"until": ["\n"]}), Req("b", {"until": ["\n"], "num_beams": 4})])
    with pytest.raises(ValueError, match="request 0: max_gen_toks 2048 leaves no room"):
        lm.generate_until([Req("a", {"until": ["\n"], "max_gen_toks": 2048})])


def test_generate_until_cuts_at_the_first_stop_string_and_fills_the_cache_hook():
    lm = PrefixScorerLM(pretrained=str(DATA / "models" / "qwen3"))  # its random weights say "mememe... i i i"
    added = []

    class Hook:
        def add_partial(self, kind, key, value):
            added.append((kind, key, value))

    lm.cache_hook = Hook()

    class Req:
        def __init__(self, context, gen_kwargs):
            self.args = (context, gen_kwargs)

    free = lm.generate_until([Req("Once upon a time", {"until": [], "max_gen_toks": 24})])[0]
    stop = " i"
    assert stop in free
    (cut,) = lm.generate_until([Req("Once upon a time", {"until": [stop], "max_gen_toks": 24})])
    assert cut == free.split(stop)[0] and 0 < len(cut) < len(free)
    assert added[-1] == ("generate_until", ("Once upon a time", {"until": [stop], "max_gen_toks": 24}), cut)


# Each task once, each kind of model once: a synthetic shape scores, the real checkpoint generates.
@pytest.mark.parametrize("task,real", [("tiny_mmlu", False), ("tiny_gsm8k", True)])
def test_harness_speed_script_runs_both_backends(tmp_path, task, real, request):
    script = DATA.parents[1] / "benchmarks" / "harness_speed.py"
    report = tmp_path / "speed.json"
    model = (["--pretrained", str(request.getfixturevalue("real_checkpoint"))] if real
             else ["--hidden", "128", "--layers", "2"])
    proc = subprocess.run([sys.executable, str(script), *model, "--tasks", task, "--json", str(report)],
                          env=child_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(report.read_text())
    assert figures["accuracies_equal"] and figures["ratio"] > 0  # speed is the script's to report, not a test's
    assert figures["end_to_end_ratio"] > 0 and re.search(r"end to end \(load and evaluate\): [0-9.]+x", proc.stdout)
    assert figures["hf"]["results"][task] == figures["prefix-scorer"]["results"][task]
    assert re.search(rf"{task} (acc|exact_match)\S*: hf [0-9.]+, prefix-scorer [0-9.]+", proc.stdout)
    if task == "tiny_gsm8k":  # generated answers compared too
        assert "accuracies equal, generated answers equal" in proc.stdout
        assert len(figures["hf"]["answers"][task]) == 6
        assert figures["hf"]["answers"] == figures["prefix-scorer"]["answers"]
    else:
        assert "faster than hf; accuracies equal" in proc.stdout


def test_the_console_script_runs_lm_eval_with_prefix_scorer(tmp_path):
    script = pathlib.Path(sys.executable).parent / "prefix-scorer-lm-eval"
    assert script.is_file(), "pip install . installs prefix-scorer-lm-eval beside the interpreter"
    proc = subprocess.run([str(script), "--model", "prefix-scorer", "--model_args", f"pretrained={MODEL}",
                           "--tasks", "tiny_edge", "--include_path", ".", "--device", "cpu"],
                          cwd=TASK_DIR, env=child_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tiny_edge" in proc.stdout


def documented_commands():
    """Every ``python -m prefix_scorer.lm_eval`` command of README.md and docs/architecture.md, as written."""
    root = DATA.parents[1]
    commands = []
    for doc in (root / "README.md", root / "docs" / "architecture.md"):
        for block in re.findall(r"```sh\n(.*?)```", doc.read_text(), re.S):
            for command in block.replace("\\\n", " ").splitlines():
                if "-m prefix_scorer.lm_eval" in command and not command.lstrip().startswith(("torchrun", "accelerate")):
                    commands.append((doc.name, command.split()))
    return commands


@pytest.mark.parametrize("doc, command", documented_commands(), ids=lambda c: c if isinstance(c, str) else None)
def test_documented_lm_eval_commands_run(doc, command, tmp_path):
    # Run as written, on this machine: the local tasks for hub ones, the fixture for a user's checkpoint, the CPU.
    args = command[command.index("-m") + 1:]
    local = {"mmlu": "tiny_mmlu", "gsm8k": "tiny_gsm8k"}
    for i, arg in enumerate(args):
        if args[i - 1] == "--tasks":
            args[i] = ",".join(local.get(t, t) for t in arg.split(","))
        elif args[i - 1] == "--device":
            args[i] = "cpu"
        elif args[i - 1] == "--output_path":
            args[i] = str(tmp_path)
        elif args[i - 1] == "--model_args":
            args[i] = arg.replace("/path/to/hf-checkpoint", str(MODEL)).replace("bfloat16", "float32")
    if "--include_path" not in args:
        args += ["--include_path", "."]
    args += ["--limit", "2"]
    proc = subprocess.run([sys.executable, "-m", *args], cwd=TASK_DIR, env=child_env(), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, (doc, proc.stderr[-3000:])
    assert "tiny_mmlu" in proc.stdout, proc.stdout[-2000:]


# Chat templates: one in the Llama-3 style that takes a system turn, and one that rejects it (the hf backend then
# renders the chat without it).
TEMPLATES = {
    "with_system": "{% for m in messages %}<|begin_of_text|>{{ m['role'] }}\n\n{{ m['content'] }}<|end_of_text|>"
                   "{% endfor %}{% if add_generation_prompt %}<|begin_of_text|>assistant\n\n{% endif %}",
    "without_system": "{% if messages[0]['role'] == 'system' %}{{ raise_exception('no system role') }}{% endif %}"
                      "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
                      "{% if add_generation_prompt %}[assistant]{% endif %}",
}


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_chat_templates_give_lm_eval_hf_requests_and_metrics(task_manager, tmp_path, template):
    import shutil

    model = tmp_path / "chat"
    shutil.copytree(MODEL, model)
    config = json.loads((model / "tokenizer_config.json").read_text())
    (model / "tokenizer_config.json").write_text(json.dumps({**config, "chat_template": TEMPLATES[template]}))
    kwargs = dict(model_args=f"pretrained={model},dtype=float32", tasks=["tiny_mmlu", "tiny_gsm8k"],
                  task_manager=task_manager, batch_size=1, device="cpu", log_samples=True, apply_chat_template=True,
                  fewshot_as_multiturn=True, system_instruction="Answer with one letter.")
    theirs = lm_eval.simple_evaluate(model="hf", **kwargs)
    ours = lm_eval.simple_evaluate(model="prefix-scorer", **kwargs)
    assert_same_results(ours, theirs)
    prompts = [s["arguments"][0][0] for s in ours["samples"]["tiny_gsm8k"]]
    assert prompts == [s["arguments"][0][0] for s in theirs["samples"]["tiny_gsm8k"]] and len(prompts) == 6
    assert all(("[assistant]" if template == "without_system" else "assistant\n\n") in p for p in prompts)
    assert all(("Answer with one letter." in p) == (template == "with_system") for p in prompts)


def test_a_model_type_without_a_native_engine_is_served_by_lm_eval_hf(task_manager, tmp_path):
    """OPT, which transformers runs and prefix-scorer does not: lm-eval's own hf backend serves it under
    ``--model prefix-scorer`` with one warning naming the type, the same numbers as ``--model hf``, and the results
    saying which engine served; ``native_only=True`` refuses it by name instead."""
    foreign_checkpoint(tmp_path / "opt")
    kwargs = dict(model_args=f"pretrained={tmp_path / 'opt'},dtype=float32", tasks=["tiny_mmlu"],
                  task_manager=task_manager, batch_size=1, device="cpu", log_samples=True)
    theirs = lm_eval.simple_evaluate(model="hf", **kwargs)
    with pytest.warns(UserWarning, match="model_type 'opt' natively"):
        ours = lm_eval.simple_evaluate(model="prefix-scorer", **kwargs)
    assert ours["config"]["engine"] == "transformers"
    assert_same_results(ours, theirs)
    with pytest.raises(ValueError, match="'opt' is not one prefix-scorer runs natively"):
        PrefixScorerLM(pretrained=str(tmp_path / "opt"), native_only="True")
    assert PrefixScorerLM(pretrained=str(MODEL)).get_model_info()["engine"] == "prefix-scorer"
