"""Evalution backend: ``prefix_scorer.evalution.PrefixScorer``, an Evalution engine whose sessions score
loglikelihood requests and generate on a :class:`prefix_scorer.PrefixScorer`.

    from prefix_scorer.evalution import PrefixScorer
    run = PrefixScorer(device="cuda", dtype="bfloat16").model(path="/models/llama")
    run.run(evalution.benchmarks.MMLU())

Requests are tokenized as Evalution's Transformers engine tokenizes them: the context with the tokenizer's default
special tokens (none when it already starts with the BOS text), the continuation without; an empty context becomes
the prefix token (BOS, else EOS); a continuation longer than the model's window is scored in windows that keep the
latest context, as that engine does. Pre-tokenized ids (``context_input_ids``, ``continuation_input_ids``,
``input_ids``) are used as given.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from evalution.engines.base import (
    BaseEngine,
    BaseInferenceSession,
    GenerationOutput,
    GenerationRequest,
    LoglikelihoodOutput,
    LoglikelihoodRequest,
    RollingLoglikelihoodOutput,
    RollingLoglikelihoodRequest,
)

from . import _core
from .harness import GenerationText, Scorer, batch_size_options, default_device
from .scorer import checkpoint_json, native_refusal

@dataclasses.dataclass
class PrefixScorer(BaseEngine):
    """Engine controls, as Evalution's own engines take them.

    ``device``: ``None`` takes ``cuda:0`` when a GPU is visible, else the CPU. ``dtype``: ``"auto"`` keeps the
    checkpoint's. ``batch_size``: a memory hint, as lm-eval's (``harness.batch_size_options``): N > 1 caps a forward
    at N * 512 padded tokens, not at N rows; ``"auto"`` keeps the scorer's own budget. ``max_length``: the scoring
    window (default: the model's ``max_position_embeddings``).
    ``keep_cache`` keeps prefixes across calls until the session's ``gc()``; ``min_prefix_len``, ``max_cache_bytes``
    and ``options`` (any other :meth:`prefix_scorer.PrefixScorer.from_pretrained` option) tune the cache.
    """

    device: Optional[str] = None
    dtype: Optional[str] = "auto"
    batch_size: Any = "auto"
    max_length: Optional[int] = None
    keep_cache: bool = True
    min_prefix_len: Optional[int] = None
    max_cache_bytes: Optional[int] = None
    options: Dict[str, Any] = dataclasses.field(default_factory=dict)
    native_only: bool = False

    def build(self, model: Any) -> BaseInferenceSession:
        """A session on ``model`` (``evalution.config.Model``): its ``path``, and ``tokenizer_path`` or ``path`` for
        the tokenizer; ``tokenizer_kwargs`` may set ``add_bos_token``. A model_type the native engine lacks is served
        by Evalution's Transformers engine (one warning, prefix reuse off, ``engine: transformers`` in the execution
        description), unless ``native_only`` asks for a refusal."""
        refusal = native_refusal(model.path)
        if refusal is not None:
            if self.native_only:
                raise ValueError(f"{refusal} is not one prefix-scorer runs natively (native_only=True)")
            warnings.warn(f"prefix-scorer does not run {refusal} natively: Evalution's Transformers "
                          "engine serves it, without prefix reuse")
            from evalution.engines.transformers import Transformers

            batch_size = 1 if self.batch_size in (None, "auto") else int(self.batch_size)
            engine = Transformers(device=self.device or default_device(), dtype=self.dtype, batch_size=batch_size)
            return TransformersFallbackSession(engine.build(model))
        tokenizer_kwargs = dict(getattr(model, "tokenizer_kwargs", None) or {})
        add_bos_token = tokenizer_kwargs.pop("add_bos_token", None)
        tokenizer_path = getattr(model, "tokenizer_path", None)
        # Evalution's window: the smaller of the model's max_position_embeddings and the tokenizer's model_max_length.
        window = self.max_length
        tokenizer_length = tokenizer_kwargs.pop("model_max_length", None) or _real_length(
            checkpoint_json(tokenizer_path or model.path, "tokenizer_config.json").get("model_max_length"))
        config = checkpoint_json(model.path, "config.json")  # GPT-2 names it n_positions
        model_length = _real_length(config.get("max_position_embeddings", config.get("n_positions")))
        if window is None and tokenizer_length is not None and (model_length is None or tokenizer_length < model_length):
            window = int(tokenizer_length)
        ignored = sorted(set(tokenizer_kwargs) | set(getattr(model, "model_kwargs", None) or {}))
        if getattr(model, "tokenizer", None) is not None:
            ignored.append("tokenizer (an object: give tokenizer_path)")
        if ignored:
            warnings.warn(f"prefix-scorer ignores {', '.join(ignored)}")
        options = dict(self.options)
        for name in ("min_prefix_len", "max_cache_bytes"):
            if getattr(self, name) is not None:
                options[name] = getattr(self, name)
        options.update(batch_size_options(self.batch_size))
        device = self.device or default_device()
        scorer = Scorer(model.path, device=device, dtype=self.dtype, max_length=window,
                        add_bos_token=add_bos_token, tokenizer=tokenizer_path, progress=False,
                        keep_cache=self.keep_cache, **options)
        return PrefixScorerSession(scorer, {"engine": "prefix-scorer", "device": device, "dtype": self.dtype})


class TransformersFallbackSession(BaseInferenceSession):
    """Evalution's Transformers session, serving a model_type prefix-scorer does not run natively: every call goes
    to it, and its execution description says which engine served."""

    def __init__(self, session: BaseInferenceSession) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:  # what else the Transformers session offers (prepare_requests, ...)
        return getattr(self._session, name)

    @property
    def request_executor_requires_non_main_thread(self) -> bool:
        return self._session.request_executor_requires_non_main_thread

    def loglikelihood(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.loglikelihood(*args, **kwargs)

    def loglikelihood_continuous(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.loglikelihood_continuous(*args, **kwargs)

    def loglikelihood_rolling(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.loglikelihood_rolling(*args, **kwargs)

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.generate(*args, **kwargs)

    def generate_continuous(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.generate_continuous(*args, **kwargs)

    def gc(self) -> None:
        self._session.gc()

    def close(self) -> None:
        self._session.close()

    def describe_execution(self) -> Dict[str, Any]:
        return {**(self._session.describe_execution() or {}), "engine": "transformers"}


def _real_length(value: Any) -> Optional[int]:
    """A length, unless absent or the huge number transformers writes for "none" (as Evalution reads them)."""
    return int(value) if isinstance(value, (int, float)) and 1 < value < 1_000_000 else None


class PrefixScorerSession(BaseInferenceSession):
    """Scores an engine's requests; cached prefixes live until :meth:`gc`, the model until :meth:`close`."""

    def __init__(self, scorer: Scorer, execution: Dict[str, Any]) -> None:
        self._scorer: Optional[Scorer] = scorer
        self._execution = execution
        self._chat_tokenizer: Any = None  # transformers' tokenizer, for chat templates only, loaded on first use
        self._template_defaults: Dict[str, Any] = {}

    @property
    def scorer(self) -> Scorer:
        if self._scorer is None:
            raise RuntimeError("this prefix-scorer session is closed")
        return self._scorer

    @property
    def request_executor_requires_non_main_thread(self) -> bool:
        return False  # the native scorer releases the GIL in its forwards and holds no thread of its own

    def loglikelihood(self, requests: List[LoglikelihoodRequest], *,
                      batch_size: Optional[int] = None) -> List[LoglikelihoodOutput]:
        """One output per request, in order; ``batch_size`` is Evalution's, the scorer sizes its own forwards."""
        scorer = self.scorer
        pairs: List[Tuple[List[int], List[int]]] = []
        owner: List[int] = []  # the request each scored window belongs to
        targets = []
        for i, request in enumerate(requests):
            context, target = self._encode(request, i)
            targets.append(target)
            for pair in _core.windows_after(context or [scorer.prefix_token_id], target, scorer.max_length):
                pairs.append(pair)
                owner.append(i)
        sums = [0.0] * len(requests)
        greedy = [True] * len(requests)
        for i, (logprob, is_greedy) in zip(owner, scorer.loglikelihood_tokens(pairs)):
            sums[i] += logprob
            greedy[i] = greedy[i] and is_greedy
        return [LoglikelihoodOutput(logprob=sums[i], is_greedy=greedy[i], token_count=len(targets[i]),
                                    metadata=dict(request.metadata)) for i, request in enumerate(requests)]

    def loglikelihood_continuous(self, requests: Iterable[Tuple[Any, LoglikelihoodRequest]], *,
                                 batch_size: Optional[int] = None) -> Iterator[Tuple[Any, LoglikelihoodOutput]]:
        """``(request id, output)`` for every request submitted; all are scored together, so that the ones sharing
        a prefix share its computation."""
        items = list(requests)
        outputs = self.loglikelihood([request for _, request in items], batch_size=batch_size)
        for (request_id, _), output in zip(items, outputs):
            yield request_id, output

    def loglikelihood_rolling(self, requests: List[RollingLoglikelihoodRequest], *,
                              batch_size: Optional[int] = None) -> List[RollingLoglikelihoodOutput]:
        """Each text's summed logprob over lm-evaluation-harness's disjoint windows, from the prefix token."""
        scorer = self.scorer
        documents = [list(r.input_ids) if r.input_ids is not None else scorer.encode(r.text) for r in requests]
        scores = scorer.rolling_token_scores(documents)
        return [RollingLoglikelihoodOutput(logprob=logprob, token_count=len(document), metadata=dict(r.metadata))
                for (logprob, _), document, r in zip(scores, documents, requests)]

    def generate(self, requests: List[GenerationRequest], *, batch_size: Optional[int] = None) -> List[GenerationOutput]:
        """As Evalution's Transformers engine generates: the prompt is ``input_ids`` when given, else
        ``rendered_prompt``, else ``prompt``, encoded without special tokens; generation ends at the model's EOS ids,
        a stop string or ``max_new_tokens``; the text is decoded with special tokens, cut at the earliest stop string
        and stripped. Chat ``messages`` render through the checkpoint's chat template as that engine renders them
        (transformers' tokenizer, the checkpoint's default template variables, then the request's). Beam search is
        refused by name."""
        scorer = self.scorer
        prepared, rendered = [], []
        for index, request in enumerate(requests):
            what = f"generation request {index}"
            if request.num_beams > 1:
                raise ValueError(f"{what}: num_beams={request.num_beams}; prefix-scorer does not run beam search")
            if request.rendered_prompt is not None:
                text = request.rendered_prompt
            elif request.messages is not None:
                text = self._render_chat(request)
            elif request.prompt is not None:
                text = request.prompt
            elif request.input_ids is None:
                raise ValueError(f"{what}: generation requests must define either `prompt` or `messages`")
            else:
                text = ""
            ids = list(request.input_ids) if request.input_ids is not None else list(scorer.tokenizer.encode(text, False))
            sampling = ({"do_sample": True, "temperature": request.temperature, "seed": index}
                        if request.do_sample else {"do_sample": False})
            prepared.append(GenerationText(ids, [s for s in request.stop if s], request.max_new_tokens, sampling))
            rendered.append(text)
        texts = scorer.generate(prepared, skip_special_tokens=False)
        return [GenerationOutput(prompt=prompt, text=_cut_at_stop(text, request.stop).strip(),
                                 metadata=request.metadata)
                for prompt, text, request in zip(rendered, texts, requests)]

    def generate_continuous(self, requests: Iterable[Tuple[Any, GenerationRequest]], *,
                            batch_size: Optional[int] = None) -> Iterator[Tuple[Any, GenerationOutput]]:
        """``(request id, output)`` for every request submitted; all run together, so that the ones sharing a
        prefix share its computation and rows join the running batch as others stop."""
        items = list(requests)
        outputs = self.generate([request for _, request in items], batch_size=batch_size)
        for (request_id, _), output in zip(items, outputs):
            yield request_id, output

    def _render_chat(self, request: GenerationRequest) -> str:
        if self._chat_tokenizer is None:
            from transformers import AutoTokenizer, GenerationConfig

            self._chat_tokenizer = AutoTokenizer.from_pretrained(self.scorer.tokenizer_source)
            try:
                generation_config = GenerationConfig.from_pretrained(self.scorer.pretrained)
            except OSError:  # no generation_config.json
                generation_config = None
            defaults = getattr(generation_config, "default_chat_template_kwargs", None)
            self._template_defaults = dict(defaults) if isinstance(defaults, dict) else {}
        kwargs = {**self._template_defaults, "tokenize": False, "add_generation_prompt": request.add_generation_prompt}
        kwargs.update(request.chat_template_kwargs or {})
        if request.tools:
            kwargs["tools"] = request.tools
        return self._chat_tokenizer.apply_chat_template(request.messages, **kwargs)

    def gc(self) -> None:
        """Releases every cached prefix."""
        self.scorer.clear_cache()

    def close(self) -> None:
        """Releases the cache and the model; later calls raise."""
        if self._scorer is not None:
            self.gc()
            self._scorer = None

    def describe_execution(self) -> Dict[str, Any]:
        """The engine, device and dtype, the window, the BOS rule, and the cache statistics so far."""
        scorer = self.scorer
        return {**self._execution, "max_length": scorer.max_length, "add_bos_token": scorer.add_bos_token,
                "cache": dict(scorer.stats)}

    def _encode(self, request: LoglikelihoodRequest, index: int) -> Tuple[List[int], List[int]]:
        scorer = self.scorer
        if request.context_input_ids is not None:
            context = list(request.context_input_ids)
        else:
            context = scorer.encode(request.context) if request.context else []
        if request.continuation_input_ids is not None:
            target = list(request.continuation_input_ids)
        else:
            target = list(scorer.tokenizer.encode(request.continuation, False)) if request.continuation else []
        if not target:
            raise ValueError(f"loglikelihood request {index}: the continuation is empty")
        return context, target


def _cut_at_stop(text: str, stops: List[str]) -> str:
    """``text`` up to the earliest of the stop strings it contains."""
    cuts = [text.find(stop) for stop in stops if stop and stop in text]
    return text[:min(cuts)] if cuts else text
