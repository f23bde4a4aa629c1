"""In-place writes through views, as real models write them: a residual added into a slice
of an activation, a scaled transpose, a decoder filling a buffer of zeros step by step, a
bias added through `view`, and a half of the channels gated in place.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES = 8
STEPS = 4


class SliceResidualNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATURES, FEATURES)
        self.mix = nn.Linear(FEATURES // 2, FEATURES // 2)
        self.cell = nn.GRUCell(FEATURES, FEATURES)
        self.bias = nn.Parameter(torch.zeros(FEATURES))
        self.head = nn.Linear(FEATURES * STEPS, 3)

    def forward(self, x):
        h = self.inp(x)
        # the first half of the features takes a residual written in place through a slice
        h[:, : FEATURES // 2] += self.mix(x[:, FEATURES // 2 :])
        # the transpose of the activation scaled in place
        h.t().mul_(0.5)
        # a bias added through a view of another shape
        h.view(-1, 2, FEATURES // 2).add_(self.bias.view(2, FEATURES // 2))
        # a half of the channels gated in place with the other half
        gate, value = torch.tanh(h).chunk(2, dim=1)
        h = torch.cat([value * torch.sigmoid(gate), value], dim=1)
        # a decoder loop filling a preallocated buffer through its slices
        outputs = torch.zeros(x.size(0), STEPS, FEATURES, dtype=x.dtype)
        state = h
        for t in range(STEPS):
            state = self.cell(h, state)
            outputs[:, t].copy_(state)
            outputs[:, t, 0].clamp_(-0.9, 0.9)
        return self.head(F.relu(outputs.reshape(x.size(0), -1)))


def make_model():
    return SliceResidualNet()


def train(model, data, steps):
    x = torch.tensor(data["x"], dtype=torch.get_default_dtype())
    y = torch.tensor(data["y"])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        yield loss
        optimizer.step()
    yield
