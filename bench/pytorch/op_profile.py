# Where a PyTorch batch spends its host time, natively and through Tandem (issue 15).
# At batch 30 eager inference is bound by the host: every microsecond the driver adds to a call
# is lost throughput. This runs one torchvision model for a few batches under torch.profiler
# (CPU activities only: CUPTI needs NVIDIA's driver, which a Tandem guest does not have) and
# prints the operators by self CPU time per batch, so two runs (native, then through
# scripts/tandem-run) show which operators the driver layer makes slower.
#   python3 op_profile.py MODEL fp16|fp32 [--batches N] [--top K]
import argparse, time
import torch
from torch.profiler import profile, ProfilerActivity
from served_model import served_model

p = argparse.ArgumentParser()
p.add_argument("model"); p.add_argument("dtype", choices=["fp32", "fp16"])
p.add_argument("--batch", type=int, default=30); p.add_argument("--batches", type=int, default=20)
p.add_argument("--top", type=int, default=25)
a = p.parse_args()
m, x_host = served_model(a.model, a.dtype, a.batch)
with torch.no_grad():
    for _ in range(5):
        y = m(x_host.to("cuda"))
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.batches):
        y = m(x_host.to("cuda"))
    torch.cuda.synchronize()
    plain_ms = (time.perf_counter() - t0) * 1e3 / a.batches
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(a.batches):
            y = m(x_host.to("cuda"))
        torch.cuda.synchronize()
print(f"# {a.model} {a.dtype} batch {a.batch}: {plain_ms:.3f} ms a batch unprofiled; self CPU per batch below")
rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
total = sum(e.self_cpu_time_total for e in rows)
print(f"# all operators: {total / a.batches / 1e3:.3f} ms self CPU a batch")
print(f"{'operator':48s} {'calls/batch':>11s} {'self_us/batch':>14s} {'self_us/call':>12s}")
for e in rows[:a.top]:
    print(f"{e.key[:48]:48s} {e.count / a.batches:11.1f} {e.self_cpu_time_total / a.batches:14.1f} "
          f"{e.self_cpu_time_total / max(e.count, 1):12.2f}")
