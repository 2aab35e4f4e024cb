# The inference measurements of bench/pytorch/run.sh: torchvision models (random weights, fixed
# seed: no download), batch B, fp32 or fp16, the input copied from host memory every batch as a
# serving process would; prints one JSON line per configuration with images/s and a checksum of
# the last output.  Several configurations run in one process, one after another (each model is
# freed before the next is made), so that a round of the benchmark pays for Python, torch and the
# session once per mode rather than once per configuration.
#   usage: infer.py MODEL:DTYPE [MODEL:DTYPE ...] [options]     (or the older form: infer.py MODEL DTYPE)
import argparse, json, sys, time
import torch
from served_model import served_model

p = argparse.ArgumentParser()
p.add_argument("configs", nargs="+", help="MODEL:DTYPE (dtype fp32 or fp16)")
p.add_argument("--batch", type=int, default=30); p.add_argument("--iters", type=int, default=20)
p.add_argument("--warmup", type=int, default=5)
# At least this long too: 20 batches of ResNet50 take 0.2 s on an H100, short enough for clock
# ramps and one slow batch to move a ratio by half (runs of 2026-11-24).
p.add_argument("--seconds", type=float, default=3.0)
a = p.parse_args()
if len(a.configs) == 2 and ":" not in a.configs[0] and a.configs[1] in ("fp32", "fp16"):
    a.configs = [a.configs[0] + ":" + a.configs[1]]
configs = []
for c in a.configs:
    model, _, dtype = c.partition(":")
    if dtype not in ("fp32", "fp16"):
        p.error(f"configuration '{c}': want MODEL:fp32 or MODEL:fp16")
    configs.append((model, dtype))


def measure(model, dtype):
    m, x_host = served_model(model, dtype, a.batch)
    with torch.no_grad():
        for _ in range(a.warmup):
            y = m(x_host.to("cuda"))
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        done = 0
        while done < a.iters or time.perf_counter() - t0 < a.seconds:
            for _ in range(a.iters):
                y = m(x_host.to("cuda"))
            done += a.iters
            torch.cuda.synchronize()
        secs = time.perf_counter() - t0
    checksum = float(y.float().sum().cpu())
    del m, y
    torch.cuda.empty_cache()
    return {"model": model, "dtype": dtype, "batch": a.batch, "iters": done,
            "images_per_s": a.batch * done / secs, "checksum": checksum}


# A configuration that fails is a line saying why, and the next one still runs (a sticky CUDA
# error fails them too, each with its own line).
for model, dtype in configs:
    try:
        line = measure(model, dtype)
    except Exception as e:  # noqa: BLE001 - any failure is a result row, not the end of the round
        line = {"model": model, "dtype": dtype, "error": f"{type(e).__name__}: {e}"[:200]}
    print(json.dumps(line))
    sys.stdout.flush()
