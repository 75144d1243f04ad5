"""`fastgelu bench --models`: whole transformers models, stock against fastgelu.torch.patch, on this machine.

Each model is built from a random-init config (nothing downloaded), in each dtype; the stock model and a
patched copy run the same inputs in torch.inference_mode, alternating which goes first from round to round so
that a machine getting busier or quieter moves both alike. Reported: the medians over rounds of the forward
time, their ratio, and the largest difference between the two outputs.
"""
import copy
import statistics
import time

from .. import _threads
from . import speed

# name, its GELU, transformers model class, config class, config (hidden sizes of the base models)
MODELS = [
    ("GPT-2", "composite tanh", "GPT2Model", "GPT2Config",
     dict(n_embd=768, n_head=12, n_positions=512, vocab_size=1024, bos_token_id=0, eos_token_id=0)),
    ("T5 v1.1", "gated, composite tanh", "T5EncoderModel", "T5Config",
     dict(d_model=768, d_ff=2048, num_heads=12, d_kv=64, vocab_size=1024, feed_forward_proj="gated-gelu")),
    ("Gemma", "gated, aten::gelu tanh", "GemmaModel", "GemmaConfig",
     dict(hidden_size=1024, intermediate_size=8192, num_attention_heads=8, num_key_value_heads=1, head_dim=128,
          vocab_size=1024)),
    ("BERT", "aten::gelu exact", "BertModel", "BertConfig",
     dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12, vocab_size=1024)),
    ("ViT", "aten::gelu exact", "ViTModel", "ViTConfig",
     dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12, image_size=224, patch_size=16)),
]
LAYER_KEY = {"GPT2Config": "n_layer", "T5Config": "num_layers"}


def _build(tf, torch, cls, cfg_cls, cfg, layers, dtype):
    cfg = dict(cfg, **{LAYER_KEY.get(cfg_cls, "num_hidden_layers"): layers})
    torch.manual_seed(0)
    return getattr(tf, cls)(getattr(tf, cfg_cls)(**cfg)).eval().to(dtype)


def _inputs(torch, cfg_cls, batch, seq):
    g = torch.Generator().manual_seed(1)
    if cfg_cls == "ViTConfig":
        return {"pixel_values": torch.randn(batch, 3, 224, 224, generator=g)}
    return {"input_ids": torch.randint(0, 1024, (batch, seq), generator=g)}


def _time(torch, model, inputs):
    with torch.inference_mode():
        t = time.perf_counter()
        out = model(**inputs).last_hidden_state
        return time.perf_counter() - t, out


def measure(name, torch, tf, dtype, *, layers, batch, seq, rounds):
    """(stock seconds, patched seconds, max abs diff, patch report) for one model and dtype: medians of
    `rounds` interleaved rounds after one warm-up call each."""
    from ..torch import patch
    _, _, cls, cfg_cls, cfg = next(m for m in MODELS if m[0] == name)
    stock = _build(tf, torch, cls, cfg_cls, cfg, layers, dtype)
    patched = copy.deepcopy(stock)
    report = patch(patched)
    inputs = _inputs(torch, cfg_cls, batch, seq)
    if "pixel_values" in inputs:
        inputs["pixel_values"] = inputs["pixel_values"].to(dtype)
    _, want = _time(torch, stock, inputs)
    _, got = _time(torch, patched, inputs)
    diff = (got.double() - want.double()).abs().max().item()
    times = {"stock": [], "patched": []}
    for r in range(rounds):
        order = [("stock", stock), ("patched", patched)]
        for key, model in order if r % 2 == 0 else order[::-1]:
            times[key].append(_time(torch, model, inputs)[0])
    return statistics.median(times["stock"]), statistics.median(times["patched"]), diff, report


def _print(line):
    print(line, flush=True)  # each row as it is measured, also into a pipe


def run(*, layers=4, batch=8, seq=128, rounds=7, dtypes=("bfloat16", "float32"), models=None, out=_print):
    """Print the table, a row per model and dtype as measured; returns the rows (model, dtype, stock s,
    patched s, max abs diff), or None when PyTorch or transformers is missing (after saying so)."""
    try:
        import torch
        import transformers as tf
    except ImportError as e:
        out(f"fastgelu bench --models: skipped, it needs PyTorch and transformers ({e}); "
            f"pip install torch transformers (PyTorch's CPU wheel: see docs/install.md)")
        return None
    tf.logging.set_verbosity_error()
    threads = _threads.affinity_count()
    torch.set_num_threads(threads)
    out(f"Whole models, stock vs fastgelu.torch.patch: {speed.cpu_name()}, PyTorch {torch.__version__}, "
        f"transformers {tf.__version__}, {threads} PyTorch threads")
    out(f"random-init configs, {layers} layers, batch {batch} x {seq} tokens (ViT: {batch} images 224x224), "
        f"inference_mode, medians of {rounds} interleaved rounds")
    row = "  {:<34}{:<10}{:>9}{:>12}{:>10}{:>14}  {}".format
    out(row("model (its GELU)", "dtype", "stock ms", "patched ms", "speed-up", "max abs diff", "patched"))
    rows = []
    for name, gelu, *_ in MODELS:
        if models and name not in models:
            continue
        for dt in dtypes:
            s, p, diff, report = measure(name, torch, tf, getattr(torch, dt), layers=layers, batch=batch, seq=seq,
                                         rounds=rounds)
            rows.append((name, dt, s, p, diff))
            kinds = "/".join(sorted({r.kind for r in report.replaced}))
            out(row(f"{name} ({gelu})", dt, f"{s * 1e3:.1f}", f"{p * 1e3:.1f}", f"{s / p:.2f}x", f"{diff:.2g}",
                    f"{len(report)} {kinds}").rstrip())
    return rows
