"""PrefixScorer: exact loglikelihood scoring for LLM evaluation, each shared prefix computed once.

- ``PrefixScorer``: token-level scoring on a native libtorch model (``from_pretrained``).
- ``Tokenizer``, ``encode_pair``: a Hugging Face ``tokenizer.json`` read natively, and lm-evaluation-harness's
  pair encoding.
- ``prefix_scorer.harness.Scorer``: text in, scores out, with lm-evaluation-harness semantics.
- ``prefix_scorer.lm_eval`` and ``prefix_scorer.evalution``: drop-in backends for those harnesses.
- ``build_info()``: what this build was compiled with; ``cmake_prefix_path``: the folder to put in
  ``CMAKE_PREFIX_PATH`` (beside ``torch.utils.cmake_prefix_path``) for ``find_package(prefix_scorer)``.
"""

import json as _json
import os as _os

import torch as _torch  # loads the libtorch that the native module links against

from ._build_config import torch_version as _built_torch, version as __version__
from ._torch_check import check_torch as _check_torch

_check_torch(_built_torch, _torch.__version__)

from ._core import Cancelled, Tokenizer, encode_pair  # noqa: E402
from .scorer import PrefixScorer  # noqa: E402

#: Where the installed CMake package lies (present in a ``pip install``, not in a build tree).
cmake_prefix_path = _os.path.join(_os.path.dirname(__file__), "share", "cmake")


def build_info() -> dict:
    """What this build was compiled with: version, torch, cuda (None in a CPU build), cuda_architectures,
    tokenizer (native tokenizer present), blas and threads (torch's)."""
    from . import _core

    return _json.loads(_core.build_info_json())


__all__ = ["PrefixScorer", "Tokenizer", "encode_pair", "build_info", "cmake_prefix_path", "__version__"]
