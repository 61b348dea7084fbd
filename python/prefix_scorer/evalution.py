"""Evalution backend: an engine whose sessions score loglikelihood requests on a :class:`PrefixScorer`.

Evalution tokenizes context and continuation separately (no whitespace moves between them): the context gets the
BOS when ``add_bos_token``, the continuation never; an empty context becomes the prefix token.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, List, Optional, Sequence

from .harness import Scorer

try:
    import evalution  # noqa: F401

    HAVE_EVALUTION = True
except ImportError:
    HAVE_EVALUTION = False


@dataclasses.dataclass(frozen=True)
class LoglikelihoodOutput:
    """One request's result."""

    logprob: float
    is_greedy: bool
    token_count: int


def _text_pair(request: Any) -> "tuple[str, str]":
    """A request object with ``context`` and ``continuation``, or a ``(context, continuation)`` pair."""
    if hasattr(request, "context") and hasattr(request, "continuation"):
        return request.context, request.continuation
    context, continuation = request
    return context, continuation


def _text(request: Any) -> str:
    for name in ("text", "context"):
        if hasattr(request, name):
            return getattr(request, name)
    if isinstance(request, str):
        return request
    raise TypeError(f"a rolling request must be text or have .text, got {type(request).__name__}")


class PrefixScorerSession:
    """Scores Evalution requests; prefixes are kept across calls until :meth:`gc` or :meth:`close`."""

    def __init__(self, scorer: Scorer) -> None:
        self._scorer: Optional[Scorer] = scorer

    @property
    def scorer(self) -> Scorer:
        if self._scorer is None:
            raise RuntimeError("this prefix-scorer session is closed")
        return self._scorer

    def loglikelihood(self, requests: Sequence[Any], *, batch_size: Optional[int] = None) -> List[LoglikelihoodOutput]:
        """``batch_size`` is accepted for Evalution's interface; forwards are sized by the scorer's token budget."""
        scorer = self.scorer
        pairs = []
        for context, continuation in map(_text_pair, requests):
            context_ids = scorer.encode(context) if context else [scorer.prefix_token_id]
            pairs.append((context_ids, list(scorer.tokenizer.encode(continuation, False))))
        results = scorer.loglikelihood_tokens(pairs)
        return [LoglikelihoodOutput(lp, greedy, len(cont)) for (lp, greedy), (_, cont) in zip(results, pairs)]

    def loglikelihood_rolling(self, requests: Sequence[Any], *, batch_size: Optional[int] = None) -> List[LoglikelihoodOutput]:
        scorer = self.scorer
        texts = [_text(r) for r in requests]
        scores = scorer.rolling_scores(texts)
        return [LoglikelihoodOutput(lp, greedy, len(scorer.encode(t))) for (lp, greedy), t in zip(scores, texts)]

    def gc(self) -> None:
        """Releases every cached prefix."""
        self.scorer.scorer.clear_cache()

    def close(self) -> None:
        """Releases the cache and the model."""
        if self._scorer is not None:
            self.gc()
            self._scorer = None


class PrefixScorerEngine:
    """Builds sessions on one loaded model: ``PrefixScorerEngine(pretrained, device=..., dtype=...)``."""

    def __init__(self, pretrained: "str | os.PathLike[str]", **kwargs: Any) -> None:
        kwargs.setdefault("keep_cache", True)
        kwargs.setdefault("progress", False)
        self._scorer = Scorer(pretrained, **kwargs)

    def session(self) -> PrefixScorerSession:
        return PrefixScorerSession(self._scorer)
