# An inference loop for tests/gpu/run-pytorch-takeover-gpu.sh (issue 15): a torchvision model
# (random weights, fixed seed: no download) under deterministic settings serves N batches, each
# input made on the host from its own seed and copied to the device as a server would.  Prints
# one line per batch with a SHA-256 of the output's bytes, so a run through a fault can be
# compared batch by batch with a fault-free one; "loop: ready" after --ready batches (the test
# starts the fault then) and "loop: done" at the end.
import argparse, hashlib, sys, time
import torch, torchvision

p = argparse.ArgumentParser()
p.add_argument("--model", default="resnet50")
p.add_argument("--batches", type=int, default=60)
p.add_argument("--batch", type=int, default=30)
p.add_argument("--ready", type=int, default=10)
p.add_argument("--pause-ms", type=float, default=20.0, help="between batches: the fault lands mid-run")
a = p.parse_args()

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True
m = getattr(torchvision.models, a.model)().eval().to("cuda")
t_start = time.perf_counter()
with torch.no_grad():
    for i in range(a.batches):
        g = torch.Generator().manual_seed(1000 + i)
        x = torch.randn(a.batch, 3, 224, 224, generator=g)
        t0 = time.perf_counter()
        y = m(x.to("cuda"))
        out = y.cpu().numpy().tobytes()
        ms = (time.perf_counter() - t0) * 1e3
        print("batch %d sha256=%s ms=%.1f" % (i, hashlib.sha256(out).hexdigest()[:32], ms), flush=True)
        if i + 1 == a.ready:
            print("loop: ready", flush=True)
        time.sleep(a.pause_ms / 1e3)
print("loop: done in %.1f s" % (time.perf_counter() - t_start), flush=True)
sys.stdout.flush()
