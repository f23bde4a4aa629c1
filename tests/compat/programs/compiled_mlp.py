"""An MLP trained through torch.compile, with the torch._dynamo and torch._inductor settings
training scripts set beside it."""

import torch
import torch._dynamo
import torch._inductor.config
import torch.nn as nn

torch._dynamo.config.suppress_errors = True
torch._dynamo.config.cache_size_limit = 64
torch._dynamo.config.optimize_ddp = False
torch._inductor.config.coordinate_descent_tuning = True
torch._inductor.config.fallback_random = True
torch._inductor.config.triton.cudagraphs = False
torch._dynamo.reset()


@torch._dynamo.disable
def as_float(loss):
    return float(loss)


def make_model():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def train(model, data, steps):
    x = torch.tensor(data["x"])
    y = torch.tensor(data["y"])
    torch._dynamo.mark_dynamic(x, 0)
    assert not torch._dynamo.is_compiling()
    compiled = torch.compile(model, backend="eager", dynamic=False)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch._dynamo.config.patch(verbose=True):
        for _ in range(steps):
            optimizer.zero_grad()
            loss = criterion(compiled(x), y)
            loss.backward()
            assert as_float(loss) == loss.item()
            yield loss
            optimizer.step()
    yield
