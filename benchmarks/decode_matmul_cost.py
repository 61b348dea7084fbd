"""What a decode step's matmuls cost on this machine by the tokens the step feeds (rows x (1 + draft tokens)).

    .venv/bin/python benchmarks/decode_matmul_cost.py                    # SmolLM2-135M's shapes, fp32, 2 threads
    .venv/bin/python benchmarks/decode_matmul_cost.py --hidden 2048 --intermediate 8192 --layers 16 --vocab 128256

Times the projections of every layer (q, k and v fused; output; gate and up fused; down) and the LM head on random
weights of the given shapes, for each width, and prints milliseconds a step and a fed token. The drafts' cap on the
tokens a step feeds (``kMostFedWithDrafts``) was chosen from this table (docs/performance.md).
"""

import argparse
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=576)
    parser.add_argument("--kv-width", type=int, default=192, help="kv heads x head dim")
    parser.add_argument("--intermediate", type=int, default=1536)
    parser.add_argument("--layers", type=int, default=30)
    parser.add_argument("--vocab", type=int, default=49152)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--widths", default="1,4,8,12,16,20,24,32,48,64")
    parser.add_argument("--repeats", type=int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    h, inter = args.hidden, args.intermediate
    weights = []
    for _ in range(args.layers):
        weights += [torch.randn(h + 2 * args.kv_width, h), torch.randn(h, h), torch.randn(2 * inter, h),
                    torch.randn(h, inter)]
    head = torch.randn(args.vocab, h)

    def step(width):
        x, wide = torch.randn(width, h), torch.randn(width, inter)
        for i, w in enumerate(weights):
            torch.nn.functional.linear(wide if i % 4 == 3 else x, w)
        torch.nn.functional.linear(x, head)

    print("fed tokens | ms a step | ms a fed token")
    for width in (int(w) for w in args.widths.split(",")):
        step(width)
        start = time.perf_counter()
        for _ in range(args.repeats):
            step(width)
        seconds = (time.perf_counter() - start) / args.repeats
        print(f"{width:10d} | {seconds * 1e3:9.1f} | {seconds * 1e3 / width:14.2f}")


if __name__ == "__main__":
    main()
