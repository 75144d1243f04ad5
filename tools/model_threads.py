"""Threads inside a patched model: PyTorch's OpenMP threads and fastgelu's, and what fastgelu's load cap makes of
PyTorch's threads when they are the only other runnable ones.

    python tools/model_threads.py [--dtype bfloat16] [--layers 4]

The machine-wide runnable count the load cap samples (/proc/loadavg, 4th field) is replaced, through the
kernel module's test hook _load_source, by a file this script rewrites before each GELU call with the call's
team (2) plus the threads of this process that are runnable at that moment: the cap then reacts as on a
machine with nothing else running, whatever other processes do (so the figures hold on a shared VM).
That count may include a PyTorch worker that, with one shared libgomp, becomes a member of fastgelu's team
(then it is counted once too often); the report says how many were runnable at each call entry.
"""
import argparse
import collections
import os
import tempfile


def tids():
    return {int(t) for t in os.listdir("/proc/self/task")}


def state(tid):
    try:
        with open(f"/proc/self/task/{tid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "?"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--calls", type=int, default=6, help="forwards measured")
    args = p.parse_args()

    import torch
    before_torch = tids()
    torch.set_num_threads(2)
    a = torch.randn(1024, 1024)
    a @ a
    torch_threads = tids() - before_torch
    import transformers as tf
    tf.logging.set_verbosity_error()
    before_fg = tids()
    import fastgelu
    import fastgelu.torch as fgt
    fake = tempfile.NamedTemporaryFile("w", suffix=".loadavg", delete=False).name

    def runnable_now(r):
        with open(fake, "w") as f:
            f.write(f"0.00 0.00 0.00 {r}/100 1\n")

    runnable_now(1)
    mods = fastgelu._api_config._kernel_modules()
    for m in mods:
        m._load_source(fake)
        m._backoff(reset=True, cpus=(2, 2))
    fgt.gelu(torch.randn(1 << 21))
    fg_threads = tids() - before_fg
    runtimes = sorted({line.split()[-1] for line in open("/proc/self/maps") if "gomp" in line or "libomp" in line})
    print(f"OpenMP runtimes mapped: {runtimes}")
    print(f"threads started by PyTorch's first parallel region: {len(torch_threads)}; by importing fastgelu and "
          f"its first parallel call: {len(fg_threads)}; torch.get_num_threads() {torch.get_num_threads()}, "
          f"fastgelu's OpenMP limit {fastgelu.ufuncs._kernels._backoff()['openmp']}")

    kernels = fastgelu.ufuncs._kernels
    watched = tids() - {os.getpid()}
    log, owners = [], collections.Counter()

    def wrap(fn):
        def call(*a, **kw):
            up = {t for t in watched if state(t) == "R"}
            owners.update("PyTorch's" if t in torch_threads else "fastgelu's" if t in fg_threads else "other"
                          for t in up)
            runnable_now(2 + len(up))
            s0 = kernels._backoff()
            out = fn(*a, **kw)
            log.append((len(up), s0["load_cap"]))
            return out
        return call

    fgt.gelu, fgt.gelu_, fgt.gelu_mul = wrap(fgt.gelu), wrap(fgt.gelu_), wrap(fgt.gelu_mul)
    dt = getattr(torch, args.dtype)
    torch.manual_seed(0)
    model = tf.GPT2Model(tf.GPT2Config(n_layer=args.layers, n_embd=768, n_head=12, vocab_size=1024,
                                       n_positions=256)).eval().to(dt)
    fgt.patch(model)
    ids = torch.randint(0, 1024, (8, 128))
    with torch.inference_mode():
        model(input_ids=ids)
        log.clear()
        owners.clear()
        for m in mods:
            m._backoff(reset=True, cpus=(2, 2))
        for _ in range(args.calls):
            model(input_ids=ids)
    print(f"GPT-2 {args.layers} layers {args.dtype}, 8 x 128 tokens: {len(log)} GELU calls; another thread of this "
          f"process runnable at entry in {sum(1 for r, _ in log if r)} (by owner: {dict(owners)}); calls the load "
          f"cap started on 1 thread: {sum(1 for _, c in log if c == 1)}")
    for m in mods:
        m._load_source()
    os.unlink(fake)


if __name__ == "__main__":
    main()
