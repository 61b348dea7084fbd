"""Writes the fuzz targets' seed corpora under tests/fuzz/seeds/<target>/ (committed; rerun to remake them):
small valid inputs of every kind each parser reads, for libFuzzer to mutate. Needs safetensors, tokenizers and
torch (the test extra)."""

import json
import pathlib
import shutil
import struct
import sys

import torch
from safetensors.torch import save
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parent / "data"
sys.path.insert(0, str(HERE.parent / "python"))
from test_tokenizer_differential import CORPUS, TRAINING  # noqa: E402


def write(target, name, data):
    path = HERE / "seeds" / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def safetensors_seeds():
    write("fuzz_safetensors_header", "mixed_dtypes", save({
        "f32": torch.arange(6, dtype=torch.float32).reshape(2, 3), "bf16": torch.ones(4, dtype=torch.bfloat16),
        "f16": torch.zeros(2, 2, dtype=torch.float16), "i64": torch.tensor(7), "bool": torch.tensor([True, False]),
        "u8": torch.arange(3, dtype=torch.uint8), "empty": torch.zeros(0, 4)}, metadata={"format": "pt"}))
    header = json.dumps({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}).encode()
    write("fuzz_safetensors_header", "truncated", struct.pack("<Q", len(header)) + header + b"\0" * 8)


def config_seeds():
    for model in sorted((DATA / "models").iterdir()):
        write("fuzz_config_json", model.name, (model / "config.json").read_text())


def small_tokenizers():
    """A byte-fallback tokenizer with Llama 2's normalizer and decoder, and a Metaspace one, both tiny."""
    fallback = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    fallback.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    fallback.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                          decoders.Strip(" ", 1, 0)])
    metaspace = Tokenizer(models.BPE(unk_token="<unk>"))
    metaspace.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    metaspace.decoder = decoders.Metaspace(prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"],
                                  initial_alphabet=[f"<0x{b:02X}>" for b in range(256)])
    for tokenizer in (fallback, metaspace):
        tokenizer.train_from_iterator(TRAINING[:11], trainer=trainer)
    return {"byte_fallback": fallback.to_str(), "metaspace": metaspace.to_str()}


def tokenizer_seeds():
    texts = {"hello": "Hello world, 12 apples!", "scripts": CORPUS[4] + CORPUS[11], "special": CORPUS[21]}
    sources = {"byte_level": (DATA / "tokenizer" / "tokenizer.json").read_text(), **small_tokenizers()}
    for kind, json_text in sources.items():
        for name, text in texts.items():
            write("fuzz_tokenizer_json", f"{kind}_{name}", json_text + "\0" + text)


def encode_seeds():
    for i, text in enumerate(CORPUS):
        write("fuzz_encode", f"corpus_{i:02d}", text[:200] + "\0" + " the end")
    write("fuzz_encode", "invalid_utf8", b"abc\xff\xfe def")


def request_line_seeds():
    lines = {
        "ids": {"context": [1, 2, 3], "continuation": [4]},
        "text": {"context": "Question: 2 + 2 =", "continuation": " 4"},
        "empty_context": {"context": "", "continuation": " yes"},
        "whitespace": {"context": "Answer: ", "continuation": "B"},
    }
    for name, line in lines.items():
        write("fuzz_request_line", name, json.dumps(line, ensure_ascii=False))


if __name__ == "__main__":
    shutil.rmtree(HERE / "seeds", ignore_errors=True)
    safetensors_seeds()
    config_seeds()
    tokenizer_seeds()
    encode_seeds()
    request_line_seeds()
