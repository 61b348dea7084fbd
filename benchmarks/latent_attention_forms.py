"""Times one latent-attention layer's attention in its two exact forms, in one run, on the shapes a scorer meets:
the expanded form (kv_b_proj applied to every cached latent, then attention over per-head keys and values, as
transformers computes it) and the absorbed form (kv_b_proj folded into the queries and the output, attention over
the latents as one kv head; what src/model/model.cpp runs). Both give the same outputs (checked). Sizes are DeepSeek
V3's per head (latent 512, heads of 128 + 64, values of 128) with fewer heads, which scales both forms alike.

    python benchmarks/latent_attention_forms.py [--heads 16] [--threads 2] [--repeat 5]
"""

import argparse
import time

import torch
import torch.nn.functional as F

KV_RANK, NOPE, ROPE, VALUE = 512, 128, 64, 128


def best_of(repeat, fn):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def expanded(q, latent, key_up, value_up):
    """q [b, h, t, nope + rope]; latent [b, 1, s, kv_rank + rope]; key_up [h, nope, r]; value_up [h, r, v]."""
    kv_nope, k_rope = latent[..., :KV_RANK], latent[..., KV_RANK:]
    heads = key_up.size(0)
    k_nope = torch.matmul(kv_nope, key_up.transpose(1, 2))  # [b, h, s, nope]
    v = torch.matmul(kv_nope, value_up)                      # [b, h, s, value]
    k = torch.cat([k_nope, k_rope.expand(-1, heads, -1, -1)], -1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=q.size(2) == latent.size(2), scale=(NOPE + ROPE) ** -0.5)


def absorbed(q, latent, key_up, value_up):
    heads, t = key_up.size(0), q.size(2)
    query = torch.cat([torch.matmul(q[..., :NOPE], key_up), q[..., NOPE:]], -1)  # [b, h, t, r + rope]
    b = q.size(0)
    folded = query.reshape(b, 1, heads * t, KV_RANK + ROPE)  # the heads as one sequence over one kv head
    if t == latent.size(2):  # a prefill: causal within each head's queries
        mask = torch.ones(t, t, dtype=torch.bool).tril().repeat(heads, 1)
    else:
        mask = None
    out = F.scaled_dot_product_attention(folded, latent, latent, attn_mask=mask, scale=(NOPE + ROPE) ** -0.5)
    return torch.matmul(out.view(b, heads, t, -1)[..., :KV_RANK], value_up)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    h = args.heads
    key_up, value_up = torch.randn(h, NOPE, KV_RANK) * 0.05, torch.randn(h, KV_RANK, VALUE) * 0.05
    # (what, rows, queries a row, cached tokens a row); queries that are not a prefill see every cached token
    shapes = [("decode step, 4 rows after 600 tokens", 4, 1, 601),
              ("decode step, 64 rows after 600 tokens", 64, 1, 601),
              ("scoring: 20 suffix queries over a 600-token prefix", 1, 20, 620),
              ("prefill of 600 tokens", 1, 600, 600)]
    print(f"{h} heads, latent {KV_RANK} + {ROPE}, heads of {NOPE} + {ROPE}, values of {VALUE}; "
          f"{args.threads} threads, best of {args.repeat}")
    print(f"{'shape':<52} {'expanded ms':>12} {'absorbed ms':>12} {'ratio':>7}")
    for what, b, t, s in shapes:
        q = torch.randn(b, h, t, NOPE + ROPE)
        latent = torch.randn(b, 1, s, KV_RANK + ROPE)
        with torch.no_grad():
            a, e = absorbed(q, latent, key_up, value_up), expanded(q, latent, key_up, value_up)
            assert torch.allclose(a, e, atol=1e-4, rtol=1e-4), (what, (a - e).abs().max())
            te = best_of(args.repeat, lambda: expanded(q, latent, key_up, value_up))
            ta = best_of(args.repeat, lambda: absorbed(q, latent, key_up, value_up))
        print(f"{what:<52} {1e3 * te:>12.2f} {1e3 * ta:>12.2f} {te / ta:>6.2f}x")


if __name__ == "__main__":
    main()
