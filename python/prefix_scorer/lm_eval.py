"""lm-evaluation-harness backend: ``--model prefix-scorer``.

``python -m prefix_scorer.lm_eval --model prefix-scorer --model_args pretrained=DIR --tasks mmlu`` registers the
model and runs lm-eval's own command line. Importing this module works without lm_eval installed (the class is
then a plain object, usable on its own); with it, ``PrefixScorerLM`` is a ``TemplateLM`` registered as
``prefix-scorer``.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from typing import Any, Dict, List, Optional, Tuple

from . import _core
from .distributed import DataParallel
from .harness import GenerationText, Scorer, batch_size_options, default_device
from .hub import resolve_checkpoint
from .scorer import OPTION_NAMES, native_refusal

try:
    # lm-eval fills its registry with the built-in backends (lazily) only while the registry is empty: load them
    # first, so that registering prefix-scorer does not hide --model hf from the same process.
    import lm_eval.models  # noqa: F401
    from lm_eval.api.model import TemplateLM as _Base
    from lm_eval.api.registry import register_model as _register_model

    HAVE_LM_EVAL = True
except ImportError:
    _Base = object
    _register_model = None
    HAVE_LM_EVAL = False

#: Every argument of lm-eval's ``HFLM.__init__`` (the hf backend) beyond the ones served (``pretrained``, ``revision``,
#: ``device``, ``dtype``, ``max_length``, ``batch_size``, ``add_bos_token``, ``tokenizer``, ``parallelize``,
#: ``chat_template_args``, ``enable_thinking``, ``peft``), with what happens to
#: it here. Harmless: accepted whatever its value (with a warning when set), since it cannot change the numbers.
#: Refused: an error unless it holds hf's default, since ignoring it would give numbers under the wrong name; the
#: text says what to do instead. A test checks that every HFLM argument is in one of the lists.
HARMLESS_ARGS = frozenset({"max_batch_size", "trust_remote_code", "use_fast_tokenizer", "logits_cache",
                           "max_memory_per_gpu", "max_cpu_memory", "offload_folder", "attn_implementation"})
REFUSED_ARGS = {  # name: (the values that mean hf's default, besides none; what to do instead)
    "backend": ({"default", "causal"}, "prefix-scorer runs decoder-only (causal) models only; use --model hf"),
    "subfolder": (set(), "pass pretrained=PATH/SUBFOLDER"),
    "truncation": ({"false", "0"}, "prefix-scorer left-truncates to max_length as the hf backend does by default"),
    "softmax_dtype": (set(), "log-softmax runs in float32"),
    "mixed_precision_dtype": (set(), "pass dtype= instead"),
    "prefix_token_id": (set(), "the prefix token is the tokenizer's BOS (else EOS)"),
    "tp_plan": (set(), "tensor parallelism is not supported; parallelize=True splits the layers over the GPUs"),
    "delta": (set(), "apply the delta to the checkpoint first, or use --model hf"),
    "autogptq": ({"false", "0"}, "quantized checkpoints are not supported; use --model hf"),
    "gptqmodel": ({"false", "0"}, "quantized checkpoints are not supported; use --model hf"),
    "gguf_file": (set(), "GGUF checkpoints are not supported; use --model hf"),
    "think_end_token": (set(), "thinking traces are not stripped yet; use --model hf"),
}


def _check_hf_arg(name: str, value: Any) -> None:
    """Warns about a harmless hf argument that is set; refuses a refused one that is not at hf's default."""
    if name in HARMLESS_ARGS:
        if value not in (None, ""):
            warnings.warn(f"prefix-scorer ignores model argument {name}={value!r} (it does not change the numbers)")
        return
    defaults, instead = REFUSED_ARGS[name]
    if str(value).strip().lower() not in defaults | {"", "none"}:
        raise ValueError(f"prefix-scorer cannot honour model argument {name}={value!r}: {instead}")


def _visible_gpus() -> List[str]:
    import torch

    return [f"cuda:{i}" for i in range(torch.cuda.device_count())]


#: Tokens generated when a request's gen_kwargs name no maximum (the HF backend's max_gen_toks).
MAX_GEN_TOKS = 256

#: lm-eval seeds torch with 1234 by default; each sampled request draws from its own stream from here on.
SAMPLING_SEED = 1234


def sampling_of(kwargs: Dict[str, Any], index: int) -> Dict[str, Any]:
    """The sampling settings of normalised gen_kwargs: do_sample, temperature, top_k, top_p (``Scorer.generate``
    fills in those not given and checks them); any other key is refused by name (HF generate would run it, this
    backend cannot)."""
    unknown = sorted(set(kwargs) - {"do_sample", "temperature", "top_k", "top_p"})
    if unknown:
        raise ValueError(f"generate_until: request {index}: prefix-scorer does not support generation arguments "
                         f"{unknown}; it generates greedily or samples with temperature, top_k and top_p")
    if not kwargs.get("do_sample", False):
        return {"do_sample": False}
    # The hf backend fills in a temperature of 0.0, which transformers (and Scorer.generate) refuses.
    return {"do_sample": True, "temperature": kwargs.get("temperature", 0.0), "top_k": kwargs.get("top_k"),
            "top_p": kwargs.get("top_p"), "seed": SAMPLING_SEED + index}


class _NoCache:
    def add_partial(self, *args: Any) -> None:
        pass


def _as_bool(value: Any) -> Optional[bool]:
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    if text in ("none", ""):
        return None
    raise ValueError(f"expected true or false, got {value!r}")


def parse_model_args(
    batch_size: Any = None, max_length: Any = None, add_bos_token: Any = None, **options: Any
) -> Dict[str, Any]:
    """lm-eval's model arguments (strings or numbers) as :class:`Scorer` keyword arguments.

    ``batch_size`` is a memory hint (``harness.batch_size_options``): N > 1 caps a forward at N * 512 padded tokens,
    not at N rows; 1 (lm-eval's command-line default), ``"auto"`` or nothing keep the scorer's own budget. Cache
    options (``min_prefix_len``, ``max_cache_bytes``, ``keep_cache``, ...) and ``tokenizer`` / ``tokenizer_backend`` pass through;
    ``parallelize=True`` splits the layers over every visible GPU in contiguous blocks balanced by bytes;
    ``peft=ADAPTER`` merges a LoRA adapter into the weights at load; the hf backend's other
    arguments are harmless (ignored with a warning) or refused unless at hf's default (``HARMLESS_ARGS``,
    ``REFUSED_ARGS``).
    """
    parsed: Dict[str, Any] = {"add_bos_token": _as_bool(add_bos_token)}
    if max_length not in (None, "", "None"):
        parsed["max_length"] = int(max_length)
    parsed.update(batch_size_options(batch_size))
    for name, value in options.items():
        if name in HARMLESS_ARGS or name in REFUSED_ARGS:
            _check_hf_arg(name, value)
        elif name == "parallelize":
            if _as_bool(value):
                parsed["layer_devices"] = _visible_gpus()
                if len(parsed["layer_devices"]) < 2:
                    warnings.warn("parallelize=True with fewer than two visible GPUs: the layers stay on one device")
                    del parsed["layer_devices"]
        elif name in ("tokenizer", "tokenizer_backend", "revision"):
            parsed[name] = value
        elif name == "peft":  # a LoRA adapter, merged at load (anything else peft saves is refused by name)
            if value not in (None, ""):
                parsed["adapter"] = value
        elif name in OPTION_NAMES:
            parsed[name] = _as_bool(value) if name in ("keep_cache", "pack_rows") else int(value)
        else:
            raise TypeError(f"unknown model argument {name!r}; cache options are {', '.join(sorted(OPTION_NAMES))}")
    return parsed


def _snapshot_commit(path: str) -> str:
    """The commit of a Hugging Face cache snapshot folder (``.../snapshots/<commit>``), else ""."""
    parent, name = os.path.split(os.path.normpath(path))
    return name if os.path.basename(parent) == "snapshots" and re.fullmatch(r"[0-9a-f]{40}", name) else ""


class PrefixScorerLM(_Base):
    """An lm-evaluation-harness model backed by :class:`prefix_scorer.harness.Scorer`.

    Model arguments follow the HF backend's: ``pretrained``, ``device`` (lm-eval's ``--device``; by default the
    first GPU if one is visible, else the CPU), ``dtype``, ``max_length``, ``add_bos_token``, ``batch_size``,
    ``tokenizer_name`` (the request cache's key), plus the cache options.
    """

    def __new__(cls, pretrained: str = "", *args: Any, **model_args: Any) -> Any:
        """A model_type the native engine lacks is served by lm-eval's own hf backend (with one warning, prefix reuse
        off, and ``engine: transformers`` in the results), unless ``native_only=True`` asks for a refusal."""
        refusal = native_refusal(pretrained, model_args.get("revision"))
        if refusal is None or not HAVE_LM_EVAL:
            return super().__new__(cls)
        if _as_bool(model_args.get("native_only", False)):
            raise ValueError(f"{refusal} is not one prefix-scorer runs natively (native_only=True); "
                             f"it runs: {', '.join(_core.supported_model_types())}")
        warnings.warn(f"prefix-scorer does not run {refusal} natively: lm-eval's hf backend (transformers) "
                      "serves it, without prefix reuse")
        hf_args = {name: value for name, value in model_args.items() if name not in PREFIX_SCORER_ONLY_ARGS}
        return TransformersFallbackLM(pretrained, *args, **hf_args)

    def __init__(
        self,
        pretrained: str,
        device: Optional[str] = None,
        dtype: Optional[str] = None,
        tokenizer_name: Optional[str] = None,
        native_only: Any = False,
        **model_args: Any,
    ) -> None:
        if HAVE_LM_EVAL:
            super().__init__()
        else:
            self.cache_hook = _NoCache()
        self.parallel = DataParallel(device or default_device())
        self._hf_tokenizer: Any = None
        # As HFLM keeps them: extra template variables, enable_thinking among them when given.
        template_args = model_args.pop("chat_template_args", None)
        if isinstance(template_args, str):
            template_args = json.loads(template_args) if template_args.strip() else None
        self.chat_template_args: Dict[str, Any] = dict(template_args or {})
        enable_thinking = model_args.pop("enable_thinking", None)
        if enable_thinking is not None:
            self.chat_template_args["enable_thinking"] = _as_bool(enable_thinking)
        # dtype as the hf backend takes it: "auto" (the checkpoint's own) unless given.
        options = parse_model_args(**model_args)
        if "adapter" in options:  # the hf backend resizes the embeddings to its tokenizer before loading an adapter
            from transformers import AutoTokenizer

            source = options.get("tokenizer") or resolve_checkpoint(pretrained, options.get("revision"))
            options["vocab_size"] = len(AutoTokenizer.from_pretrained(source))
        self.scorer = Scorer(pretrained, device=self.parallel.device, dtype=dtype or "auto",
                             progress=self.parallel.rank == 0, **options)
        self._tokenizer_name = tokenizer_name or os.fspath(pretrained).replace("/", "__")

    # Data parallel: lm-eval gives each rank its share of the documents and gathers through these.
    @property
    def device(self) -> Any:
        import torch

        return torch.device(self.parallel.device)

    @property
    def rank(self) -> int:
        return self.parallel.rank

    @property
    def world_size(self) -> int:
        return self.parallel.world_size

    def all_gather(self, tensor: Any) -> Any:
        return self.parallel.all_gather(tensor)

    def gather_object(self, obj: Any, dst: int = 0) -> Any:
        return self.parallel.gather_object(obj, dst)

    def barrier(self) -> None:
        self.parallel.barrier()

    def _show_progress(self, disable_tqdm: bool) -> None:
        self.scorer.progress = not disable_tqdm and self.rank == 0  # one bar, on rank 0

    @property
    def eot_token_id(self) -> int:
        eos = self.scorer.tokenizer.eos_token_id
        return self.scorer.prefix_token_id if eos is None else eos

    @property
    def prefix_token_id(self) -> int:
        return self.scorer.prefix_token_id

    @property
    def max_length(self) -> int:
        return self.scorer.max_length

    @property
    def tokenizer(self) -> Any:
        """transformers' tokenizer of the checkpoint, as the hf backend holds it (its pad token set by lm-eval's
        configure_pad_token): chat templates and the results' tokenizer fields come from it. Loaded on first use;
        scoring and generation encode with the scorer's own tokenizer."""
        if self._hf_tokenizer is None:
            from lm_eval.models.utils import configure_pad_token
            from transformers import AutoTokenizer

            self._hf_tokenizer = configure_pad_token(AutoTokenizer.from_pretrained(self.scorer.tokenizer_source))
        return self._hf_tokenizer

    def apply_chat_template(self, chat_history: List[Dict[str, str]], add_generation_prompt: bool = True) -> str:
        """The chat rendered as the hf backend renders it (the template of the tokenizer, retried without the
        system turn when the template rejects one)."""
        import jinja2

        def render(history: List[Dict[str, str]]) -> str:
            return self.tokenizer.apply_chat_template(history, tokenize=False,
                                                      add_generation_prompt=add_generation_prompt,
                                                      continue_final_message=not add_generation_prompt,
                                                      **self.chat_template_args)

        try:
            return render(chat_history)
        except jinja2.exceptions.TemplateError:
            warnings.warn("the chat template rejects the system turn: rendering the chat without it, as hf does")
            return render([message for message in chat_history if message["role"] != "system"])

    def get_model_info(self) -> Dict[str, Any]:
        """What the hf backend adds to the results' config: parameters, dtype, revision and commit (and the
        adapter's commit); and the bytes the weights hold, those kept in the checkpoint's quantized form among them."""
        engine = self.scorer
        info = {"engine": "prefix-scorer", "model_num_parameters": engine.num_parameters,
                "model_weight_bytes": engine.model_info.weight_bytes,
                "model_quantized_weight_bytes": engine.model_info.quantized_weight_bytes,
                "model_dtype": f"torch.{engine.dtype}",
                "model_revision": self.scorer.revision or "main",
                "model_sha": _snapshot_commit(os.fspath(self.scorer.pretrained))}
        if engine.adapter:
            info["peft_sha"] = _snapshot_commit(engine.adapter)
        return info

    @property
    def max_gen_toks(self) -> int:
        return MAX_GEN_TOKS

    @property
    def tokenizer_name(self) -> str:
        return self._tokenizer_name

    def tok_encode(self, string: str, left_truncate_len: Optional[int] = None, add_special_tokens: Optional[bool] = None,
                   **kwargs: Any) -> List[int]:
        if add_special_tokens is None:
            ids = self.scorer.encode(string)
        else:
            ids = list(self.scorer.tokenizer.encode(string, add_special_tokens))
        return ids[-left_truncate_len:] if left_truncate_len else ids

    def loglikelihood(self, requests: List[Any], disable_tqdm: bool = False) -> List[Tuple[float, bool]]:
        """Each request's ``args`` is ``(context, continuation)``; results come back in the requests' order.

        With lm-eval installed, its own TemplateLM encodes the pairs (through :meth:`tok_encode`, as its HF backend
        does; the rule for empty contexts has changed between releases), and :meth:`_loglikelihood_tokens` scores
        them; without it, :class:`Scorer` encodes them by lm-eval's rule.
        """
        if HAVE_LM_EVAL:
            return super().loglikelihood(requests, disable_tqdm=disable_tqdm)
        pairs = [tuple(req.args) for req in requests]
        self._show_progress(disable_tqdm)
        results = self.scorer.loglikelihood(pairs)
        for pair, result in zip(pairs, results):
            self.cache_hook.add_partial("loglikelihood", pair, result)
        return results

    def _loglikelihood_tokens(self, requests: List[Any], disable_tqdm: bool = False, **kwargs: Any) -> List[Tuple[float, bool]]:
        """``[(cache key, context ids, continuation ids)]``, as lm-eval's TemplateLM hands them."""
        self._show_progress(disable_tqdm)
        results = self.scorer.loglikelihood_tokens([(ctx, cont) for _, ctx, cont in requests])
        for (key, _, _), result in zip(requests, results):
            if key is not None:
                self.cache_hook.add_partial("loglikelihood", key, result)
        return results

    def loglikelihood_rolling(self, requests: List[Any], disable_tqdm: bool = False) -> List[float]:
        texts = [req.args[0] for req in requests]
        self._show_progress(disable_tqdm)
        results = self.scorer.loglikelihood_rolling(texts)
        for text, result in zip(texts, results):
            self.cache_hook.add_partial("loglikelihood_rolling", (text,), result)
        return results

    def tok_decode(self, tokens: Any, skip_special_tokens: bool = True) -> str:
        ids = [tokens] if isinstance(tokens, int) else list(tokens)
        return self.scorer.tokenizer.decode(ids, skip_special_tokens)

    def generate_until(self, requests: List[Any], disable_tqdm: bool = False) -> List[str]:
        """Each request's ``args`` is ``(context, gen_kwargs)``: the HF backend's semantics, through lm-eval's own
        helpers (``gen_kwargs`` normalised, the EOS string added to ``until``, the context left-truncated to
        ``max_length - max_gen_toks`` tokens, the output decoded without special tokens and cut at the first stop
        string). Sampling settings this backend lacks (beam search, penalties, ...) are refused by name."""
        from lm_eval.models.utils import handle_stop_sequences, normalize_gen_kwargs, postprocess_generated_text

        eos = self.tok_decode(self.eot_token_id, skip_special_tokens=False)
        prepared, untils = [], []
        for index, req in enumerate(requests):
            context, gen_kwargs = req.args
            kwargs = normalize_gen_kwargs(gen_kwargs, self.max_gen_toks)
            until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
            max_gen_toks = int(kwargs.pop("max_gen_toks"))
            if max_gen_toks >= self.max_length:
                raise ValueError(f"generate_until: request {index}: max_gen_toks {max_gen_toks} leaves no room for "
                                 f"the context in max_length {self.max_length}")
            sampling = sampling_of(kwargs, index)
            prompt = self.tok_encode(context, left_truncate_len=self.max_length - max_gen_toks)
            prepared.append(GenerationText(prompt, [u for u in until if u], max_gen_toks, sampling))
            untils.append(until)
        self._show_progress(disable_tqdm)
        texts = self.scorer.generate(prepared)
        results = []
        for req, until, text in zip(requests, untils, texts):
            text = postprocess_generated_text(generation=text, stop=until, think_end_token=None)
            self.cache_hook.add_partial("generate_until", req.args, text)
            results.append(text)
        return results


#: Model arguments that only prefix-scorer reads, left out when lm-eval's hf backend serves the model instead.
PREFIX_SCORER_ONLY_ARGS = frozenset(OPTION_NAMES | {"tokenizer_backend", "tokenizer_name", "native_only"})

if HAVE_LM_EVAL:
    from lm_eval.models.huggingface import HFLM

    class TransformersFallbackLM(HFLM):
        """lm-eval's own hf backend, for a model_type prefix-scorer does not run natively; its results say so."""

        def get_model_info(self) -> Dict[str, Any]:
            return {**super().get_model_info(), "engine": "transformers"}

    PrefixScorerLM = _register_model("prefix-scorer")(PrefixScorerLM)


def main() -> None:
    """Runs lm-eval's command line with ``prefix-scorer`` registered."""
    if not HAVE_LM_EVAL:
        raise SystemExit("prefix_scorer.lm_eval: lm_eval is not installed (pip install lm-eval)")
    from lm_eval.__main__ import cli_evaluate

    cli_evaluate()


if __name__ == "__main__":
    main()
