"""An MLP classifier: nn.Sequential, CrossEntropyLoss, SGD with momentum and weight decay."""

import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(
        nn.Linear(8, 32),
        nn.ReLU(),
        nn.Linear(32, 16),
        nn.Tanh(),
        nn.Linear(16, 4),
    )


def train(model, data, steps):
    x = torch.tensor(data["x"])
    y = torch.tensor(data["y"])
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        yield loss
        optimizer.step()
    yield
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    assert 0.0 <= accuracy <= 1.0
