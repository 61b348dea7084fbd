"""Text-level scoring with lm-evaluation-harness semantics, shared by the harness adapters."""

from __future__ import annotations

import contextlib
import os
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from . import _core
from .hub import resolve_checkpoint
from .scorer import NativeEngine, checkpoint_json, load_native, native_generation_requests

try:
    from tqdm.auto import tqdm
except ImportError:  # progress bars are optional
    tqdm = None


class GenerationText(NamedTuple):
    """A prompt's ids, the strings and token budget that end it, and how it samples (``Scorer.generate``)."""

    prompt: List[int]
    until: Sequence[str]
    max_new_tokens: int
    sampling: Dict[str, Any]


def _eos_ids(generation_config: Dict[str, Any], config: Dict[str, Any]) -> List[int]:
    """The ids that end a generation, as HF generate takes them: generation_config.json's eos_token_id (an id or a
    list), else config.json's; none for a synthetic model."""
    for fields in (generation_config, config):
        eos = fields.get("eos_token_id")
        if eos is not None:
            return [int(e) for e in (eos if isinstance(eos, list) else [eos])]
    return []


# generation_config.json settings HF generate applies that this engine does not: always, or when sampling. A
# checkpoint that sets one is refused by name rather than generating something else under the same settings.
_UNSUPPORTED_ALWAYS = {"repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "bad_words_ids": None,
                       "suppress_tokens": None, "begin_suppress_tokens": None, "min_length": 0, "min_new_tokens": None,
                       "forced_bos_token_id": None, "forced_eos_token_id": None, "sequence_bias": None,
                       "exponential_decay_length_penalty": None}
_UNSUPPORTED_SAMPLING = {"typical_p": 1.0, "epsilon_cutoff": 0.0, "eta_cutoff": 0.0, "min_p": None}
# transformers' defaults for the sampling settings a request does not give.
_SAMPLING_DEFAULTS = {"temperature": 1.0, "top_k": 50, "top_p": 1.0}


def _generation_settings(config: Dict[str, Any], sampling: Dict[str, Any], index: int) -> Dict[str, Any]:
    """A request's sampling settings with generation_config.json's (then transformers') defaults filled in, as HF
    generate takes them: the one place the adapters' sampling is resolved. A setting of that file this engine cannot
    apply, or sampling at a temperature that is not above 0, is an error naming the request."""
    unsupported = dict(_UNSUPPORTED_ALWAYS, **(_UNSUPPORTED_SAMPLING if sampling.get("do_sample") else {}))
    for key, default in unsupported.items():
        if config.get(key) not in (None, default, [], {}):
            raise ValueError(f"generate: request {index}: the checkpoint's generation_config.json sets "
                             f"{key}={config[key]!r}, which prefix-scorer does not apply; use the hf backend")
    if not sampling.get("do_sample"):
        return sampling
    filled = {key: config.get(key, default) for key, default in _SAMPLING_DEFAULTS.items()}
    filled.update({key: value for key, value in sampling.items() if value is not None})
    if not float(filled["temperature"]) > 0.0:  # transformers refuses it too
        raise ValueError(f"generation request {index}: do_sample=True needs a temperature above 0")
    return filled


#: Padded tokens per forward for each row of a harness's ``batch_size=N``.
TOKENS_PER_BATCH_ROW = 512


def batch_size_options(batch_size: Any) -> Dict[str, int]:
    """A harness's ``batch_size`` as scorer options. The HF backends run that many rows a forward; this engine sizes
    its forwards by tokens and memory and keeps as many generation rows running as they allow, so ``N`` > 1 is read
    as a memory hint: a forward of at most N * 512 padded tokens, rows uncapped by it. 1 (lm-eval's command-line
    default), ``"auto"`` or nothing keep the scorer's own budget."""
    if batch_size is None or str(batch_size).startswith("auto"):
        return {}
    rows = int(batch_size)
    if rows <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size!r}")
    return {"max_batch_tokens": rows * TOKENS_PER_BATCH_ROW} if rows > 1 else {}


def default_device() -> str:
    """What the harnesses' own HF backends take when no device is given: the first GPU if one is visible."""
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"


class _HfTokenizer:
    """``transformers.AutoTokenizer`` behind the native tokenizer's interface."""

    def __init__(self, name: str) -> None:
        from transformers import AutoTokenizer

        self._tok = AutoTokenizer.from_pretrained(name)
        self.bos_token_id = self._tok.bos_token_id
        self.eos_token_id = self._tok.eos_token_id
        self.adds_special_tokens = len(self._tok("").input_ids) > 0

    def encode(self, text: str, add_special_tokens: bool = False) -> List[int]:
        return self._tok(text, add_special_tokens=add_special_tokens).input_ids

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> Optional[int]:
        return self._tok.convert_tokens_to_ids(token)

    def id_to_token(self, token_id: int) -> Optional[str]:
        return self._tok.convert_ids_to_tokens(token_id)


class _ProgressRelay:
    """Forwards the native scorer's (done, total) to the bar of the call in progress. The native scorer holds
    this object, not the Scorer, so that no reference cycle through C++ keeps the model alive."""

    def __init__(self) -> None:
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        bar = self.bar
        if bar is not None and (bar.n, bar.total) != (done, total):  # generation reports every step
            bar.total = total
            bar.n = done
            bar.refresh()


class Scorer(NativeEngine):
    """Scores text requests as lm-evaluation-harness's HF backend would: the one engine the harness adapters hold,
    encoding, scoring and generating on the native scorer (its stats, model_info, dtype, clear_cache and cancel are
    :class:`~prefix_scorer.PrefixScorer`'s).

    - ``add_bos_token``: ``None`` takes the tokenizer's own default (a tokenizer.json whose template adds a BOS
      adds it); ``True``/``False`` force it. Text that already starts with the BOS gets no second one.
    - ``max_length``: inputs keep their last ``max_length + 1`` tokens (default: the model's
      ``max_position_embeddings``); rolling windows are ``max_length`` long.
    - ``pretrained``: a checkpoint folder, ``synthetic:NAME``, or a hub name (``org/name``, at ``revision``) in the
      Hugging Face cache.
    - ``tokenizer_backend``: ``"native"`` (default) reads tokenizer.json in C++; ``"hf"`` uses
      ``transformers.AutoTokenizer``. ``tokenizer`` names another tokenizer file or directory.
    - Other keyword arguments are :meth:`PrefixScorer.from_pretrained`'s options.
    """

    def __init__(
        self,
        pretrained: "str | os.PathLike[str]",
        *,
        device: str = "cpu",
        dtype: Any = None,
        max_length: Optional[int] = None,
        add_bos_token: Optional[bool] = None,
        tokenizer: "Optional[str | os.PathLike[str]]" = None,
        tokenizer_backend: str = "native",
        progress: bool = True,
        revision: Optional[str] = None,
        **options: Any,
    ) -> None:
        self.progress = progress
        self._relay = _ProgressRelay()
        pretrained = resolve_checkpoint(pretrained, revision)
        super().__init__(*load_native(pretrained, device, dtype, max_length=max_length or 0,
                                      on_progress=self._relay, **options))
        self.max_length = max_length or self.model_info.max_position_embeddings
        self.pretrained = pretrained
        self.revision = revision
        source = os.fspath(tokenizer if tokenizer is not None else pretrained)
        self.tokenizer_source = source
        if tokenizer_backend == "native":
            if source.startswith("synthetic:"):
                raise ValueError("a synthetic model has no tokenizer: pass tokenizer=PATH for text requests")
            self.tokenizer: Any = _core.Tokenizer.from_file(source)
        elif tokenizer_backend == "hf":
            self.tokenizer = _HfTokenizer(source)
        else:
            raise ValueError(f"tokenizer_backend must be 'native' or 'hf', got {tokenizer_backend!r}")
        self.add_bos_token = self.tokenizer.adds_special_tokens if add_bos_token is None else bool(add_bos_token)
        self.generation_config = checkpoint_json(pretrained, "generation_config.json")
        self.eos_ids = _eos_ids(self.generation_config, checkpoint_json(pretrained, "config.json"))

    @property
    def prefix_token_id(self) -> int:
        """The token an empty context becomes: BOS, else EOS."""
        token = self.tokenizer.bos_token_id
        if token is None:
            token = self.tokenizer.eos_token_id
        if token is None:
            raise ValueError("the tokenizer has neither a BOS nor an EOS token to stand for an empty context")
        return token

    def encode(self, text: str) -> List[int]:
        """``text``'s ids, with the BOS when ``add_bos_token`` (never twice)."""
        ids = list(self.tokenizer.encode(text, self.add_bos_token))
        bos = self.tokenizer.bos_token_id
        if self.add_bos_token and bos is not None and ids[:2] == [bos, bos]:
            ids = ids[1:]
        return ids

    def encode_pair(self, context: str, continuation: str) -> Tuple[List[int], List[int]]:
        """``(context ids, continuation ids)`` as lm-evaluation-harness's HF backend encodes a request."""
        if isinstance(self.tokenizer, _core.Tokenizer):
            return _core.encode_pair(self.tokenizer, context, continuation, self.add_bos_token)
        if context == "":
            return [self.prefix_token_id], self.encode(continuation)
        stripped = context.rstrip()
        continuation = context[len(stripped):] + continuation
        whole, head = self.encode(stripped + continuation), self.encode(stripped)
        return head, whole[len(head):]

    def loglikelihood(self, requests: Sequence[Tuple[str, str]]) -> List[Tuple[float, bool]]:
        """``(logprob, is_greedy)`` of each ``(context, continuation)`` text pair, in order."""
        pairs = [self.encode_pair(context, continuation) for context, continuation in requests]
        return self.loglikelihood_tokens(pairs)

    def loglikelihood_tokens(self, pairs: Sequence[Tuple[Sequence[int], Sequence[int]]]) -> List[Tuple[float, bool]]:
        """The same for pairs already encoded. A continuation that encodes to no token (whitespace the context's last
        token absorbed) scores ``(0.0, True)``, the HF backend's empty sum and vacuous greedy check."""
        scored = [i for i, (_, continuation) in enumerate(pairs) if len(continuation) > 0]
        results: List[Tuple[float, bool]] = [(0.0, True)] * len(pairs)
        with self._progress_bar(len(scored), "loglikelihood"):
            native = [(list(pairs[i][0]), list(pairs[i][1])) for i in scored]
            for i, result in zip(scored, self._core.loglikelihood(native)):
                results[i] = result
        return results

    def loglikelihood_rolling(self, texts: Sequence[str]) -> List[float]:
        """Each text's summed logprob over lm-evaluation-harness's disjoint rolling windows (perplexity)."""
        return [logprob for logprob, _ in self.rolling_scores(texts)]

    def rolling_scores(self, texts: Sequence[str]) -> List[Tuple[float, bool]]:
        """``(summed logprob, all greedy)`` of each text over the rolling windows."""
        return self.rolling_token_scores([self.encode(text) for text in texts])

    def rolling_token_scores(self, sequences: Sequence[Sequence[int]]) -> List[Tuple[float, bool]]:
        """The same for texts already encoded."""
        with self._progress_bar(len(sequences), "loglikelihood_rolling"):
            return self._core.loglikelihood_rolling([list(s) for s in sequences], self.prefix_token_id)

    def generate(self, requests: Sequence[GenerationText], skip_special_tokens: bool = True) -> List[str]:
        """Each request's continuation, decoded (without special tokens by default): generated until an EOS id of the model
        (``generation_config.json``'s ``eos_token_id``, else ``config.json``'s), until one of its stop strings
        appears in the decoded continuation, or ``max_new_tokens``. Stop strings are not cut here."""
        stops = [list(r.until) for r in requests]
        if any(s == "" for until in stops for s in until):
            bad = next(i for i, until in enumerate(stops) if "" in until)
            raise ValueError(f"generate: request {bad}: an empty stop string")
        stop_hook: Any = None
        if isinstance(self.tokenizer, _core.Tokenizer):
            stop_hook = _core.StopStrings(self.tokenizer, stops)  # checked in C++, as below
        elif any(stops):
            # Only the last tokens are decoded, enough to hold the longest stop string (a token gives at least one
            # byte): a stop string this misses only makes its row run on, and the caller cuts at the first one.
            tails = [4 + max((len(s.encode("utf-8")) for s in until), default=0) for until in stops]

            def stop_hook(index: int, ids: List[int]) -> bool:
                until = stops[index]
                return bool(until) and any(s in self.tokenizer.decode(ids[-tails[index]:], False) for s in until)

        native = native_generation_requests(
            [{"prompt": r.prompt, "max_new_tokens": r.max_new_tokens, "stop_ids": self.eos_ids,
              **_generation_settings(self.generation_config, r.sampling, i)} for i, r in enumerate(requests)])
        with self._progress_bar(sum(r.max_new_tokens for r in requests), "generate", unit="token"):
            generations, _ = self._core.generate(native, stop_hook)
        return [self.tokenizer.decode(ids, skip_special_tokens) for ids, _, _ in generations]

    @contextlib.contextmanager
    def _progress_bar(self, total: int, what: str, unit: str = "row") -> Iterator[None]:
        bar = None
        if self.progress and tqdm is not None and total > 0:
            bar = tqdm(total=total, desc=f"prefix-scorer {what}", unit=unit)
        self._relay.bar = bar  # with calls from several threads, the latest bar shows progress (display only)
        try:
            yield
        finally:
            self._relay.bar = None
            if bar is not None:
                bar.close()
