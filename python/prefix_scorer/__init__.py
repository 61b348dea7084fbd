"""PrefixScorer: exact loglikelihood scoring for LLM evaluation, each shared prefix computed once.

- ``PrefixScorer``: token-level scoring on a native libtorch model (``from_pretrained``).
- ``Tokenizer``, ``encode_pair``: a Hugging Face ``tokenizer.json`` read natively, and lm-evaluation-harness's
  pair encoding.
- ``prefix_scorer.harness.Scorer``: text in, scores out, with lm-evaluation-harness semantics.
- ``prefix_scorer.lm_eval`` and ``prefix_scorer.evalution``: drop-in backends for those harnesses.
"""

from ._core import Tokenizer, encode_pair
from .scorer import PrefixScorer

__all__ = ["PrefixScorer", "Tokenizer", "encode_pair"]
