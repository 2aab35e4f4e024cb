# The model and input every bench/pytorch program serves: a torchvision model with random
# weights from a fixed seed (no download), in eval mode on the GPU in fp32 or fp16, cuDNN
# deterministic, and a host-memory input batch that each step copies to the GPU as a server
# would.  One place, so that the benchmark (infer.py) and the profile (op_profile.py) measure
# the same thing.
import torch, torchvision


def served_model(model, dtype, batch):
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    dt = torch.float16 if dtype == "fp16" else torch.float32
    m = getattr(torchvision.models, model)().eval().to("cuda", dt)
    return m, torch.randn(batch, 3, 224, 224).to(dt)
