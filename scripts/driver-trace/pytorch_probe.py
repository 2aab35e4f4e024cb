# What stock PyTorch reaches in the driver (issue 15; docs/adr/0001-pytorch-interception.md).
# Run it with the tracer first on the library path:
#   scripts/driver-trace/build.sh OUT && DRIVER_TRACE_OUT=trace.txt LD_LIBRARY_PATH=OUT python3 pytorch_probe.py
# PROBE_COMPILE=1 adds torch.compile.
import os, sys, time
import torch, torchvision
t0 = time.time()
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())
m = torchvision.models.resnet50().cuda().eval()
x = torch.randn(30, 3, 224, 224)
with torch.no_grad():
    for _ in range(3):
        y = m(x.cuda())
    with torch.autocast("cuda", dtype=torch.float16):
        y2 = m(x.cuda())
torch.cuda.synchronize()
print("resnet50 inference fp32+fp16 ok", tuple(y.shape), f"{time.time()-t0:.1f}s")
m2 = torchvision.models.resnet18().cuda()
opt = torch.optim.SGD(m2.parameters(), lr=0.01)
for _ in range(2):
    opt.zero_grad()
    loss = m2(torch.randn(8, 3, 224, 224, device="cuda")).sum()
    loss.backward()
    opt.step()
enc = torch.nn.TransformerEncoderLayer(256, 4).cuda()
out = enc(torch.randn(10, 8, 256, device="cuda"))
out.sum().backward()
torch.cuda.synchronize()
print("training steps ok", f"{time.time()-t0:.1f}s")
g = torch.cuda.CUDAGraph()
s = torch.cuda.Stream()
xs = torch.randn(64, 64, device="cuda")
with torch.cuda.stream(s):
    for _ in range(2):
        ys = xs @ xs
    torch.cuda.current_stream().wait_stream(s)
with torch.cuda.graph(g):
    ys = xs @ xs
g.replay(); torch.cuda.synchronize()
print("cuda graph ok")
if os.environ.get("PROBE_COMPILE") == "1":
    try:
        f = torch.compile(lambda a: torch.sin(a) * 2 + a)
        f(torch.randn(1000, device="cuda")); torch.cuda.synchronize()
        print("torch.compile ok", f"{time.time()-t0:.1f}s")
    except Exception as e:
        print("torch.compile failed:", type(e).__name__, str(e)[:200])
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if ".so" in l and ("nvidia" in l or "cuda" in l or "cu" in os.path.basename(l.split()[-1])[:4])})
print("mapped:", " ".join(os.path.basename(p) for p in libs))
