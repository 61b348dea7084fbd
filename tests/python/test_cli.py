"""prefix-scorer-bench's file mode against the golden fixtures, and its handling of bad input."""

import json
import re
import subprocess
import sys

import pytest

from conftest import DATA, FIXTURE_MODELS, ROOT, assert_paired


def run(bench, *args):
    return subprocess.run([str(bench), *map(str, args)], capture_output=True, text=True, timeout=300)


def modes_of(report, requests=None):
    """The report's modes by name, once it is known to hold all three, each with a score per request and exact."""
    modes = {m["mode"]: m for m in report["modes"]}
    assert set(modes) == {"naive", "grouped", "prefix"}
    count = modes["naive"]["stats"]["requests"]
    assert count > 0 and (requests is None or count == requests)
    for m in modes.values():
        assert m["scores"] == count, m["mode"]
        assert m["max_abs_logprob_diff_to_naive"] < 1e-4, m["mode"]
        assert m["is_greedy_agreement"] == 1.0, m["mode"]
    return modes


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.mark.parametrize("mode", ["prefix", "naive", "grouped"])
@pytest.mark.parametrize("model", FIXTURE_MODELS)
def test_file_mode_matches_golden_loglikelihoods(bench, tmp_path, model, mode):
    expected = json.loads((DATA / "models" / model / "expected_loglikelihood.json").read_text())["loglikelihood"]
    requests, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_jsonl(requests, [{"context": r["context_ids"], "continuation": r["continuation_ids"]} for r in expected])

    proc = run(bench, "--model", DATA / "models" / model, "--requests", requests, "--output", output, "--mode", mode,
               "--min-prefix-len", 4)
    assert proc.returncode == 0, proc.stderr
    assert "requests/s" in proc.stderr
    scores = [json.loads(line) for line in output.read_text().splitlines()]
    for i, (got, want) in enumerate(assert_paired(scores, expected)):
        assert got["logprob"] == pytest.approx(want["logprob"], abs=1e-4), i
        assert got["is_greedy"] is want["is_greedy"], i


@pytest.mark.parametrize("model", FIXTURE_MODELS)
def test_text_requests_match_golden_loglikelihoods(bench, tmp_path, model):
    expected = json.loads((DATA / "models" / model / "expected_loglikelihood.json").read_text())["loglikelihood"]
    requests, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_jsonl(requests, [{"context": r["context"], "continuation": r["continuation"]} for r in expected])

    # The fixtures were made with lm-eval's add_bos_token off.
    proc = run(bench, "--model", DATA / "models" / model, "--requests", requests, "--output", output,
               "--add-bos-token", "false")
    assert proc.returncode == 0, proc.stderr
    scores = [json.loads(line) for line in output.read_text().splitlines()]
    for i, (got, want) in enumerate(assert_paired(scores, expected)):
        assert got["logprob"] == pytest.approx(want["logprob"], abs=1e-4), i
        assert got["is_greedy"] is want["is_greedy"], i

    # auto: this tokenizer's template adds a BOS, so every context gains one and the numbers move.
    proc = run(bench, "--model", DATA / "models" / model, "--requests", requests, "--output", output)
    assert proc.returncode == 0, proc.stderr
    with_bos = [json.loads(line)["logprob"] for line in output.read_text().splitlines()]
    assert any(abs(a - b["logprob"]) > 1e-3 for a, b in assert_paired(with_bos, expected))


def test_text_requests_need_a_tokenizer(bench, tmp_path):
    requests = tmp_path / "in.jsonl"
    write_jsonl(requests, [{"context": "a", "continuation": "b"}])
    proc = run(bench, "--model", "synthetic:tiny", "--requests", requests)
    assert proc.returncode != 0
    assert "need a tokenizer" in proc.stderr


def test_tokenize_reports_throughput(bench, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("The quick brown fox jumps over the lazy dog. " * 2000)
    proc = run(bench, "--tokenizer", DATA / "tokenizer" / "tokenizer.json", "--tokenize", text)
    assert proc.returncode == 0, proc.stderr
    assert "MB/s" in proc.stderr


def test_builtin_workload_on_synthetic_model(bench):
    proc = run(bench, "--model", "synthetic:tiny", "--subjects", 1, "--questions", 3, "--prefix-len", 20,
               "--context-min", 4, "--context-max", 8)
    assert proc.returncode == 0, proc.stderr
    assert "mmlu-shape: 12 requests" in proc.stderr
    assert "prefix" in proc.stderr


@pytest.mark.parametrize("model", ["synthetic:tiny", "synthetic:tiny-gemma2", "synthetic:tiny-moe"])
def test_generation_workload_gives_the_same_tokens_both_ways(bench, tmp_path, model):
    report = tmp_path / "gen.json"
    count_ops = model == "synthetic:tiny"  # counted only when asked (a run of its own)
    proc = run(bench, "--model", model, "--workload", "gsm8k-shape", "--mode", "all", "--questions", 6,
               "--prefix-len", 48, "--max-new-tokens", 12, "--max-batch-rows", 4, "--json", report,
               "--count-ops", str(count_ops).lower())
    assert proc.returncode == 0, proc.stderr
    naive, prefix = json.loads(report.read_text())
    assert (naive["mode"], prefix["mode"]) == ("naive", "prefix")
    assert prefix["same_tokens_as_naive"] == 1.0
    assert naive["generated_tokens"] == prefix["generated_tokens"] > 6
    # The prefix is prefilled once, not once per prompt; finished rows stop stepping.
    assert naive["prefill_tokens"] - prefix["prefill_tokens"] == 5 * 48
    assert prefix["decode_tokens"] < naive["decode_tokens"]
    assert "over naive, same tokens as naive for 6/6 requests" in proc.stderr
    if count_ops:
        assert 20 < prefix["ops_per_decode_step_per_layer"] < 400  # counted (torch's op hooks reach the engine's ops)
        assert "top-level aten ops per decode step and layer" in proc.stderr
    else:
        assert "ops_per_decode_step_per_layer" not in prefix and "aten ops" not in proc.stderr
    # Greedy rows draft (prompt lookup): each step gives every running row its token and the draft tokens taken.
    assert 0 <= prefix["accepted_draft_tokens"] <= prefix["draft_tokens"]
    assert 0 < prefix["decode_steps"] <= prefix["generated_tokens"] - 6 - prefix["accepted_draft_tokens"]
    assert f"{prefix['decode_steps']} decode steps, {prefix['draft_tokens']} draft tokens fed" in proc.stderr


def test_reasoning_workload_generates_every_token_without_copying_cached_keys(bench, tmp_path):
    # Every prompt runs to max_new_tokens (no early stop); the rows join at once and attend to the prefix by cascade,
    # so nothing cached is copied.
    report = tmp_path / "gen.json"
    proc = run(bench, "--model", "synthetic:tiny", "--workload", "reasoning-shape", "--mode", "all", "--questions", 5,
               "--prefix-len", 40, "--max-new-tokens", 24, "--max-draft-tokens", 0, "--cascade-min-prefix-len", 0,
               "--json", report)
    assert proc.returncode == 0, proc.stderr
    naive, prefix = json.loads(report.read_text())
    assert prefix["same_tokens_as_naive"] == 1.0
    assert naive["generated_tokens"] == prefix["generated_tokens"] == 5 * 24
    assert prefix["kv_bytes_copied"] == 0 and prefix["peak_rss_mib"] > 0
    assert "0.0 MiB of cached keys and values copied" in proc.stderr


def test_generation_text_workload_is_encoded_and_gives_the_same_tokens_both_ways(bench, tmp_path):
    report = tmp_path / "gen.json"
    proc = run(bench, "--model", "synthetic:tiny", "--workload", "gsm8k-text", "--mode", "all", "--questions", 6,
               "--shots", 3, "--max-new-tokens", 10, "--json", report)
    assert proc.returncode == 0, proc.stderr
    naive, prefix = json.loads(report.read_text())
    assert prefix["same_tokens_as_naive"] == 1.0 and prefix["generated_tokens"] > 6
    assert prefix["prefill_tokens"] < naive["prefill_tokens"] / 2  # the three worked problems, once
    assert "gsm8k-text: 6 prompts" in proc.stderr


# Cascade is asked for every cached prefix (--cascade-min-prefix-len 0). The gemma shapes' windows of 32 tokens cut
# into the 64-token few-shot prefix of arc25: the prefix mode gathers where cascade would not be exact, and counts
# the fallback. tiny-moe routes every token of every mode through its experts, and takes cascade. tiny-phi3's
# requests (56 to 97 tokens) lie on both sides of its longrope line (64); its contexts run as packed trees.
ARC = ["--workload", "arc25-shape", "--questions", 3, "--prefix-len", 64, "--cascade-min-prefix-len", 0]
FAMILY_WORKLOADS = {"tiny-gemma2": ARC, "tiny-gemma3": ARC, "tiny-moe": ARC,
                    "tiny-phi3": ["--workload", "hellaswag-shape", "--questions", 6, "--context-min", 40,
                                  "--context-max", 60]}


@pytest.mark.parametrize("model", sorted(FAMILY_WORKLOADS))
def test_all_modes_agree_on_the_family_shapes(bench, tmp_path, model):
    report_path = tmp_path / "report.json"
    proc = run(bench, "--model", f"synthetic:{model}", "--mode", "all", *FAMILY_WORKLOADS[model], "--json", report_path)
    assert proc.returncode == 0, proc.stderr
    prefix = modes_of(json.loads(report_path.read_text()))["prefix"]["stats"]
    if model.startswith("tiny-gemma"):
        assert prefix["cascade_forwards"] == 0 and prefix["cascade_fallbacks"] > 0
    elif model == "tiny-moe":
        assert prefix["cascade_forwards"] > 0 and prefix["cascade_fallbacks"] == 0
    else:
        assert prefix["trees_packed"] > 0


@pytest.mark.parametrize("workload", ["mmlu-shape", "hellaswag-shape", "arc25-shape", "hellaswag10-shape"])
def test_all_modes_report_agreement_and_speedups(bench, tmp_path, workload):
    sizes = {"mmlu-shape": ["--subjects", 2, "--questions", 4, "--prefix-len", 64, "--context-min", 5, "--context-max", 20],
             "hellaswag-shape": ["--questions", 6, "--context-min", 40, "--context-max", 60],
             "arc25-shape": ["--questions", 3, "--prefix-len", 80],
             "hellaswag10-shape": ["--questions", 3, "--prefix-len", 50]}[workload]
    report_path = tmp_path / "report.json"
    count_ops = workload != "hellaswag-shape"  # counted only when asked (a run of its own)
    proc = run(bench, "--model", "synthetic:tiny", "--mode", "all", "--workload", workload, "--json", report_path,
               "--seed", 3, *sizes, "--count-ops", str(count_ops).lower())
    assert proc.returncode == 0, proc.stderr
    report = json.loads(report_path.read_text())
    modes = modes_of(report)
    assert modes["grouped"]["speedup_over_grouped"] == pytest.approx(1.0)
    prefix = modes["prefix"]["stats"]
    # A prefix that only its own few rows continue runs as a packed tree (the small subjects here, the question
    # contexts); one shared by other shared prefixes (the few-shot prompt of arc25 / hellaswag10) is cached.
    cached, trees = {"mmlu-shape": (0, 2), "hellaswag-shape": (0, 6), "arc25-shape": (1, 3),
                     "hellaswag10-shape": (1, 3)}[workload]
    assert (prefix["prefixes_prefilled"], prefix["trees_packed"]) == (cached, trees)
    assert prefix["prefill_padding"] + prefix["suffix_padding"] == prefix["padding_tokens"]
    assert prefix["entries_held"] == 0
    assert modes["prefix"]["tokens_computed"] < modes["grouped"]["tokens_computed"]
    assert "speedup" in proc.stderr
    # The floor is the token trie of the distinct inputs: exactly what the prefix mode computes when every shared
    # prefix is cached (min_prefix_len permitting, as here).
    assert report["floor"]["unique_tokens"] <= modes["prefix"]["tokens_computed"]
    assert report["floor"]["scored_positions"] > 0
    floor = report["floor"]
    assert floor["weight_flops"] > 0 and floor["attention_flops"] > 0
    assert floor["flops"] == pytest.approx(floor["weight_flops"] + floor["attention_flops"])
    assert report["peak_rss_mib"] > 0
    assert report["matmul_flops_per_s"] > 0
    assert all(m["mfu"] > 0 for m in modes.values())  # speed itself is the benchmark's to measure, not a test's
    # The prefix call's ops, counted again on a fresh scorer: its forwards as the mode's, ops by name summing up.
    if not count_ops:
        assert "prefix_ops" not in report
        return
    ops = report["prefix_ops"]
    assert ops["forwards"] == prefix["forwards"]
    assert ops["top_level_ops"] == sum(ops["by_name"].values())
    assert ops["cat"] == ops["by_name"].get("aten::cat", 0)
    assert 5 < ops["ops_per_forward_per_layer"] < 1000
    assert report["cache"]["kv_bytes_per_token"] == report["cache"]["expanded_kv_bytes_per_token"]  # no latents


def test_latent_attention_cache_bytes_are_shown_beside_the_expanded_keys_and_values(bench, tmp_path):
    report_path = tmp_path / "report.json"
    proc = run(bench, "--model", "synthetic:tiny-deepseek-v3", "--mode", "all", "--workload", "mmlu-shape",
               "--subjects", 1, "--questions", 3, "--prefix-len", 40, "--json", report_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(report_path.read_text())
    # 4 layers: a latent of 64 + 16 against 4 heads' keys of 32 + 16 and values of 32, fp32.
    assert report["cache"]["kv_bytes_per_token"] == 4 * (64 + 16) * 4
    assert report["cache"]["expanded_kv_bytes_per_token"] == 4 * 4 * (32 + 16 + 32) * 4
    assert "bytes with the same heads' keys and values (4.0x)" in proc.stderr
    assert max(abs(m.get("max_abs_logprob_diff_to_naive", 0)) for m in report["modes"]) < 1e-5


def test_floor_counts_the_experts_a_token_is_routed_to(bench, tmp_path):
    # tiny-moe is tiny with each MLP (3 x 128 x 384) replaced by a router over 8 experts of 3 x 128 x 96, 2 a token.
    floors = {}
    for model in ("tiny", "tiny-moe"):
        report_path = tmp_path / f"{model}.json"
        proc = run(bench, "--model", f"synthetic:{model}", "--mode", "prefix", "--workload", "mmlu-shape",
                   "--subjects", 1, "--questions", 2, "--prefix-len", 16, "--json", report_path)
        assert proc.returncode == 0, proc.stderr
        floors[model] = json.loads(report_path.read_text())["floor"]
    dense, moe = floors["tiny"], floors["tiny-moe"]
    assert moe["unique_tokens"] == dense["unique_tokens"] and moe["attention_flops"] == dense["attention_flops"]
    per_token_and_layer = 128 * 8 + 2 * 3 * 128 * 96 - 3 * 128 * 384
    assert moe["weight_flops"] - dense["weight_flops"] == pytest.approx(
        2 * per_token_and_layer * 4 * dense["unique_tokens"])


@pytest.mark.parametrize("family, mlp_matrices", [("llama3", 3), ("starcoder2", 2)])
def test_floor_counts_each_weight_once_per_token(bench, tmp_path, family, mlp_matrices):
    """The floor's weight FLOPs from the checkpoint's own sizes: q, k, v, o and the MLP's matrices (gate, up, down;
    an ungated MLP has no gate) per distinct token, the output layer per scored position."""
    config = json.loads((DATA / "models" / family / "config.json").read_text())
    report_path = tmp_path / "report.json"
    proc = run(bench, "--model", DATA / "models" / family, "--mode", "prefix", "--workload", "mmlu-shape",
               "--subjects", 1, "--questions", 2, "--prefix-len", 16, "--json", report_path)
    assert proc.returncode == 0, proc.stderr
    floor = json.loads(report_path.read_text())["floor"]
    h, heads, kv = config["hidden_size"], config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = config.get("head_dim") or h // heads
    per_layer = h * head_dim * (2 * heads + 2 * kv) + mlp_matrices * h * config["intermediate_size"]
    assert floor["weight_flops"] == pytest.approx(2 * per_layer * config["num_hidden_layers"] * floor["unique_tokens"]
                                                  + 2 * h * config["vocab_size"] * floor["scored_positions"])


@pytest.mark.parametrize("workload, sizes, requests", [
    ("mmlu-text", ["--subjects", 2, "--questions", 3, "--shots", 2], 24),
    ("hellaswag-text", ["--questions", 5], 20),
])
def test_text_workloads_are_lm_eval_encoded_and_exact(bench, tmp_path, workload, sizes, requests):
    import tokenizers
    dump, report_path = tmp_path / "requests.jsonl", tmp_path / "report.json"
    proc = run(bench, "--model", "synthetic:tiny", "--mode", "all", "--workload", workload, *sizes,
               "--dump-requests", dump, "--json", report_path)
    assert proc.returncode == 0, proc.stderr
    assert f"{workload}: {requests} requests" in proc.stderr
    modes_of(json.loads(report_path.read_text()), requests)

    # The built-in tokenizer is the fixtures' one; its template adds the BOS (add_bos_token auto). Each context
    # decodes to the task's prompt, and re-encoding context + continuation with HF tokenizers gives the same ids.
    hf = tokenizers.Tokenizer.from_file(str(DATA / "tokenizer" / "tokenizer.json"))
    pairs = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(pairs) == requests
    contexts = set()
    for pair in pairs:
        context = hf.decode(pair["context"], skip_special_tokens=False)
        continuation = hf.decode(pair["continuation"], skip_special_tokens=False)
        assert context.startswith("<|begin_of_text|>")
        text = context[len("<|begin_of_text|>"):] + continuation
        assert hf.encode(text).ids == pair["context"] + pair["continuation"]
        contexts.add(context)
        if workload == "mmlu-text":
            assert "The following are multiple choice questions (with answers) about" in context
            assert context.endswith("Answer:") and continuation in (" A", " B", " C", " D")
        else:
            assert ": " in context and continuation.startswith(" ") and continuation.endswith(".")
    assert len(contexts) == requests // 4  # four continuations per context


def test_text_workload_tokenizer_must_fit_the_vocabulary(bench, tmp_path):
    tokenizer = json.loads((DATA / "tokenizer" / "tokenizer.json").read_text())
    tokenizer["added_tokens"].append({"id": 5000, "content": "<|big|>", "single_word": False, "lstrip": False,
                                      "rstrip": False, "normalized": False, "special": True})
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(tokenizer))
    proc = run(bench, "--model", "synthetic:tiny", "--workload", "mmlu-text", "--tokenizer", path)
    assert proc.returncode != 0
    assert "mmlu-text: the tokenizer's 5001 tokens do not fit the model's vocabulary of 2048" in proc.stderr


def test_dumped_requests_replay_to_the_same_scores(bench, tmp_path):
    dump, first, second = tmp_path / "requests.jsonl", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    args = ["--model", "synthetic:tiny", "--workload", "hellaswag-shape", "--questions", 5, "--seed", 9]
    proc = run(bench, *args, "--dump-requests", dump, "--output", first)
    assert proc.returncode == 0, proc.stderr
    assert len(dump.read_text().splitlines()) == 20
    proc = run(bench, "--model", "synthetic:tiny", "--seed", 9, "--requests", dump, "--output", second)
    assert proc.returncode == 0, proc.stderr
    assert first.read_text() == second.read_text()


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"context": [1, 2], "continuation": [3]}\n{oops', "in.jsonl:2"),
        ('{"context": [1, 2]}', "missing field 'continuation'"),
        ('{"context": [1, 2], "continuation": ["a"]}', "non-integer"),
        ('{"context": [1, 2], "continuation": [3]}\n{"context": [1], "continuation": [9999]}', "request 1"),
        ('{"context": [], "continuation": [3]}', "request 0: empty context"),
    ],
)
def test_bad_requests_exit_with_one_line(bench, tmp_path, line, message):
    requests = tmp_path / "in.jsonl"
    requests.write_text(line + "\n")
    proc = run(bench, "--model", DATA / "models" / "llama3", "--requests", requests, "--output", tmp_path / "o")
    assert proc.returncode != 0
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "/nonexistent/model"], "cannot read model config"),
        (["--model", "synthetic:huge"], "unknown synthetic model"),
        (["--model", "synthetic:tiny", "--device", "tpu"], "unknown device"),
        (["--model", "synthetic:tiny", "--dtype", "int4"], "unknown dtype"),
        (["--model", "synthetic:tiny", "--max-batch-rows", "x"], "expects an integer"),
        (["--bogus", "1"], "unknown flag --bogus"),
        (["--mode", "fastest"], "unknown mode"),
        (["--add-bos-token", "maybe"], "--add-bos-token"),
        (["--workload", "arc"], "unknown workload"),
        (["--workload", "mmlu-text", "--prefix-len", "5"], "--prefix-len does not apply to the text workload"),
        (["--workload", "hellaswag-text", "--shots", "-1"], "shots >= 0"),
        (["--pack-rows", "yes"], "--pack-rows expects true or false, got 'yes'"),
        (["--model", "synthetic:tiny", "--prefill-batch", "0"], "prefill_batch"),
        (["--workload", "gsm8k-shape", "--mode", "grouped"], "unknown mode 'grouped' (known: naive, prefix, all)"),
        (["--workload", "gsm8k-shape", "--max-new-tokens", "0"], "--max-new-tokens >= 1"),
        (["--workload", "gsm8k-text", "--prefix-len", "4"], "unknown flag --prefix-len"),
    ],
)
def test_bad_flags_exit_with_one_line(bench, args, message):
    proc = run(bench, *args)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_floor_counts_each_distinct_tokens_attention_once(bench, tmp_path):
    # One row of L tokens (four one-token choices read the same row): the floor's attention is every position's
    # query over the keys up to it, L (L + 1) / 2 of them, in every layer and head.
    config_path, report_path = tmp_path / "config.json", tmp_path / "report.json"
    proc = run(bench, "--model", "synthetic:tiny", "--subjects", 1, "--questions", 1, "--prefix-len", 30,
               "--context-min", 10, "--context-max", 10, "--dump-config", config_path, "--json", report_path)
    assert proc.returncode == 0, proc.stderr
    config = json.loads(config_path.read_text())
    floor = json.loads(report_path.read_text())["floor"]
    length = 40
    assert floor["unique_tokens"] == length
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    per_key = 4 * config["num_attention_heads"] * head_dim * config["num_hidden_layers"]
    assert floor["attention_flops"] == pytest.approx(per_key * length * (length + 1) / 2)


def test_soak_scores_random_workloads_against_the_plain_path(bench):
    proc = run(bench, "--model", "synthetic:tiny", "--soak", 6, "--seed", 5)
    assert proc.returncode == 0, proc.stderr
    summary = proc.stderr.strip().splitlines()[-1]
    assert summary.startswith("soak: 6 workloads") and ": 0 mismatches" in summary


def test_the_decode_matmul_cost_script_prints_a_row_per_width():
    script = ROOT / "benchmarks" / "decode_matmul_cost.py"
    proc = subprocess.run([sys.executable, str(script), "--hidden", "64", "--kv-width", "16", "--intermediate", "128",
                           "--layers", "2", "--vocab", "100", "--widths", "1,16", "--repeats", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = re.findall(r"^\s+(\d+) \|\s+([0-9.]+) \|\s+([0-9.]+)$", proc.stdout, re.M)
    assert [int(width) for width, _, _ in rows] == [1, 16]
    assert all(float(step) > 0 for _, step, _ in rows)


@pytest.mark.parametrize("model", ["tiny", "tiny-moe", "tiny-gpt-oss"])
def test_quantized_synthetic_weights_are_kept_as_stored_and_the_modes_agree(bench, tmp_path, model):
    """--quantize int4 and fp8 keep a synthetic model's projections and routed experts as 4-bit codes or FP8 blocks
    (gpt-oss's stacked experts as MXFP4; the report says how many bytes), int8 its projections as 8-bit codes, and
    the prefix mode scores them as the naive one does."""
    forms = ("int4", "fp8") + (("int8",) if model == "tiny" else ())  # int8 keeps no experts: one shape is enough
    reports = {}
    for form in ("",) + forms:
        path = tmp_path / f"weights-{form}.json"
        quantize = ("--quantize", form) if form else ()
        proc = run(bench, "--model", f"synthetic:{model}", "--mode", "all", "--subjects", 2, "--questions", 8,
                   "--prefix-len", 200, *quantize, "--json", path)
        assert proc.returncode == 0, proc.stderr
        reports[form] = json.loads(path.read_text())
    plain = reports[""]["weights"]
    assert plain["quantized_bytes"] == 0
    for form in forms:
        quantized = reports[form]["weights"]
        assert 0 < quantized["quantized_bytes"] and quantized["bytes"] < plain["bytes"], form
        assert modes_of(reports[form])["prefix"]["max_abs_logprob_diff_to_naive"] < 1e-4, form
    proc = run(bench, "--model", str(DATA / "models" / "llama3"), "--quantize", "int4")
    assert proc.returncode != 0 and "quantize applies to synthetic models" in proc.stderr
