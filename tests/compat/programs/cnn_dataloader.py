"""A small CNN classifier fed by a DataLoader over a TensorDataset (shuffle=False)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.dropout = nn.Dropout(0.0)
        self.fc1 = nn.Linear(8 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


def make_model():
    return Net()


def train(model, data, steps):
    dataset = TensorDataset(torch.tensor(data["images"]), torch.tensor(data["labels"]))
    loader = DataLoader(dataset, batch_size=8, shuffle=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    model.train()
    step = 0
    while step < steps:
        for inputs, labels in loader:
            if step == steps:
                break
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = F.cross_entropy(outputs, labels)
            loss.backward()
            yield loss
            optimizer.step()
            step += 1
    yield
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for inputs, labels in loader:
            _, predicted = torch.max(model(inputs).data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    assert 0 <= correct <= total == len(dataset)
