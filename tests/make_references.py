"""Makes the golden fixtures under tests/data/models/: for each model family a tiny random-weight checkpoint,
saved by Hugging Face transformers, and the numbers transformers computes for it in fp32 with eager attention.

    .venv/bin/python tests/make_references.py            # every family
    .venv/bin/python tests/make_references.py gemma2     # some
    .venv/bin/python tests/make_references.py gated_delta_rule  # a kernel's references (kernels/NAME.safetensors)
    .venv/bin/python tests/make_references.py split_noise nemotron_h  # record_split_noise on a made fixture

Each model's norm weights and biases are drawn away from their initial values, so that a missing (1 + w), a
skipped norm or a dropped bias changes the numbers. Written per family:
- config.json, model.safetensors, generation_config.json: save_pretrained's output;
- tokenizer.json, tokenizer_config.json: the byte-level BPE tokenizer of tests/data/tokenizer;
- expected_logits.safetensors: tokens_i (int64) and logits_i (float32 [len, vocab]) of one forward each, lengths
  1, 7, 33, 70 and 150 (longer than every sliding window here);
- expected_loglikelihood.json: transformers' own bf16 argmax agreement with fp32 on the 150-token sequence, and text
  pairs scored the way lm-evaluation-harness's HF backend scores them
  (add_bos_token off): trailing whitespace of the context moves to the continuation, the pair is encoded whole and
  the context alone, an empty context becomes the tokenizer's BOS. Beside the fixed pairs of PAIRS, greedy rows:
  the model's own argmax continuation (GREEDY_LENGTHS tokens) of a context, decoded to text, kept where the text
  encodes back to the same tokens, so that is_greedy is checked true as well as false.
"""

import json
import pathlib
import shutil
import sys

import safetensors.torch
import torch
import transformers
from safetensors.torch import save_file
from tokenizers import Tokenizer

DATA = pathlib.Path(__file__).resolve().parent / "data"
VOCAB = 512  # the tokenizer has 500 tokens; ids 500-511 are unused
COMMON = dict(vocab_size=VOCAB, hidden_size=64, max_position_embeddings=2048, bos_token_id=0, eos_token_id=2)

FAMILIES = {
    "llama3": dict(model_type="llama", intermediate_size=160, num_hidden_layers=3, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5, tie_word_embeddings=True,
                   rope_parameters=dict(rope_type="llama3", rope_theta=500000.0, factor=32.0, low_freq_factor=1.0,
                                        high_freq_factor=4.0, original_max_position_embeddings=64)),
    "qwen2": dict(model_type="qwen2", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, rms_norm_eps=1e-6, tie_word_embeddings=True,
                  rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    "qwen3": dict(model_type="qwen3", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6, tie_word_embeddings=True,
                  rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    "mistral": dict(model_type="mistral", intermediate_size=192, num_hidden_layers=2, num_attention_heads=8,
                    num_key_value_heads=2, head_dim=8, rms_norm_eps=1e-5, tie_word_embeddings=False,
                    sliding_window=16, rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    "gemma": dict(model_type="gemma", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=1, head_dim=16, rms_norm_eps=1e-6, hidden_act="gelu_pytorch_tanh",
                  rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    "gemma2": dict(model_type="gemma2", intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6, query_pre_attn_scalar=24,
                   attn_logit_softcapping=0.05, final_logit_softcapping=0.5, sliding_window=16,
                   rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    "gemma3_text": dict(model_type="gemma3_text", intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                        num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6, query_pre_attn_scalar=24,
                        sliding_window=16, final_logit_softcapping=0.5,
                        layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"],
                        rope_parameters=dict(full_attention=dict(rope_type="linear", factor=8.0, rope_theta=1e6),
                                             sliding_attention=dict(rope_type="default", rope_theta=10000.0))),
    "olmo2": dict(model_type="olmo2", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, rms_norm_eps=1e-6, tie_word_embeddings=False,
                  rope_parameters=dict(rope_type="default", rope_theta=500000.0)),
    # OLMo 3: olmo2's norms, windows of 16 on layers 0-2, a full layer 3 with its own (linear-scaled) rope.
    "olmo3": dict(model_type="olmo3", intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                  num_key_value_heads=2, rms_norm_eps=1e-6, tie_word_embeddings=False, sliding_window=16,
                  rope_parameters=dict(full_attention=dict(rope_type="linear", factor=2.0, rope_theta=500000.0),
                                       sliding_attention=dict(rope_type="default", rope_theta=500000.0))),
    # SmolLM3: every second layer without rope, those layers sliding (windows of 16), biases everywhere.
    "smollm3": dict(model_type="smollm3", intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=2, rms_norm_eps=1e-6, no_rope_layer_interval=2, use_sliding_window=True,
                    sliding_window=16, attention_bias=True, mlp_bias=True, pad_token_id=None,
                    rope_parameters=dict(rope_type="default", rope_theta=2e6)),
    "granite": dict(model_type="granite", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, rms_norm_eps=1e-6, tie_word_embeddings=True, attention_multiplier=0.3,
                    embedding_multiplier=6.0, residual_multiplier=0.5, logits_scaling=0.25,
                    rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    "phi3": dict(model_type="phi3", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, rms_norm_eps=1e-5, tie_word_embeddings=False, sliding_window=24,
                 pad_token_id=None, rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    # Phi-3.5 / Phi-4-mini style: longrope (short factors up to 40 tokens, long ones beyond) over 3/4 of each head.
    "phi3_longrope": dict(model_type="phi3", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, rms_norm_eps=1e-5, tie_word_embeddings=False, pad_token_id=None,
                          original_max_position_embeddings=40,
                          rope_parameters=dict(rope_type="longrope", rope_theta=10000.0, partial_rotary_factor=0.75,
                                               short_factor=[1.0, 1.02, 1.05, 1.1, 1.2, 1.3],
                                               long_factor=[1.0, 1.5, 3.0, 6.0, 12.0, 25.0])),
    # StarCoder 2: LayerNorm with biases, an ungated GELU MLP (c_fc, c_proj), biases everywhere, windows of 16.
    "starcoder2": dict(model_type="starcoder2", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, norm_epsilon=1e-5, use_bias=True, sliding_window=16,
                       tie_word_embeddings=True, rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    # Phi-2: attention and MLP in parallel on one LayerNorm, half of each head rotated, biases everywhere (lm_head too).
    "phi": dict(model_type="phi", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=4, layer_norm_eps=1e-5, hidden_act="gelu_new", tie_word_embeddings=False,
                rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5)),
    # Pythia / GPT-NeoX: its own tensor names, q/k/v fused by head, attention and MLP in parallel on their own
    # LayerNorms, a quarter of each head rotated, biases everywhere but the untied embed_out.
    "gpt_neox": dict(model_type="gpt_neox", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                     layer_norm_eps=1e-5, hidden_act="gelu", tie_word_embeddings=False, use_parallel_residual=True,
                     seed=1,
                     rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.25)),
    # GPT-2: learned absolute positions, Conv1D projections stored [in, out] (q, k, v fused in c_attn), LayerNorms
    # with biases, gelu_new, tied embeddings; its own config keys (n_embd, n_layer, ... mapped from these names).
    "gpt2": dict(model_type="gpt2", n_inner=128, num_hidden_layers=2, num_attention_heads=4, layer_norm_epsilon=1e-5,
                 activation_function="gelu_new", seed=1, max_position_embeddings=256),
    # Gemma 4: heads of 12 on sliding layers, 20 (and one KV head whose keys are the values) on full ones, the
    # proportional rope rotating 2 of their 10 frequencies, KV shared by the last two layers (their MLPs twice as
    # wide), per-layer inputs of 8, a scalar per layer.
    "gemma4_text": dict(model_type="gemma4_text", intermediate_size=80, num_hidden_layers=5, num_attention_heads=4,
                        num_key_value_heads=2, head_dim=12, global_head_dim=20, num_global_key_value_heads=1,
                        attention_k_eq_v=True, num_kv_shared_layers=2, use_double_wide_mlp=True,
                        hidden_size_per_layer_input=8, vocab_size_per_layer_input=VOCAB, sliding_window=16, seed=3,
                        final_logit_softcapping=2.0, rms_norm_eps=1e-6, pad_token_id=0,
                        layer_types=["sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
                                     "full_attention"],
                        rope_parameters=dict(
                            sliding_attention=dict(rope_type="default", rope_theta=10000.0),
                            full_attention=dict(rope_type="proportional", partial_rotary_factor=0.25,
                                                rope_theta=1e6))),
    # Gemma 4's MoE (26B-A4B-like): 6 experts (2 a token) beside every layer's dense MLP, a router on the normed
    # residual with learned input and per-expert scales; keys as values on the full layers, no per-layer inputs.
    "gemma4_moe": dict(model_type="gemma4_text", intermediate_size=72, num_hidden_layers=3, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=14, global_head_dim=18, num_global_key_value_heads=1,
                       attention_k_eq_v=True, num_kv_shared_layers=0, hidden_size_per_layer_input=0,
                       enable_moe_block=True, num_experts=6, top_k_experts=2, moe_intermediate_size=24,
                       sliding_window=16, rms_norm_eps=1e-6, pad_token_id=0,
                       layer_types=["sliding_attention", "sliding_attention", "full_attention"]),
    # Seed-OSS: biases on q, k, v (attention_bias) and on o (its own attention_out_bias), heads of 24.
    "seed_oss": dict(model_type="seed_oss", intermediate_size=112, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=24, attention_bias=True, attention_out_bias=True,
                     rms_norm_eps=1e-6, tie_word_embeddings=False,
                     rope_parameters=dict(rope_type="default", rope_theta=1e7)),
    # EXAONE 4: output norms only, q/k norms per head, windows of 16 on layers 0 and 1 (the pattern as released, a
    # string beside layer_types), no rope on the full layer, heads of 20.
    "exaone4": dict(model_type="exaone4", intermediate_size=88, num_hidden_layers=3, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=20, rms_norm_eps=1e-5, tie_word_embeddings=False,
                    sliding_window=16, sliding_window_pattern="LLG",
                    layer_types=["sliding_attention", "sliding_attention", "full_attention"],
                    rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # HunYuan dense: q/k norms per head after the rotation, the NTK-alpha rope (dynamic with alpha 1000), heads of 18.
    "hunyuan_v1_dense": dict(model_type="hunyuan_v1_dense", intermediate_size=100, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=18, rms_norm_eps=1e-5,
                             tie_word_embeddings=False,
                             rope_parameters=dict(rope_type="dynamic", alpha=1000.0, factor=1.0, rope_theta=10000.0)),
    # ERNIE 4.5: the rope over interleaved pairs, biases on every projection (use_bias), heads of 22, tied.
    "ernie4_5": dict(model_type="ernie4_5", intermediate_size=104, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=22, use_bias=True, rms_norm_eps=1e-5,
                     rope_parameters=dict(rope_type="default", rope_theta=500000.0)),
    # Apertus: an ungated MLP through xIELU (its alpha_p and alpha_n drawn per layer), per-head q/k norms, its own
    # norm names, Llama 3's rope (factor 8 from 64 positions), heads of 26.
    "apertus": dict(model_type="apertus", intermediate_size=136, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=26, rms_norm_eps=1e-5, tie_word_embeddings=False,
                    rope_parameters=dict(rope_type="llama3", rope_theta=12000000.0, factor=8.0,
                                         original_max_position_embeddings=64, low_freq_factor=1.0,
                                         high_freq_factor=4.0)),
    # Apertus 1.5 as released: the multimodal wrapper (a tiny vision tokenizer and WavTokenizer encoder beside the
    # text model, their codes at ids 500-511) whose Apertus text model's output layer is pruned to the 500 text ids.
    "apertus1p5": dict(model_type="apertus1p5", image_token_offset=500, audio_token_offset=506, image_token_id=497,
                       audio_token_id=498,
                       text_config=dict(intermediate_size=120, num_hidden_layers=2, num_attention_heads=4,
                                        num_key_value_heads=2, head_dim=18, output_vocab_size=500, pad_token_id=3,
                                        rms_norm_eps=1e-5, tie_word_embeddings=False),
                       vision_config=dict(codebook_size=6, embed_dim=8, latent_channels=32, base_channels=32,
                                          channel_multiplier=[1, 2], num_res_blocks=1, attn_resolutions=[],
                                          resolution=32),
                       audio_config=dict(model_type="wavtokenizer_encoder", num_filters=4, upsampling_ratios=[2, 2],
                                         hidden_size=8, codebook_size=6, codebook_dim=8, decoder_hidden_size=8,
                                         decoder_intermediate_size=8, num_lstm_layers=1,
                                         decoder_attention_num_groups=4)),
    # gpt-oss: attention sinks, windows of 16 on even layers, YaRN (from 64 positions), q/k/v/o biases, experts stacked
    # with gate and up interleaved and biases, router with a bias, softmax over the chosen logits, a clamped SwiGLU
    # whose limit (0.1) the tiny weights reach.
    "gpt_oss": dict(model_type="gpt_oss", intermediate_size=32, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5, num_local_experts=4, num_experts_per_tok=2,
                    sliding_window=16, swiglu_limit=0.1, tie_word_embeddings=False,
                    rope_parameters=dict(rope_type="yarn", rope_theta=150000.0, factor=32.0, beta_fast=32.0,
                                         beta_slow=1.0, truncate=False, original_max_position_embeddings=64)),
    # Multimodal checkpoints: the text model is what is scored; a tiny vision tower is saved beside it, not loaded.
    "gemma3": dict(model_type="gemma3", mm_tokens_per_image=4, boi_token_index=500, eoi_token_index=501,
                   image_token_index=502,
                   text_config=dict(model_type="gemma3_text", intermediate_size=128, num_hidden_layers=2,
                                    num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6,
                                    query_pre_attn_scalar=24, sliding_window=16,
                                    layer_types=["sliding_attention", "full_attention"]),
                   vision_config=dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2, image_size=28, patch_size=14)),
    # Gemma 4 as released: the multimodal wrapper (a tiny vision tower beside it, no audio tower), its text model
    # like the 31B's: no per-layer inputs, no KV sharing, values of their own, wider full-attention heads.
    "gemma4": dict(model_type="gemma4", audio_config=None,
                   text_config=dict(model_type="gemma4_text", intermediate_size=96, num_hidden_layers=3,
                                    num_attention_heads=4, num_key_value_heads=2, head_dim=10, global_head_dim=14,
                                    attention_k_eq_v=False, num_kv_shared_layers=0, hidden_size_per_layer_input=0,
                                    sliding_window=16, rms_norm_eps=1e-6, pad_token_id=0,
                                    layer_types=["sliding_attention", "full_attention", "sliding_attention"]),
                   vision_config=dict(model_type="gemma4_vision", hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2, head_dim=8)),
    # Gemma 4 12B (gemma4_unified, saved whole): gemma4_text's layers without per-layer inputs or MoE; values are
    # the keys on the full layers (heads of 22, one kv head), the last layer reads layer 1's keys and values, a
    # double-wide MLP there, windows of 16 on layer 0; sliding heads of 14.
    "gemma4_unified": dict(model_type="gemma4_unified", audio_config=None,
                           text_config=dict(model_type="gemma4_unified_text", intermediate_size=88,
                                            num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                                            head_dim=14, global_head_dim=22, num_global_key_value_heads=1,
                                            attention_k_eq_v=True, num_kv_shared_layers=1, use_double_wide_mlp=True,
                                            sliding_window=16, final_logit_softcapping=2.0, rms_norm_eps=1e-6,
                                            pad_token_id=0,
                                            layer_types=["sliding_attention", "full_attention", "full_attention"]),
                           vision_config=dict(model_type="gemma4_unified_vision", patch_size=2, pooling_kernel_size=2,
                                              mm_embed_dim=16, output_proj_dims=16, mm_posemb_size=8)),
    "mistral3": dict(model_type="mistral3", image_token_index=502, spatial_merge_size=2, vision_feature_layer=-1,
                     text_config=dict(model_type="mistral", intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5,
                                      tie_word_embeddings=False, sliding_window=None,
                                      rope_parameters=dict(rope_type="default", rope_theta=1e6)),
                     vision_config=dict(model_type="pixtral", hidden_size=16, intermediate_size=32,
                                        num_hidden_layers=1, num_attention_heads=2, head_dim=8, image_size=28,
                                        patch_size=14)),
    # Ministral 3 as published: a mistral3 checkpoint whose text model is a ministral3 (YaRN, and queries scaled by
    # 1 + beta ln(1 + floor(position / 16)) here, so that every fixture past 16 tokens has them scaled).
    "ministral3": dict(model_type="mistral3", image_token_index=502, spatial_merge_size=2, vision_feature_layer=-1,
                       text_config=dict(model_type="ministral3", intermediate_size=128, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5,
                                        tie_word_embeddings=False, sliding_window=None,
                                        rope_parameters=dict(rope_type="yarn", rope_theta=1e6, factor=16.0,
                                                             original_max_position_embeddings=16, beta_fast=32.0,
                                                             beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0,
                                                             llama_4_scaling_beta=0.5)),
                       vision_config=dict(model_type="pixtral", hidden_size=16, intermediate_size=32,
                                          num_hidden_layers=1, num_attention_heads=2, head_dim=8, image_size=28,
                                          patch_size=14)),
    "mixtral": dict(model_type="mixtral", intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, rms_norm_eps=1e-5, tie_word_embeddings=False, num_local_experts=4,
                    num_experts_per_tok=2, rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    "qwen2_moe": dict(model_type="qwen2_moe", intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                      num_key_value_heads=2, rms_norm_eps=1e-6, tie_word_embeddings=False, num_experts=6,
                      num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=48,
                      norm_topk_prob=False, mlp_only_layers=[1], rope_parameters=dict(rope_type="default",
                                                                                      rope_theta=1e6)),
    "qwen3_moe": dict(model_type="qwen3_moe", intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6, tie_word_embeddings=False,
                      num_experts=8, num_experts_per_tok=3, moe_intermediate_size=32, norm_topk_prob=True,
                      rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # Qwen 3.5's text model: Gated DeltaNet layers (2 q/k heads of 12 serving 4 value heads of 10, 4 taps) around
    # one full-attention layer (heads of 24, a quarter rotated, an output gate), (1 + w) norms.
    "qwen3_5_text": dict(model_type="qwen3_5_text", intermediate_size=88, num_hidden_layers=4, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=24, linear_num_key_heads=2, linear_num_value_heads=4,
                         linear_key_head_dim=12, linear_value_head_dim=10, linear_conv_kernel_dim=4,
                         layer_types=["linear_attention", "full_attention", "linear_attention", "linear_attention"],
                         rms_norm_eps=1e-6, tie_word_embeddings=False,
                         rope_parameters=dict(rope_type="default", rope_theta=1e7, partial_rotary_factor=0.25)),
    # Qwen 3.5 as released: the multimodal wrapper (a tiny vision tower) around a text model like the one above but
    # its own sizes (3 q/k heads of 8 serving 6 value heads of 6, 3 taps; heads of 20).
    "qwen3_5": dict(model_type="qwen3_5",
                    text_config=dict(intermediate_size=72, num_hidden_layers=3, num_attention_heads=4,
                                     num_key_value_heads=1, head_dim=20, linear_num_key_heads=3,
                                     linear_num_value_heads=6, linear_key_head_dim=8, linear_value_head_dim=6,
                                     linear_conv_kernel_dim=3, layer_types=["linear_attention", "linear_attention",
                                                                             "full_attention"],
                                     rms_norm_eps=1e-6, tie_word_embeddings=False,
                                     rope_parameters=dict(rope_type="default", rope_theta=1e7,
                                                          partial_rotary_factor=0.2)),
                    vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2,
                                       out_hidden_size=64, num_position_embeddings=16)),
    # Qwen 3.5's MoE as released (Qwen3.5-35B-A3B): the multimodal wrapper around a text model whose every layer's MLP
    # is 6 experts (2 a token, softmax then renormalized) beside a shared expert behind a sigmoid gate.
    "qwen3_5_moe": dict(model_type="qwen3_5_moe", seed=1,
                        text_config=dict(num_experts=6, num_experts_per_tok=2, moe_intermediate_size=24,
                                         shared_expert_intermediate_size=40, num_hidden_layers=3,
                                         num_attention_heads=4, num_key_value_heads=2, head_dim=20,
                                         linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                                         linear_value_head_dim=6, linear_conv_kernel_dim=4,
                                         layer_types=["linear_attention", "full_attention", "linear_attention"],
                                         rms_norm_eps=1e-6, tie_word_embeddings=False,
                                         rope_parameters=dict(rope_type="default", rope_theta=1e7,
                                                              partial_rotary_factor=0.2)),
                        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2,
                                           out_hidden_size=64, num_position_embeddings=16)),
    # Qwen3-Next: Qwen 3.5's layers with the DeltaNet's projections fused by key-head group (3 value heads a group
    # here), and qwen2_moe's experts with a gated shared expert; layer 2's MLP dense (mlp_only_layers).
    "qwen3_next": dict(model_type="qwen3_next", intermediate_size=80, num_hidden_layers=4, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=20, linear_num_key_heads=2, linear_num_value_heads=6,
                       linear_key_head_dim=8, linear_value_head_dim=6, linear_conv_kernel_dim=4,
                       layer_types=["linear_attention", "full_attention", "linear_attention", "linear_attention"],
                       num_experts=6, num_experts_per_tok=2, moe_intermediate_size=24,
                       shared_expert_intermediate_size=40, mlp_only_layers=[2], norm_topk_prob=True,
                       rms_norm_eps=1e-6, tie_word_embeddings=False,
                       rope_parameters=dict(rope_type="default", rope_theta=1e7, partial_rotary_factor=0.2)),
    # OLMo hybrid: Gated DeltaNet layers (q, k, v, a, b and g projected apart; beta doubled; normed before their
    # blocks) around one OLMo 3 attention layer (norms after attention and MLP, q/k norms over the projection), with
    # rope here (released checkpoints have none: tested by a copy without it).
    "olmo_hybrid": dict(model_type="olmo_hybrid", pad_token_id=1, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
                        num_key_value_heads=2, linear_num_key_heads=2, linear_num_value_heads=4,
                        linear_key_head_dim=12, linear_value_head_dim=10, linear_conv_kernel_dim=4,
                        layer_types=["linear_attention", "linear_attention", "full_attention", "linear_attention"],
                        rms_norm_eps=1e-6, tie_word_embeddings=False,
                        rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    # LFM2: short-convolution layers (3 taps, biases on) around two attention layers with per-head q/k norms; the
    # MLP's width auto-adjusted from block_ff_dim (2/3 of 150, times 1.5, rounded up to a multiple of 16: 160).
    "lfm2": dict(model_type="lfm2", block_ff_dim=150, block_auto_adjust_ff_dim=True, block_ffn_dim_multiplier=1.5,
                 block_multiple_of=16, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                 layer_types=["conv", "full_attention", "conv", "full_attention"], conv_L_cache=3, conv_bias=True,
                 norm_eps=1e-5, tie_embedding=False, rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # LFM2-MoE: LFM2's layers, the first dense (intermediate_size, not adjusted), then 6 experts (2 a token) chosen by
    # sigmoid scores plus expert_bias, renormalized and scaled by 1.5.
    "lfm2_moe": dict(model_type="lfm2_moe", intermediate_size=104, moe_intermediate_size=24, num_experts=6,
                     num_experts_per_tok=2, num_dense_layers=1, routed_scaling_factor=1.5, num_hidden_layers=3,
                     num_attention_heads=4, num_key_value_heads=2, layer_types=["conv", "full_attention", "conv"],
                     conv_L_cache=3, norm_eps=1e-5, tie_embedding=False,
                     rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # LFM3: short convolutions of 7 taps (the default) around a full-attention layer (its default rope: proportional,
    # half of each head) and a sliding one (windows of 8, rope 10,000), heads gated by a sigmoid each, sandwich norms.
    "lfm3": dict(model_type="lfm3", pad_token_id=1, intermediate_size=96, num_hidden_layers=5, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16, sliding_window=8,
                 layer_types=["conv", "full_attention", "conv", "sliding_attention", "conv"], norm_eps=1e-5),
    # Granite 4 (granitemoehybrid): Mamba2 layers (8 heads of 16 in 2 groups, states of 12, 4 taps, chunks of 16 so
    # that the longest fixture sequence crosses nine) around one attention layer without rope, as released; every
    # layer's shared MLP beside 2 of 4 experts (a softmax over the top logits); Granite's multipliers.
    "granitemoehybrid": dict(model_type="granitemoehybrid", intermediate_size=24, shared_intermediate_size=40,
                             num_local_experts=4, num_experts_per_tok=2, num_hidden_layers=4, num_attention_heads=4,
                             num_key_value_heads=2, layer_types=["mamba", "attention", "mamba", "mamba"],
                             mamba_n_heads=8, mamba_n_groups=2, mamba_d_state=12, mamba_d_head="auto", mamba_d_conv=4,
                             mamba_expand=2, mamba_chunk_size=16, position_embedding_type="nope",
                             embedding_multiplier=12.0, attention_multiplier=0.0625, residual_multiplier=0.22,
                             logits_scaling=6.0, rms_norm_eps=1e-5, tie_word_embeddings=True),
    # Falcon-H1: attention and Mamba2 (8 heads of 10 in 2 groups, its width 80 apart from hidden_size, states of 12,
    # chunks of 16, no norm: the gate alone, as released) side by side in each layer, muP multipliers all away from 1.
    "falcon_h1": dict(model_type="falcon_h1", intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, mamba_d_ssm=80, mamba_n_heads=8, mamba_n_groups=2,
                      mamba_d_state=12, mamba_d_conv=4, mamba_chunk_size=16, mamba_rms_norm=False,
                      embedding_multiplier=2.0, lm_head_multiplier=0.5, attention_in_multiplier=0.8,
                      attention_out_multiplier=1.3, key_multiplier=1.7, ssm_in_multiplier=1.2,
                      ssm_out_multiplier=0.9, ssm_multipliers=[1.1, 0.9, 1.3, 0.7, 1.5], mlp_multipliers=[1.2, 0.8],
                      rms_norm_eps=1e-5, tie_word_embeddings=False,
                      rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    # Nemotron-H: one block a layer (M Mamba2, * attention without rope, - a relu2 MLP), Mamba2 of 8 heads of 10 in 2
    # groups (its width apart from hidden_size), states of 12, chunks of 16; norms' weights multiplied in fp32.
    "nemotron_h": dict(model_type="nemotron_h", intermediate_size=96, hybrid_override_pattern="M*M-M",
                       num_attention_heads=4, num_key_value_heads=2, head_dim=16, mamba_num_heads=8,
                       mamba_head_dim=10, n_groups=2, ssm_state_size=12, conv_kernel=4, chunk_size=16,
                       layer_norm_epsilon=1e-5, tie_word_embeddings=False),
    # Nemotron-H's expert layers (as Nemotron 3): M E * E M, each E 2 of 6 experts without a gate (relu2) through a
    # latent of 24, chosen by sigmoid scores plus a correction bias within the best of 2 groups, renormalized and
    # scaled by 1.5, beside one shared relu2 MLP of 40.
    "nemotron_h_moe": dict(model_type="nemotron_h", intermediate_size=96, hybrid_override_pattern="ME*EM",
                           num_attention_heads=4, num_key_value_heads=2, head_dim=16, mamba_num_heads=8,
                           mamba_head_dim=10, n_groups=2, ssm_state_size=12, conv_kernel=4, chunk_size=16,
                           n_routed_experts=6, num_experts_per_tok=2, moe_intermediate_size=24,
                           moe_shared_expert_intermediate_size=40, moe_latent_size=24, n_group=2, topk_group=1,
                           routed_scaling_factor=1.5, norm_topk_prob=True, layer_norm_epsilon=1e-5,
                           tie_word_embeddings=False),
    # Experts' widths are multiples of 8: torch's grouped matmul, which transformers and the engine run experts
    # through, takes bf16 rows only at multiples of 16 bytes.
    # GLM-4.5 (glm4_moe): a dense first layer, then sigmoid routing with a correction bias within the best 2 of 4
    # groups, weights renormalized and scaled by 2.5, two experts' widths of shared expert; q/k norms per head,
    # biases on q, k and v, half of each 28-wide head rotated.
    "glm4_moe": dict(model_type="glm4_moe", intermediate_size=120, moe_intermediate_size=24, num_hidden_layers=3,
                     first_k_dense_replace=1, n_routed_experts=8, num_experts_per_tok=3, n_group=4, topk_group=2,
                     n_shared_experts=2, routed_scaling_factor=2.5, norm_topk_prob=True, use_qk_norm=True,
                     attention_bias=True, num_attention_heads=4, num_key_value_heads=2, head_dim=28,
                     rms_norm_eps=1e-5, tie_word_embeddings=False,
                     rope_parameters=dict(rope_type="default", rope_theta=1e6, partial_rotary_factor=0.5)),
    # GLM-4-0414 (glm4): sandwich norms under GLM's names, gate_up_proj, q/k/v biases (attention_bias's default),
    # heads of 28 whose first 14 (partial_rotary_factor's default) rotate over interleaved pairs; rms_norm_eps left
    # to its default 1.5625e-7.
    "glm4": dict(model_type="glm4", intermediate_size=104, num_hidden_layers=3, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=28, tie_word_embeddings=False, pad_token_id=None,
                 rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    # K-EXAONE (exaone_moe): EXAONE 4's attention (q/k norms, windows of 16 on every other layer, no rope on the
    # full ones) under pre-norms; layers 0 and 2 routed by mlp_layer_types (beside first_k_dense_replace 1, which it
    # overrides) by sigmoid scores plus a correction bias to 3 of 8 experts of 24 within the best 2 of 4 groups,
    # times 1.75, beside 2 shared experts' widths; heads of 20.
    "exaone_moe": dict(model_type="exaone_moe", intermediate_size=88, moe_intermediate_size=24, num_hidden_layers=3,
                       mlp_layer_types=["sparse", "dense", "sparse"], num_experts=8, num_experts_per_tok=3,
                       n_group=4, topk_group=2, num_shared_experts=2, routed_scaling_factor=1.75,
                       norm_topk_prob=True, num_attention_heads=4, num_key_value_heads=2, head_dim=20,
                       rms_norm_eps=1e-5, tie_word_embeddings=False, sliding_window=16, sliding_window_pattern=2,
                       pad_token_id=None, rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # Solar Open (solar_open): every layer routed by sigmoid scores plus a correction bias to 3 of 8 experts of 24
    # within the best of 2 groups, weights not renormalized, times 1.5, beside 2 shared experts' widths; q/k/v
    # biases; no intermediate_size key at all; heads of 20.
    "solar_open": dict(model_type="solar_open", moe_intermediate_size=24, num_hidden_layers=3, n_routed_experts=8,
                       num_experts_per_tok=3, n_group=2, topk_group=1, n_shared_experts=2, routed_scaling_factor=1.5,
                       norm_topk_prob=False, attention_bias=True, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=20, rms_norm_eps=1e-5, tie_word_embeddings=False, pad_token_id=None,
                       rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # Tencent Hy3 (hy_v3): per-head q/k norms before the rotation, biases on q, k, v, o and the MLPs; layers 1 and 2
    # routed (mlp_layer_types' default) by fp32 sigmoid scores plus a correction bias to 3 of 8 experts of 24,
    # renormalized, times 1.6 (router_scaling_factor), beside a shared MLP of 2 experts' widths; heads of 18.
    "hy_v3": dict(model_type="hy_v3", seed=1, intermediate_size=100, moe_intermediate_size=24, num_hidden_layers=3,
                  num_experts=8, num_experts_per_tok=3, num_shared_experts=2, router_scaling_factor=1.6,
                  attention_bias=True, mlp_bias=True, num_attention_heads=4, num_key_value_heads=2, head_dim=18,
                  rms_norm_eps=1e-5, tie_word_embeddings=False, pad_token_id=None,
                  rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # Arcee Trinity (afmoe): four norms a layer, q/k norms, a sigmoid output gate of its own projection, windows of
    # 16 on layers 0 and 1 (every third full) that alone rotate, q/k/v/o biases, embeddings times sqrt(64) (muP);
    # layer 0 dense, layers 1 and 2 routed by sigmoid scores plus an fp32 correction bias to 3 of 8 experts of 24,
    # renormalized, times 1.4 (route_scale), beside 2 shared experts' widths; heads of 18.
    "afmoe": dict(model_type="afmoe", intermediate_size=100, moe_intermediate_size=24, num_hidden_layers=3,
                  num_dense_layers=1, num_experts=8, num_experts_per_tok=3, num_shared_experts=2, route_scale=1.4,
                  attention_bias=True, mup_enabled=True, num_attention_heads=4, num_key_value_heads=2, head_dim=18,
                  sliding_window=16, global_attn_every_n_layers=3, rms_norm_eps=1e-5, tie_word_embeddings=False,
                  pad_token_id=None, rope_parameters=dict(rope_type="default", rope_theta=1e4)),
    # Command R+ (cohere): attention and MLP in parallel on one LayerNorm without bias, q/k/v/o biases, the rope over
    # interleaved pairs, q and k normed per head by LayerNorms with a weight for each head (use_qk_norm), logits
    # times 0.25, tied; heads of 18.
    "cohere": dict(model_type="cohere", intermediate_size=100, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=18, attention_bias=True, use_qk_norm=True, logit_scale=0.25,
                   layer_norm_eps=1e-5, pad_token_id=None, rope_parameters=dict(rope_type="default", rope_theta=1e4)),
    # Command A (cohere2): as cohere without q/k norms, windows of 16 on layers 0 and 1 (every third full, from
    # sliding_window_pattern) that alone rotate, untied, logits times 0.5; heads of 16 (hidden / heads).
    "cohere2": dict(model_type="cohere2", intermediate_size=100, num_hidden_layers=3, num_attention_heads=4,
                    num_key_value_heads=2, sliding_window=16, sliding_window_pattern=3, logit_scale=0.5,
                    layer_norm_eps=1e-5, tie_word_embeddings=False, pad_token_id=None,
                    rope_parameters=dict(rope_type="default", rope_theta=5e4)),
    # Cohere 2 MoE (cohere2_moe): RMSNorms (rms_norm_eps set) in Command A's parallel layers; layer 0 dense (72 wide),
    # full and rotating (prefix_dense_sliding_window_pattern 1); layer 1 sliding (16) and rotating, layer 2 full
    # without rope; layers 1 and 2 routed by the sigmoid of the top 3 of 8 logits, renormalized, to experts of 24
    # averaged with a shared expert as wide; heads of 20, the rope over interleaved pairs, logits times 0.5.
    "cohere2_moe": dict(model_type="cohere2_moe", intermediate_size=24, prefix_dense_intermediate_size=72,
                        num_hidden_layers=3, first_k_dense_replace=1, sliding_window_pattern=2, sliding_window=16,
                        num_experts=8, num_experts_per_tok=3, num_shared_experts=1, expert_selection_fn="sigmoid",
                        num_attention_heads=4, num_key_value_heads=2, head_dim=20, rms_norm_eps=1e-5,
                        logit_scale=0.5, tie_word_embeddings=False, pad_token_id=None,
                        rope_parameters=dict(rope_type="default", rope_theta=1e4)),
    # Poolside Laguna (laguna): 4, 6 and 2 query heads over 2 kv heads by layer, per-head q/k norms, a softplus gate
    # a head (gating's default) from g_proj, q/k/v/o biases, a window of 16 on layer 1 with a rope of its own (full
    # layers rotate half of each head); layers 1 and 2 routed by soft-capped (2.0) sigmoid scores plus a correction
    # bias to 3 of 8 experts of 24, renormalized, their sum times 1.5, plus a shared MLP of 40 (no gate); heads of 20.
    "laguna": dict(model_type="laguna", intermediate_size=100, moe_intermediate_size=24, num_hidden_layers=3,
                   num_experts=8, num_experts_per_tok=3, shared_expert_intermediate_size=40,
                   moe_routed_scaling_factor=1.5, moe_router_logit_softcapping=2.0, attention_bias=True,
                   num_attention_heads=4, num_attention_heads_per_layer=[4, 6, 2], num_key_value_heads=2,
                   head_dim=20, sliding_window=16, rms_norm_eps=1e-6, tie_word_embeddings=False, pad_token_id=None,
                   layer_types=["full_attention", "sliding_attention", "full_attention"],
                   rope_parameters=dict(full_attention=dict(rope_type="default", rope_theta=5e5,
                                                            partial_rotary_factor=0.5),
                                        sliding_attention=dict(rope_type="default", rope_theta=1e4))),
    # Xiaomi MiMo-V2-Flash (mimo_v2_flash): value heads of 10 beside q/k heads of 20, the values times 0.6, q/k/v
    # biases; windows of 16 on layers 1 and 2 with 2 kv heads (twice layer 0's) and sinks; a rope a layer type, each
    # rotating a third of each head (6 of 20); layers 1 and 2 routed to 2 of 6 experts of 24 in the better of 2 groups
    # by sigmoid scores plus a correction bias, times 1.5, no shared expert.
    "mimo_v2_flash": dict(model_type="mimo_v2_flash", intermediate_size=96, num_hidden_layers=3,
                          num_attention_heads=4, num_key_value_heads=1, head_dim=20, v_head_dim=10,
                          attention_bias=True, attention_value_scale=0.6, n_routed_experts=6, num_experts_per_tok=2,
                          n_group=2, topk_group=1, moe_intermediate_size=24, routed_scaling_factor=1.5,
                          sliding_window=16, rms_norm_eps=1e-5, tie_word_embeddings=False, pad_token_id=None,
                          layer_types=["full_attention", "sliding_attention", "sliding_attention"],
                          mlp_layer_types=["dense", "sparse", "sparse"],
                          rope_parameters=dict(
                              full_attention=dict(rope_type="default", rope_theta=5e6, partial_rotary_factor=0.334),
                              sliding_attention=dict(rope_type="default", rope_theta=1e4,
                                                     partial_rotary_factor=0.334))),
    # Meta's Llama 4 text model (llama4_text): layer 2 without rope (no_rope_layers) and its queries scaled by
    # position (attn_scale 0.5, floor_scale 8: 2.47x at 150 tokens), the others rotating interleaved pairs under
    # Scout's llama3 rope (low and high frequency factors both 1) and norming q and k per head without weight; q/k/v/o
    # biases; heads of 20; chunks of 150 (the longest golden sequence); layers 1 and 3 routed (interleave step 2) by
    # the sigmoid of the top 2 of 6 logits, each expert of 24 reading the input times its weight, beside a shared
    # expert as wide; the dense layers' MLPs of 96.
    "llama4_text": dict(model_type="llama4_text", intermediate_size=24, intermediate_size_mlp=96, num_hidden_layers=4,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=20, num_local_experts=6,
                        num_experts_per_tok=2, interleave_moe_layer_step=2, no_rope_layers=[1, 1, 0, 1],
                        attention_chunk_size=150, attn_temperature_tuning=True, attn_scale=0.5, floor_scale=8,
                        use_qk_norm=True, attention_bias=True, rms_norm_eps=1e-5, tie_word_embeddings=False,
                        pad_token_id=None,
                        rope_parameters=dict(rope_type="llama3", rope_theta=5e5, factor=16.0, low_freq_factor=1.0,
                                             high_freq_factor=1.0, original_max_position_embeddings=64)),
    # MiniMax M3's text model inside its wrapper (minimax_m3_vl, a one-layer vision tower), saved whole: Gemma's
    # (1 + w) norms, per-head q/k norms, heads of 20 rotated whole (transformers 5.24 ignores rotary_dim 10 here);
    # layer 0 dense (96 wide), layers 1 and 2 sparse (lightning indexer over 10 blocks of 16 keys: dense up to 160)
    # and routed by sigmoid scores plus a correction bias to 2 of 6 experts of 24 (saved as Mixtral's, as transformers
    # saves them), renormalized, their sum times 1.5, plus shared experts of 40; every MLP through the clamped SwiGLU
    # (limit 0.1, so that it clamps).
    "minimax_m3_vl": dict(model_type="minimax_m3_vl", seed=1, projector_hidden_size=64, text_config=dict(
        intermediate_size=24, dense_intermediate_size=96, shared_intermediate_size=40, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=2, head_dim=20, rotary_dim=10, num_local_experts=6,
        num_experts_per_tok=2, routed_scaling_factor=1.5, swiglu_limit=0.1, index_n_heads=2, index_head_dim=8,
        index_block_size=16, index_topk_blocks=10, index_local_blocks=1, rms_norm_eps=1e-6, pad_token_id=None,
        layer_types=["full_attention", "minimax_m3_sparse", "minimax_m3_sparse"],
        mlp_layer_types=["dense", "sparse", "sparse"]),
        vision_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)),
    # DeepSeek V3: multi-head latent attention (latent of 24, queries through a rank-24 pair, unrotated key parts of
    # 12 and rotated of 8 over interleaved pairs, values of 10) under YaRN with mscale_all_dim (which scales the
    # scores); a dense first layer, then the grouped sigmoid router (best 2 of 4 groups), one shared expert.
    "deepseek_v3": dict(model_type="deepseek_v3", seed=1, intermediate_size=120, moe_intermediate_size=24, num_hidden_layers=3,
                        first_k_dense_replace=1, n_routed_experts=8, num_experts_per_tok=3, n_group=4, topk_group=2,
                        n_shared_experts=1, routed_scaling_factor=2.5, num_attention_heads=4, num_key_value_heads=4,
                        kv_lora_rank=24, q_lora_rank=24, qk_nope_head_dim=12, qk_rope_head_dim=8, v_head_dim=10,
                        rms_norm_eps=1e-5, tie_word_embeddings=False,
                        rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=4.0, mscale=1.0,
                                             mscale_all_dim=0.8, original_max_position_embeddings=512)),
    # The same without the query's low-rank pair (q_proj), with biases (kv_a_proj_with_mqa's, o_proj's), the rope
    # over halves (rope_interleave false), every layer routed.
    "deepseek_v3_q_proj": dict(model_type="deepseek_v3", seed=2, intermediate_size=120, moe_intermediate_size=24,
                               num_hidden_layers=2, first_k_dense_replace=0, n_routed_experts=6,
                               num_experts_per_tok=2, n_group=1, topk_group=1, n_shared_experts=2,
                               routed_scaling_factor=1.5, num_attention_heads=3, num_key_value_heads=3,
                               kv_lora_rank=18, q_lora_rank=None, qk_nope_head_dim=14, qk_rope_head_dim=6,
                               v_head_dim=16, attention_bias=True, rope_interleave=False, rms_norm_eps=1e-6,
                               tie_word_embeddings=False,
                               rope_parameters=dict(rope_type="default", rope_theta=50000.0)),
    # Kimi Linear: Kimi Delta Attention layers (3 heads of 10, a decay per key channel, q, k and v convolved apart)
    # around one latent attention layer without rope (latent of 16, q_proj, unrotated shared key part of 6); a dense
    # first layer (saved under block_sparse_moe as transformers saves it), then DeepSeek's router over 6 experts in 2
    # groups beside a shared one; the layers from linear_attn_config's 1-based lists, as released.
    "kimi_linear": dict(model_type="kimi_linear", seed=1, pad_token_id=1, intermediate_size=96,
                        moe_intermediate_size=24, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4,
                        kv_lora_rank=16, q_lora_rank=None, qk_nope_head_dim=8, qk_rope_head_dim=6, v_head_dim=12,
                        num_experts=6, num_experts_per_token=2, num_shared_experts=1, num_expert_group=2,
                        topk_group=1, routed_scaling_factor=1.5, rms_norm_eps=1e-5, tie_word_embeddings=False,
                        linear_attn_config=dict(head_dim=10, num_heads=3, short_conv_kernel_size=4,
                                                full_attn_layers=[3], kda_layers=[1, 2, 4])),
    # Ling 3 (bailing_hybrid): KDA layers (4 heads of 10, the decay and the gate each one projection, the safe gate's
    # bound -5) around one latent attention layer with an interleaved rope and a gate a head (every third layer
    # full); a dense first layer, then DeepSeek's router over 8 experts in 2 groups beside a shared one; Ling's names.
    "bailing_hybrid": dict(model_type="bailing_hybrid", seed=1, pad_token_id=1, intermediate_size=96,
                           moe_intermediate_size=24, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4,
                           kv_lora_rank=16, q_lora_rank=None, qk_nope_head_dim=8, qk_rope_head_dim=6, v_head_dim=12,
                           head_dim=10, num_experts=8, num_experts_per_token=2, num_shared_experts=1,
                           num_expert_group=2, topk_group=1, routed_scaling_factor=1.5, first_k_dense_replace=1,
                           layer_group_size=3, rope_theta=10000.0, rms_norm_eps=1e-6, tie_word_embeddings=False),
    # GLM-4.7-Flash (glm4_moe_lite): DeepSeek V3's latent attention under glm4_moe's router; which layers route by
    # mlp_layer_types (here the middle one alone), the rope over interleaved pairs with a base of 1e6.
    "glm4_moe_lite": dict(model_type="glm4_moe_lite", intermediate_size=100, moe_intermediate_size=24,
                          num_hidden_layers=3, mlp_layer_types=["dense", "sparse", "dense"], n_routed_experts=6,
                          num_experts_per_tok=2, n_group=2, topk_group=1, n_shared_experts=1,
                          routed_scaling_factor=1.8, num_attention_heads=4, num_key_value_heads=4,
                          kv_lora_rank=16, q_lora_rank=20, qk_nope_head_dim=10, qk_rope_head_dim=6, v_head_dim=12,
                          rms_norm_eps=1e-5, tie_word_embeddings=False,
                          rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # Mistral 4 as released, inside the mistral3 wrapper: DeepSeek V3's latent attention (queries through a rank-20
    # pair, heads of 8 + 8 rotated over interleaved pairs, values of 12) under YaRN with Llama 4's query scale by
    # position (past 16 tokens); every layer routed by a softmax within the better of 2 groups, one shared expert.
    "mistral4": dict(model_type="mistral3", image_token_index=502, spatial_merge_size=2, vision_feature_layer=-1,
                     text_config=dict(model_type="mistral4", intermediate_size=96, moe_intermediate_size=24,
                                      num_hidden_layers=2, n_routed_experts=8, num_experts_per_tok=2, n_group=2,
                                      topk_group=1, n_shared_experts=1, routed_scaling_factor=1.5,
                                      num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=16, q_lora_rank=20,
                                      qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=12, rms_norm_eps=1e-5,
                                      tie_word_embeddings=False,
                                      rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=4.0,
                                                           original_max_position_embeddings=16, beta_fast=32.0,
                                                           beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0,
                                                           llama_4_scaling_beta=0.1, partial_rotary_factor=0.5)),
                     vision_config=dict(model_type="pixtral", hidden_size=16, intermediate_size=32,
                                        num_hidden_layers=1, num_attention_heads=2, head_dim=8, image_size=28,
                                        patch_size=14)),
    # DeepSeek V3.2: DeepSeek V3 with an indexer in each layer (its weights never read here); index_topk 150, the
    # longest fixture sequence's length, so that every query attends to every key before it: dense attention, up to
    # exactly the limit.
    "deepseek_v32": dict(model_type="deepseek_v32", intermediate_size=96, moe_intermediate_size=24,
                         num_hidden_layers=3, first_k_dense_replace=1, n_routed_experts=8, num_experts_per_tok=2,
                         n_group=2, topk_group=1, n_shared_experts=1, routed_scaling_factor=2.0,
                         num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=16, q_lora_rank=20,
                         qk_nope_head_dim=10, qk_rope_head_dim=6, v_head_dim=12, index_topk=150, index_head_dim=8,
                         index_n_heads=2, rms_norm_eps=1e-6, tie_word_embeddings=False,
                         rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
    # GLM-5 (glm_moe_dsa): as deepseek_v32 with glm's sizes by default (norms at 1e-5); the dense layers by
    # mlp_layer_types (the last here), index_topk 200.
    "glm_moe_dsa": dict(model_type="glm_moe_dsa", intermediate_size=80, moe_intermediate_size=24, num_hidden_layers=2,
                        mlp_layer_types=["sparse", "dense"], n_routed_experts=6, num_experts_per_tok=2, n_group=1,
                        topk_group=1, n_shared_experts=1, routed_scaling_factor=2.5, num_attention_heads=2,
                        num_key_value_heads=2, kv_lora_rank=24, q_lora_rank=16, qk_nope_head_dim=12,
                        qk_rope_head_dim=8, v_head_dim=14, index_topk=200, index_head_dim=8, index_n_heads=2,
                        tie_word_embeddings=False, rope_parameters=dict(rope_type="default", rope_theta=1e6)),
    # ERNIE 4.5 MoE: layer 0 dense, 1 and 2 routed by a softmax plus a correction bias to 2 of 6 experts beside a
    # shared one, biases on every projection (use_bias), the rope over interleaved pairs, heads of 30, tied.
    "ernie4_5_moe": dict(model_type="ernie4_5_moe", intermediate_size=76, moe_intermediate_size=40,
                         num_hidden_layers=3, moe_num_experts=6, moe_k=2, moe_num_shared_experts=1,
                         moe_layer_start_index=1, moe_layer_interval=1, use_bias=True, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=30, rms_norm_eps=1e-5,
                         rope_parameters=dict(rope_type="default", rope_theta=500000.0)),
    # HunYuan MoE: 2 then 3 of 5 experts (moe_topk per layer) as wide as the shared MLP, the router in fp32, q/k
    # norms after the rotation, the NTK-alpha rope, heads of 14.
    "hunyuan_v1_moe": dict(model_type="hunyuan_v1_moe", intermediate_size=56, num_hidden_layers=2, num_experts=5,
                           moe_topk=[2, 3], num_attention_heads=4, num_key_value_heads=2, head_dim=14,
                           rms_norm_eps=1e-5, tie_word_embeddings=False,
                           rope_parameters=dict(rope_type="dynamic", alpha=1000.0, factor=1.0, rope_theta=10000.0)),
    # MiniMax-M2: sigmoid routing with a correction bias to 2 of 6 experts (Mixtral's names), q/k normed over their
    # full width, 10 of each 20-wide head rotated (rotary_dim).
    "minimax_m2": dict(model_type="minimax_m2", intermediate_size=72, num_hidden_layers=2, num_local_experts=6,
                       num_experts_per_tok=2, num_attention_heads=4, num_key_value_heads=2, head_dim=20,
                       rotary_dim=10, rms_norm_eps=1e-6, rope_parameters=dict(rope_type="default", rope_theta=5e6)),
}

PAIRS = [
    ("The following are multiple choice questions (with answers) about anatomy.\n\nWhat is 2+2?\nA. 3\nB. 4\n"
     "Answer:", " B"),
    ("The following are multiple choice questions (with answers) about anatomy.\n\nWhat is 2+2?\nA. 3\nB. 4\n"
     "Answer:", " A"),
    ("def add(a, b):\n    return", " a + b\n"),
    ("Question: Is the sky blue? ", "Yes, it is."),
    ("", "Hello world"),
    ("naïve café ", "日本語"),
    ("The capital of France is", " Paris."),
    ("x" * 30, "y" * 5),
    ("A long story. " * 12 + "It ended", " well, after all."),  # longer than every sliding window
]
LOGIT_LENGTHS = [1, 7, 33, 70, 150]
GREEDY_LENGTHS = [1, 3]  # tokens of the greedy continuations: one row of each length per family
GREEDY_CONTEXTS = [c for c, _ in PAIRS if c.strip() == c and c] + ["Once upon a time", "1, 2, 3, 4,", "Hello"]


def model_class(config):
    """transformers' auto class for a config: multimodal ones (a vision_config beside the text model's) are
    image-text-to-text models, whose text part alone runs on text."""
    multimodal = getattr(config, "vision_config", None) is not None
    return transformers.AutoModelForImageTextToText if multimodal else transformers.AutoModelForCausalLM


def make_model(family):
    spec = dict(FAMILIES[family])
    torch.manual_seed(spec.pop("seed", 0))  # another seed where seed 0's greedy tokens are unused ids
    if "text_config" in spec:  # multimodal: the shared sizes and ids are the text model's
        spec["text_config"] = dict(COMMON, **spec["text_config"])
    else:
        spec = dict(COMMON, **spec)
    config = transformers.AutoConfig.for_model(spec.pop("model_type"), **spec)
    model = model_class(config).from_config(config, attn_implementation="eager").float().eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or ".ln_" in name:
                p.add_(0.3 * torch.randn_like(p))
            elif name.endswith(("mlp.gate.weight", "block_sparse_moe.gate.weight", "mlp.router.weight",
                                "gate.wg.weight", "feed_forward.gate.weight", "router.layer.weight", "router.gate.weight",
                                "feed_forward.router.weight",
                                "mixer.gate.weight")):
                p.normal_(0.0, 0.5)  # routers that rank experts clearly, so that no near-tie picks a different one
            elif name.endswith("router.proj.weight"):  # Gemma 4's reads its input times hidden^-1/2
                p.normal_(0.0, 4.0)
            elif name.endswith(("router.scale", "per_expert_scale")):  # Gemma 4's, initialized to one
                p.uniform_(0.5, 1.5)
            elif name.endswith("conv.in_proj.weight"):  # LFM2's B, C and x: at 0.02 the product B * x, and so the
                p.normal_(0.0, 0.3)                      # short convolution, would barely reach the residual
            elif name.endswith(("mamba.in_proj.weight", "mamba.conv1d.weight", "mixer.in_proj.weight",
                                "mixer.conv1d.weight")):  # Mamba2's x, B, C and z: at 0.02
                p.normal_(0.0, 0.3)  # the scan's inputs and outputs would barely reach the residual
            elif name.endswith(("fc1_latent_proj.weight", "fc2_latent_proj.weight", "mixer.experts.up_proj",
                                "mixer.experts.down_proj")):  # Nemotron-H's experts through their latent: at 0.02
                p.normal_(0.0, 0.15)                          # their relu2 of four products would vanish
            elif name.endswith(("feed_forward.experts.gate_up_proj", "feed_forward.experts.down_proj")):
                p.normal_(0.0, 0.15)  # Llama 4's experts: at 0.02 whether they weigh their input or output would not show
            elif name.endswith(("mamba.dt_bias", "mixer.dt_bias")):  # steps of 0.3 to 1.3 (released inits are 0.001 to 0.1): tokens
                p.uniform_(-1.0, 1.0)              # move the state far enough for a misplaced one to show
            elif name.endswith(("act_fn.alpha_p", "act_fn.alpha_n")):  # Apertus's xIELU, away from its init
                p.add_(0.5 * torch.randn_like(p))
            elif name.endswith(("bias", "sinks")):
                p.normal_(0.0, 0.05 if name.endswith("bias") else 1.0)
        for name, b in model.named_buffers():
            if name.endswith("layer_scalar"):  # Gemma 4's, saved with the weights
                b.uniform_(0.5, 1.5)
        # Correction biases (DeepSeek's, LFM2-MoE's) large enough to choose other experts than the scores alone.
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if name.endswith(("e_score_correction_bias", "expert_bias")):
                t.normal_(0.0, 0.3)
    return model


def logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].float()


def score_pair(model, tokenizer, context, continuation):
    """lm-evaluation-harness's HF backend, add_bos_token off."""
    if context == "":
        context_ids = [tokenizer.token_to_id("<|begin_of_text|>")]
        continuation_ids = tokenizer.encode(continuation, add_special_tokens=False).ids
    else:
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        whole = tokenizer.encode(context + continuation, add_special_tokens=False).ids
        context_ids = tokenizer.encode(context, add_special_tokens=False).ids
        continuation_ids = whole[len(context_ids):]
    scores = torch.log_softmax(logits(model, context_ids + continuation_ids), -1)[len(context_ids) - 1:-1]
    target = torch.tensor(continuation_ids)
    return dict(context_ids=context_ids, continuation_ids=continuation_ids,
                logprob=scores.gather(1, target[:, None]).sum().item(),
                is_greedy=bool((scores.argmax(-1) == target).all()))


def greedy_pairs(model, tokenizer):
    """(context, continuation) texts whose continuation is the model's greedy one, one per GREEDY_LENGTHS."""
    pairs = []
    for length in GREEDY_LENGTHS:
        for context in GREEDY_CONTEXTS:
            ids = tokenizer.encode(context, add_special_tokens=False).ids
            greedy = []
            for _ in range(length):
                greedy.append(int(logits(model, ids + greedy)[-1].argmax()))
            continuation = tokenizer.decode(greedy, skip_special_tokens=False)
            row = score_pair(model, tokenizer, context, continuation)
            if row["continuation_ids"] == greedy and row["is_greedy"]:
                pairs.append((context, continuation))
                break
        else:
            raise RuntimeError(f"no context has a greedy continuation of {length} tokens that encodes back")
    return pairs


def delta_rule_tensors(chunked, recurrent, inputs, state):
    """The inputs, the state, and transformers' `chunked` form from zeros and from the state, its `recurrent` form
    over the first 5 tokens from the state: each output and final state."""
    tensors = dict(inputs, state=state)
    for name, start in (("zeros", None), ("state", state)):
        out, final = chunked(**inputs, initial_state=start, output_final_state=True, use_qk_l2norm_in_kernel=True)
        tensors[f"chunked_from_{name}"], tensors[f"chunked_from_{name}_final"] = out, final
    short = {k: v[:, :5] for k, v in inputs.items()}
    out, final = recurrent(**short, initial_state=state, output_final_state=True, use_qk_l2norm_in_kernel=True)
    tensors["recurrent_5"], tensors["recurrent_5_final"] = out, final
    return tensors


def save_kernel_references(tensors, name):
    out = DATA / "kernels"
    out.mkdir(exist_ok=True)
    save_file({k: v.contiguous() for k, v in tensors.items()}, out / f"{name}.safetensors")


def make_gated_delta_rule():
    """kernels/gated_delta_rule.safetensors: transformers' own gated delta rule (Qwen 3.5's torch path) and causal
    convolution on random inputs at odd sizes: 150 tokens (three chunks of 64, the last partial), 2 q/k heads of 12
    serving 4 value heads of 10, from zeros and from a random state; the recurrent form over 5 tokens."""
    from transformers.models.qwen3_5 import modeling_qwen3_5 as qwen3_5

    generator = torch.Generator().manual_seed(2)

    def randn(*shape):
        return torch.randn(*shape, generator=generator)

    b, t, k_heads, v_heads, dk, dv = 2, 150, 2, 4, 12, 10
    inputs = dict(query=randn(b, t, k_heads, dk), key=randn(b, t, k_heads, dk), value=randn(b, t, v_heads, dv),
                  g=-torch.nn.functional.softplus(randn(b, t, v_heads)), beta=torch.sigmoid(randn(b, t, v_heads)))
    tensors = delta_rule_tensors(qwen3_5.torch_chunk_gated_delta_rule, qwen3_5.torch_recurrent_gated_delta_rule,
                                 inputs, randn(b, v_heads, dk, dv))
    x, weight = randn(b, 20, 30), randn(20, 4)
    tensors["conv_x"], tensors["conv_weight"] = x, weight
    tensors["conv_out"] = qwen3_5.causal_conv1d_fn(x, weight, None, activation="silu")
    save_kernel_references(tensors, "gated_delta_rule")


def make_kimi_delta_rule():
    """kernels/kimi_delta_rule.safetensors: transformers' own Kimi Delta Attention (Kimi Linear's torch path: a decay
    per key channel) on random inputs at odd sizes: 150 tokens (three chunks of 64, the last partial), 3 heads with
    keys of 12 and values of 10, decays from 0.004 to 6 a token (a chunk's decay passes e^-88 in the fast channels),
    from zeros and from a random state; the recurrent form over 5 tokens."""
    from transformers.models.kimi_linear import modeling_kimi_linear as kimi

    generator = torch.Generator().manual_seed(4)

    def randn(*shape):
        return torch.randn(*shape, generator=generator)

    b, t, heads, dk, dv = 2, 150, 3, 12, 10
    rate = torch.logspace(-2, 0.5, dk)  # each key channel's own decay rate
    inputs = dict(query=randn(b, t, heads, dk), key=randn(b, t, heads, dk), value=randn(b, t, heads, dv),
                  g=-rate * torch.nn.functional.softplus(randn(b, t, heads, dk)),
                  beta=torch.sigmoid(randn(b, t, heads)))
    tensors = delta_rule_tensors(kimi.chunk_kimi_delta_attention, kimi.recurrent_kimi_delta_attention, inputs,
                                 randn(b, heads, dk, dv))
    save_kernel_references(tensors, "kimi_delta_rule")


def make_mamba2_scan():
    """kernels/mamba2_scan.safetensors: transformers' own Mamba2 scan (Granite 4's torch path: the chunked scan and the
    one-token step) on random inputs at odd sizes: 150 tokens in chunks of 32 (the last partial), 6 heads of 10 in 2
    groups, states of 7, from zeros and from a random state; the step over the first 5 tokens, fp32."""
    from transformers.models.granitemoehybrid import modeling_granitemoehybrid as granite

    generator = torch.Generator().manual_seed(3)

    def randn(*shape):
        return torch.randn(*shape, generator=generator)

    b, t, heads, head_dim, groups, n, chunk = 2, 150, 6, 10, 2, 7, 32
    inputs = dict(x=randn(b, t, heads, head_dim), dt=torch.nn.functional.softplus(randn(b, t, heads)),
                  a=-torch.exp(randn(heads)), b_in=randn(b, t, groups, n), c_in=randn(b, t, groups, n), d=randn(heads))
    state = randn(b, heads, head_dim, n)
    tensors = dict(inputs, state=state)

    def chunked(start):
        return granite.mamba2_chunk_scan(inputs["x"], inputs["dt"], inputs["a"], inputs["b_in"], inputs["c_in"], chunk,
                                         D=inputs["d"], initial_states=start, return_final_states=True)

    for name, start in (("zeros", None), ("state", state)):
        tensors[f"chunked_from_{name}"], tensors[f"chunked_from_{name}_final"] = chunked(start)
    stepped, running = [], state.clone()
    for i in range(5):
        out = granite.mamba2_selective_state_update(
            running, inputs["x"][:, i], inputs["dt"][:, i, :, None].expand(-1, -1, head_dim),
            inputs["a"][:, None, None].expand(heads, head_dim, n), inputs["b_in"][:, i], inputs["c_in"][:, i],
            D=inputs["d"][:, None].expand(heads, head_dim))
        stepped.append(out)
    tensors["step_5"], tensors["step_5_final"] = torch.stack(stepped, 1), running
    out = DATA / "kernels"
    out.mkdir(exist_ok=True)
    save_file({k: v.contiguous() for k, v in tensors.items()}, out / "mamba2_scan.safetensors")


KERNELS = {"gated_delta_rule": make_gated_delta_rule, "kimi_delta_rule": make_kimi_delta_rule,
           "mamba2_scan": make_mamba2_scan}


def record_split_noise(family):
    """transformers' own fp32 difference between one forward of the first pair's context and a prefill of its first
    1, 20 or 70 tokens followed by the rest from its cache (the splits of the C++ CachedForward test), added to the
    fixture's expected_loglikelihood.json as transformers_split_forward_difference: where fp32 rounding alone moves a
    cached forward by more than the test's 1e-5 (Nemotron-H's), the test allows twice this."""
    out = DATA / "models" / family
    path = out / "expected_loglikelihood.json"
    record = json.loads(path.read_text())
    ids = torch.tensor([record["loglikelihood"][0]["context_ids"]])
    model = model_class(transformers.AutoConfig.from_pretrained(out)).from_pretrained(
        out, dtype=torch.float32, attn_implementation="eager").eval()
    worst = 0.0
    with torch.no_grad():
        full = torch.log_softmax(model(ids).logits[0].float(), -1)
        for split in (1, 20, 70):
            head = model(ids[:, :split], use_cache=True)
            rest = model(ids[:, split:], past_key_values=head.past_key_values, use_cache=True)
            parts = torch.log_softmax(torch.cat([head.logits[0], rest.logits[0]]).float(), -1)
            worst = max(worst, float((parts - full).abs().max()))
    record["transformers_split_forward_difference"] = worst
    path.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n")


def split_olmo_hybrid_convolutions(model, out):
    """OLMo hybrid as released keeps q's, k's and v's convolutions apart (q_conv1d, k_conv1d, v_conv1d, as wide as
    each); transformers 5.24 saves its joined conv1d back cut into three equal chunks, which is wrong where v is wider
    than q and k. Writes them as released, which transformers joins back on load."""
    path = out / "model.safetensors"
    tensors = safetensors.torch.load_file(path)
    for i, layer in enumerate(model.model.layers):
        attn = getattr(layer, "linear_attn", None)
        if attn is None:
            continue
        q, k, v = attn.conv1d.weight.detach().split([attn.key_dim, attn.key_dim, attn.value_dim])
        for name, part in (("q", q), ("k", k), ("v", v)):
            tensors[f"model.layers.{i}.linear_attn.{name}_conv1d.weight"] = part.contiguous()
    safetensors.torch.save_file(tensors, path, metadata={"format": "pt"})


def make(family):
    out = DATA / "models" / family
    shutil.rmtree(out, ignore_errors=True)
    model = make_model(family)
    model.save_pretrained(out)
    if family == "olmo_hybrid":
        split_olmo_hybrid_convolutions(model, out)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(DATA / "tokenizer" / name, out / name)
    generator = torch.Generator().manual_seed(1)
    tensors = {}
    for i, length in enumerate(LOGIT_LENGTHS):
        ids = torch.randint(0, 500, (length,), generator=generator)
        tensors[f"tokens_{i}"] = ids
        tensors[f"logits_{i}"] = logits(model, ids.tolist())
    save_file(tensors, out / "expected_logits.safetensors")
    tokenizer = Tokenizer.from_file(str(DATA / "tokenizer" / "tokenizer.json"))
    pairs = PAIRS + greedy_pairs(model, tokenizer)
    rows = [dict(context=c, continuation=x, **score_pair(model, tokenizer, c, x)) for c, x in pairs]
    # How often transformers' own bf16 picks the fp32 argmax on the 150-token sequence: a floor for ours where a
    # family's tiny random model is too tie-prone for the usual one (Gemma 4's normed q, k and v).
    bf16 = model_class(model.config).from_pretrained(out, dtype=torch.bfloat16, attn_implementation="eager").eval()
    with torch.no_grad():
        bf16_argmax = bf16(tensors["tokens_4"][None]).logits[0].float().argmax(-1)
    agreement = (bf16_argmax == tensors["logits_4"].argmax(-1)).float().mean().item()
    (out / "expected_loglikelihood.json").write_text(json.dumps(
        dict(transformers_version=transformers.__version__, torch_version=torch.__version__,
             transformers_bfloat16_argmax_agreement=agreement, loglikelihood=rows),
        ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    torch.set_num_threads(2)
    if sys.argv[1:2] == ["split_noise"]:  # split_noise FAMILY...: record_split_noise on made fixtures
        for name in sys.argv[2:]:
            record_split_noise(name)
            print("recorded the split forward's noise of", name)
        sys.exit(0)
    for name in sys.argv[1:] or [*FAMILIES, *KERNELS]:
        if name in KERNELS:
            KERNELS[name]()
        else:
            make(name)
        print("made", name)
