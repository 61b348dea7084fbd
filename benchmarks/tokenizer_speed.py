"""Encodes one text file with HF tokenizers and with prefix_scorer's native tokenizer, in one run, and prints
bytes/s for each and the ratio. Both must give the same ids (checked).

    python benchmarks/tokenizer_speed.py FILE [--tokenizer tokenizer.json] [--repeat N]

Two ways: the whole file as one string, single-threaded on both sides; and the file's lines as a batch (HF's
encode_batch on all its threads, the native tokenizer line by line on one thread).
"""

import argparse
import pathlib
import time

import tokenizers

import prefix_scorer

DEFAULT_TOKENIZER = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "tokenizer" / "tokenizer.json"


def best_of(repeat, fn):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=pathlib.Path)
    parser.add_argument("--tokenizer", type=pathlib.Path, default=DEFAULT_TOKENIZER)
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings")
    args = parser.parse_args()

    text = args.file.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines(keepends=True) if line]
    size = len(text.encode("utf-8"))
    hf = tokenizers.Tokenizer.from_file(str(args.tokenizer))
    native = prefix_scorer.Tokenizer.from_file(args.tokenizer)

    hf_whole, hf_ids = best_of(args.repeat, lambda: hf.encode(text, add_special_tokens=False).ids)
    native_whole, native_ids = best_of(args.repeat, lambda: native.encode(text, False))
    if native_ids != hf_ids:
        raise SystemExit("the native ids differ from HF's on the whole file")
    hf_batch, hf_lines = best_of(args.repeat, lambda: [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)])
    native_batch, native_lines = best_of(args.repeat, lambda: [native.encode(line, False) for line in lines])
    if native_lines != hf_lines:
        raise SystemExit("the native ids differ from HF's on the lines")

    print(f"{args.file}: {size / 1e6:.2f} MB, {len(hf_ids)} tokens, {len(lines)} lines; tokenizer {args.tokenizer}")
    print(f"{'':26} {'HF MB/s':>9} {'native MB/s':>12} {'native / HF':>12}")
    for name, hf_s, native_s in (("whole file, one thread", hf_whole, native_whole),
                                 ("lines (HF: all threads)", hf_batch, native_batch)):
        print(f"{name:26} {size / 1e6 / hf_s:9.2f} {size / 1e6 / native_s:12.2f} {hf_s / native_s:11.2f}x")


if __name__ == "__main__":
    main()
