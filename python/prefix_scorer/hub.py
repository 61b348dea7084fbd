"""Hugging Face hub names (``org/name``) as local checkpoint folders, the way ``huggingface_hub`` lays out its cache.

A name resolves to ``<cache>/models--org--name/snapshots/<commit>``, the commit read from ``refs/<revision>``
(``main`` by default) or given as the revision itself. The cache is ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
``~/.cache/huggingface/hub``. A name the cache lacks is downloaded with ``huggingface_hub`` (weights, configs and
tokenizer files only) when it is installed and ``HF_HUB_OFFLINE`` is not set; otherwise the error says where it
looked.
"""

from __future__ import annotations

import os
import re
from typing import Optional, Tuple

#: What a download fetches: the checkpoint, its configs and its tokenizer, nothing else of the repository.
DOWNLOAD_PATTERNS = ["*.json", "*.safetensors", "*.jinja", "tokenizer*"]


def hub_cache() -> str:
    """The folder huggingface_hub caches models in, from the same variables it reads."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return os.path.join(home, "hub")


def _is_hub_name(name: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", name) is not None and not name.startswith(".")


#: What makes a snapshot complete: its config, and one of its weight files. A model's, and a LoRA adapter's (peft's).
MODEL_FILES = ("config.json", ("model.safetensors", "model.safetensors.index.json"))
ADAPTER_FILES = ("adapter_config.json", ("adapter_model.safetensors",))


def resolve_checkpoint(name: "str | os.PathLike[str]", revision: Optional[str] = None,
                       files: Tuple[str, Tuple[str, ...]] = MODEL_FILES) -> str:
    """A local folder for ``name``: itself when it is a folder (or ``synthetic:NAME``), else its cached snapshot
    (a model's, or with ``files=ADAPTER_FILES`` an adapter's)."""
    name = os.fspath(name)
    if name.startswith("synthetic:") or os.path.exists(name) or not _is_hub_name(name):
        if revision not in (None, "", "main"):
            raise ValueError(f"revision={revision!r} applies to hub names only, not to the folder {name!r}")
        return name
    revision = revision or "main"
    repo = os.path.join(hub_cache(), "models--" + name.replace("/", "--"))
    ref = os.path.join(repo, "refs", revision)
    commit = revision
    if os.path.isfile(ref):
        with open(ref, encoding="utf-8") as f:
            commit = f.read().strip()
    snapshot = os.path.join(repo, "snapshots", commit)
    # A snapshot holds what earlier downloads fetched: a tokenizer's files alone are not a checkpoint.
    config, weights = files
    if os.path.isfile(os.path.join(snapshot, config)) and any(
            os.path.isfile(os.path.join(snapshot, name)) for name in weights):
        return snapshot
    if os.environ.get("HF_HUB_OFFLINE", "0").strip().upper() not in ("1", "ON", "YES", "TRUE"):
        try:
            from huggingface_hub import snapshot_download
        except ImportError:
            snapshot_download = None
        if snapshot_download is not None:
            return snapshot_download(name, revision=revision, allow_patterns=DOWNLOAD_PATTERNS)
    raise FileNotFoundError(
        f"{name!r} (revision {revision!r}) is neither a folder nor in the Hugging Face cache: looked for "
        f"{snapshot}/{config} and {' or '.join(weights)} (cache {hub_cache()}, from HF_HUB_CACHE or HF_HOME); "
        f"download it with huggingface_hub, or pass the checkpoint's folder")
