"""The token-level scorer: a thin, typed layer over the native ``PrefixScorer``."""

from __future__ import annotations

import json
import math
import os
import struct
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _core
from .hub import ADAPTER_FILES, resolve_checkpoint

TokenPair = Tuple[Sequence[int], Sequence[int]]

#: Options of the native scorer, settable as keyword arguments of ``from_pretrained``.
OPTION_NAMES = frozenset(
    name for name in dir(_core.PrefixScorerOptions) if not name.startswith("_") and name != "on_progress"
)


_GENERATION_KEYS = frozenset({"prompt", "max_new_tokens", "stop_ids", "do_sample", "temperature", "top_k", "top_p", "seed"})


_CHECKPOINT_DTYPES = ("float32", "bfloat16", "float16")


def checkpoint_json(folder: "str | os.PathLike[str]", name: str) -> Dict[str, Any]:
    """The JSON file ``name`` of a checkpoint folder; empty where there is none (a synthetic model, say)."""
    path = os.path.join(os.fspath(folder), name)
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def native_model_type(pretrained: "str | os.PathLike[str]", revision: Optional[str] = None) -> Tuple[Optional[str], bool]:
    """A checkpoint's config.json model_type (None where it names none, or for a synthetic model) and whether the
    native engine runs it."""
    if os.fspath(pretrained).startswith("synthetic:"):
        return None, True
    model_type = checkpoint_json(resolve_checkpoint(pretrained, revision), "config.json").get("model_type")
    return model_type, model_type is None or model_type in _core.supported_model_types()


def native_refusal(pretrained: "str | os.PathLike[str]", revision: Optional[str] = None) -> Optional[str]:
    """What of a checkpoint the native engine does not run, as the subject of a sentence ("model_type 'opt'", or
    its quantization_config with the reason), or None where it runs it."""
    model_type, native = native_model_type(pretrained, revision)
    if not native:
        return f"model_type '{model_type}'"
    if model_type is None:
        return None
    quantization = checkpoint_json(resolve_checkpoint(pretrained, revision), "config.json").get("quantization_config")
    why = _core.quantization_refusal(json.dumps(quantization)) if quantization is not None else ""
    return f"model_type '{model_type}' stored as its quantization_config says ({why})" if why else None


def checkpoint_dtype(path: str) -> Optional[str]:
    """The dtype a checkpoint folder's config.json names (``dtype``, or the older ``torch_dtype``), if any."""
    fields = checkpoint_json(path, "config.json")
    named = fields.get("dtype") or fields.get("torch_dtype")
    return named if named in _CHECKPOINT_DTYPES else None


def _dtype_name(dtype: Any, devices: Sequence[str], checkpoint: str) -> str:
    """``"auto"``: the checkpoint's own dtype, as transformers reads it. ``None`` (and ``"auto"`` for a checkpoint
    that names none): float32 on the CPU, bfloat16 where any layer is on CUDA. torch dtypes accepted."""
    if dtype == "auto":
        dtype = checkpoint_dtype(checkpoint)
    if dtype is None:
        return "bfloat16" if any(d.startswith("cuda") for d in devices) else "float32"
    return str(dtype).replace("torch.", "")


def load_native(
    path_or_synthetic: "str | os.PathLike[str]",
    device: str = "cpu",
    dtype: Any = None,
    *,
    layer_devices: Optional[Sequence[str]] = None,
    revision: Optional[str] = None,
    adapter: "Optional[str | os.PathLike[str]]" = None,
    vocab_size: int = 0,
    seed: int = 0,
    on_progress: Optional[Callable[[int, int], None]] = None,
    **options: Any,
) -> Tuple[_core.PrefixScorer, str, Optional[str]]:
    """The native scorer of a checkpoint, with the dtype its weights load in and the adapter folder merged (if any):
    the one place both engines load (:meth:`PrefixScorer.from_pretrained` documents the arguments)."""
    model_options = _core.ModelOptions()
    model_options.device = device
    model_options.layer_devices = list(layer_devices or [])
    path = resolve_checkpoint(path_or_synthetic, revision)
    model_options.dtype = _dtype_name(dtype, model_options.layer_devices or [device], path)
    model_options.seed = seed
    if adapter is not None:
        model_options.adapter = resolve_checkpoint(adapter, files=ADAPTER_FILES)
    model_options.vocab_size = vocab_size
    scorer_options = _core.PrefixScorerOptions()
    for name, value in options.items():
        if name not in OPTION_NAMES:
            raise TypeError(f"unknown option {name!r}; options are {', '.join(sorted(OPTION_NAMES))}")
        setattr(scorer_options, name, value)
    if on_progress is not None:
        scorer_options.on_progress = on_progress
    core = _core.PrefixScorer(path, model_options, scorer_options)
    return core, model_options.dtype, model_options.adapter or None


def native_generation_requests(requests: Sequence[Dict[str, Any]]) -> List[_core.GenerationRequest]:
    """The native form of generation request dicts (:meth:`PrefixScorer.generate` says what a dict holds); a field
    a request leaves out keeps the native default."""
    native = []
    for index, request in enumerate(requests):
        unknown = set(request) - _GENERATION_KEYS
        if unknown:
            raise ValueError(f"generate: request {index}: unknown keys {sorted(unknown)}")
        r = _core.GenerationRequest()
        r.prompt = list(request["prompt"])
        r.max_new_tokens = int(request.get("max_new_tokens", 256))
        r.stop_ids = list(request.get("stop_ids", ()))
        sampling = _core.SamplingOptions()
        sampling.greedy = not request.get("do_sample", False)
        for key, kind in (("temperature", float), ("top_k", int), ("top_p", float), ("seed", int)):
            if request.get(key) is not None:
                setattr(sampling, key, kind(request[key]))
        r.sampling = sampling
        native.append(r)
    return native


class NativeEngine:
    """A loaded native model and its prefix cache: what the token-level :class:`PrefixScorer` and the text-level
    ``harness.Scorer`` share, each holding the native scorer directly."""

    def __init__(self, core: _core.PrefixScorer, dtype: Optional[str] = None, adapter: Optional[str] = None) -> None:
        self._core = core
        self.dtype = dtype  # the weights' dtype
        self.adapter = adapter  # the LoRA adapter's folder merged at load

    @property
    def num_parameters(self) -> int:
        """The weights as transformers counts them (tied embeddings once), with an adapter's as peft adds them: its
        LoRA factors and its modules_to_save copies."""
        count = self._core.num_parameters
        if self.adapter:
            header = _safetensors_header(os.path.join(self.adapter, "adapter_model.safetensors"))
            count += sum(math.prod(info["shape"]) for name, info in header.items()
                         if name != "__metadata__" and ".base_layer." not in name)
        return count

    @property
    def stats(self) -> Dict[str, int]:
        """Totals over every call so far (prefixes prefilled, cache hits, tokens, ...), with the cache's size."""
        return self._core.stats()

    @property
    def model_info(self) -> _core.ModelInfo:
        """The model's type and sizes (vocab_size, max_position_embeddings, ...)."""
        return self._core.model_info

    def cancel(self) -> None:
        """Stops the call in flight (from another thread) before its next forward; it raises ``Cancelled``.
        Ctrl-C stops a call the same way, raising ``KeyboardInterrupt``. The scorer stays usable."""
        self._core.cancel()

    def clear_cache(self) -> None:
        """Drops every cached prefix."""
        self._core.clear_cache()


class PrefixScorer(NativeEngine):
    """Scores ``(context ids, continuation ids)`` pairs exactly as one full forward would, each shared prefix once.

    Build it with :meth:`from_pretrained`. Every call releases the GIL while it computes.
    """

    @classmethod
    def from_pretrained(cls, path_or_synthetic: "str | os.PathLike[str]", device: str = "cpu", dtype: Any = None,
                        **kwargs: Any) -> "PrefixScorer":
        """Loads a Hugging Face checkpoint directory, or ``"synthetic:NAME"`` (tiny, small, llama-1b, llama-8b,
        tiny-gemma2, tiny-gemma3, tiny-moe, tiny-phi3, gemma2-2b, gemma3-1b, phi3-mini, qwen3-moe-a3b, pythia-1b,
        phi-2, starcoder2-3b, gpt2, gpt-oss-20b, tiny-gemma4, gemma4-e2b, tiny-glm4-moe, glm4.5-air,
        ernie4.5-21b-a3b, hunyuan-a13b, minimax-m2, seed-oss-36b, exaone4-32b, hunyuan-0.5b, ernie4.5-0.3b,
        apertus-8b, tiny-qwen3.5, qwen3.5-9b, qwen3.5-35b-a3b, qwen3-next-80b-a3b, olmo-hybrid-7b,
        lfm2-1.2b, tiny-granite4, granite-4.0-h-tiny, lfm3-1.7b, nemotron-h-8b, falcon-h1-1.5b, lfm2-8b-a1b,
        tiny-deepseek-v3, deepseek-v3, kimi-k2, glm-4.7-flash, mistral-small-4, deepseek-v3.2, glm-5).

        Keyword arguments: ``layer_devices`` splits the layers into contiguous blocks over several devices, balanced
        by bytes. A hub name (``org/name``, with ``revision``) loads its snapshot from the Hugging Face cache
        (``prefix_scorer.hub``). ``adapter``, a peft LoRA adapter's folder or hub name, is merged into the weights as
        they load. ``vocab_size`` resizes the embeddings and output layer as transformers'
        ``resize_token_embeddings`` (rows cut, or the adapter's). ``seed`` seeds a synthetic model's weights;
        ``on_progress(done, total)`` hears each call's progress. The rest are the native options under their own
        names (``OPTION_NAMES``; docs/options.md says what each does, and
        ``help(prefix_scorer._core.PrefixScorerOptions)`` too).
        Raises ``FileNotFoundError`` for a missing checkpoint, ``ValueError`` for a bad option or config.
        """
        return cls(*load_native(path_or_synthetic, device, dtype, **kwargs))

    def loglikelihood(self, pairs: Sequence[TokenPair]) -> List[Tuple[float, bool]]:
        """``(summed logprob, is_greedy)`` of each pair's continuation, in the order given.

        Raises ``ValueError`` naming the request for an empty context or continuation or an id outside the
        vocabulary.
        """
        return self._core.loglikelihood([(list(c), list(x)) for c, x in pairs])

    def loglikelihood_rolling(self, sequences: Sequence[Sequence[int]], prefix_token: int) -> List[Tuple[float, bool]]:
        """``(summed logprob, all greedy)`` of each token sequence over lm-evaluation-harness's disjoint rolling
        windows of ``max_length`` tokens, the first predicted from ``prefix_token``."""
        return self._core.loglikelihood_rolling([list(s) for s in sequences], prefix_token)

    def generate(
        self,
        requests: Sequence[Dict[str, Any]],
        stop_hook: "_core.StopStrings | Callable[[int, List[int]], bool] | None" = None,
    ) -> Tuple[List[Tuple[List[int], str, List[float]]], Dict[str, int]]:
        """Continues each request's ``prompt`` ids; returns ``([(new ids, finish reason, their logprobs)], stats)`` in
        order (reasons: ``"stop_id"``, ``"max_new_tokens"``, ``"stop_hook"``).

        A request is a dict: ``prompt`` (ids, required), ``max_new_tokens`` (256), ``stop_ids`` (ids that end the
        row, kept in its ids), ``do_sample`` (False: greedy), ``temperature``, ``top_k``, ``top_p``, ``seed``.
        ``stop_hook(request index, ids so far)`` returning True ends that row (finish reason ``"stop_hook"``); a
        ``_core.StopStrings(tokenizer, stops)`` does the same for stop strings in C++, without a call into Python.
        Raises ``ValueError`` naming the request for a bad one, before any compute.
        """
        return self._core.generate(native_generation_requests(requests), stop_hook)


def _safetensors_header(path: str) -> Dict[str, Any]:
    """The JSON header of a .safetensors file: each tensor's dtype, shape and offsets."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(length))
