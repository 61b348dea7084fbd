"""LoRA adapters made with peft on the fixture checkpoints, for the tests of ``adapter=`` / ``peft=``."""

import pathlib

import torch

#: Adapter settings, by name: the fixture model and peft's LoraConfig arguments (random A and B, scaled up, so that
#: the adapter moves the scores well past the comparisons' tolerance).
ADAPTERS = {
    "all-linear-saved-head": ("llama3", dict(r=4, lora_alpha=16, target_modules="all-linear",
                                              modules_to_save=["lm_head"])),
    "subset-rslora-patterns": ("qwen2", dict(r=4, lora_alpha=16, target_modules=["q_proj", "v_proj", "up_proj"],
                                             use_rslora=True, rank_pattern={"v_proj": 2},
                                             alpha_pattern={"up_proj": 40})),
    "embeddings-of-tied": ("llama3", dict(r=4, lora_alpha=16, target_modules=["embed_tokens", "down_proj"])),
    "fused-projections": ("phi3", dict(r=4, lora_alpha=16, target_modules=["qkv_proj", "gate_up_proj"],
                                       fan_in_fan_out=True)),
    # GPT-2's Conv1D layers store weights [in, out]: their update is B A transposed (c_proj is attention's and MLP's).
    "conv1d": ("gpt2", dict(r=4, lora_alpha=16, target_modules=["c_attn", "c_proj", "c_fc"], fan_in_fan_out=True)),
    # Multimodal checkpoints: peft wraps the whole model, so the factors name model.language_model.* and, where a
    # target matches there too, the vision tower's layers (which no text input reaches).
    "multimodal-all-linear": ("gemma3", dict(r=4, lora_alpha=16, target_modules="all-linear")),
    # Gemma 4: every linear layer, the per-layer inputs' gate and projections among them.
    "gemma4-all-linear": ("gemma4_text", dict(r=4, lora_alpha=16, target_modules="all-linear")),
    # MoE families: attention, and HunYuan's fp32 router (a linear layer).
    "moe-attention": ("glm4_moe", dict(r=4, lora_alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])),
    # LoRA on the stacked routed experts (peft's target_parameters), merged into each expert's gate, up and down.
    "moe-routed-experts": ("qwen3_moe", dict(r=4, lora_alpha=16, target_modules=["q_proj"], target_parameters=[
        "mlp.experts.gate_up_proj", "mlp.experts.down_proj"])),
    "moe-all-linear": ("glm4_moe", dict(r=4, lora_alpha=16, target_modules="all-linear")),
    "moe-attention-and-router": ("hunyuan_v1_moe", dict(r=4, lora_alpha=16, target_modules=["q_proj", "o_proj", "wg"])),
    "multimodal-saved-head": ("mistral3", dict(r=4, lora_alpha=16, target_modules=["q_proj", "down_proj"],
                                               modules_to_save=["lm_head"])),
}


def make_adapter(model_dir: pathlib.Path, out: pathlib.Path, config_class=None, **settings) -> pathlib.Path:
    """Saves an adapter of ``model_dir`` made by peft (LoRA unless ``config_class`` says otherwise) into ``out``."""
    import peft
    from test_references import hf_model

    torch.manual_seed(0)
    model = hf_model(model_dir)
    config = config_class(**settings) if config_class else peft.LoraConfig(init_lora_weights=False, **settings)
    peft.get_peft_model(model, config).save_pretrained(out)
    return out
