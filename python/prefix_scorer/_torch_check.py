"""Refuses, with a clear ImportError, a torch other than the one the native module was built against."""

from __future__ import annotations


def check_torch(built: str, running: str) -> None:
    """Raises ImportError unless ``running`` (torch.__version__) is the ``built`` one."""
    if built != running:
        raise ImportError(
            f"prefix_scorer was built against torch {built}, but torch {running} is installed: "
            f"reinstall prefix_scorer against it (pip install --no-build-isolation .) or install torch=={built.split('+')[0]}"
        )
