# One inference measurement for bench/pytorch/run.sh: a torchvision model (random weights, fixed
# seed: no download), batch B, fp32 or fp16, the input copied from host memory every batch as a
# serving process would; prints one JSON line with images/s and a checksum of the last output.
import argparse, json, sys, time
import torch
from served_model import served_model

p = argparse.ArgumentParser()
p.add_argument("model"); p.add_argument("dtype", choices=["fp32", "fp16"])
p.add_argument("--batch", type=int, default=30); p.add_argument("--iters", type=int, default=20)
p.add_argument("--warmup", type=int, default=5)
# At least this long too: 20 batches of ResNet50 take 0.2 s on an H100, short enough for clock
# ramps and one slow batch to move a ratio by half (runs of 2026-11-24).
p.add_argument("--seconds", type=float, default=3.0)
a = p.parse_args()
m, x_host = served_model(a.model, a.dtype, a.batch)
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
print(json.dumps({"model": a.model, "dtype": a.dtype, "batch": a.batch, "iters": done,
                  "images_per_s": a.batch * done / secs, "checksum": checksum}))
sys.stdout.flush()
