"""A text classifier written as old PyTorch tutorials write it: batches built with
torch.LongTensor(ids) and torch.FloatTensor(a NumPy array), casts through .type(), a loss log
grown with resize_, and SGD with momentum written out, its buffers made the 0.x way with
p.data.new().resize_as_(p.data).zero_()."""

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, EMBED, FEATURES, CLASSES = 20, 6, 4, 3
BATCH = 4


class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, EMBED, padding_idx=0)
        self.linear = nn.Linear(EMBED + FEATURES, CLASSES)

    def forward(self, ids, features):
        mask = (ids != 0).type(torch.FloatTensor).unsqueeze(2)
        summed = (self.embedding(ids) * mask).sum(1)
        counts = mask.sum(1).clamp(min=1)
        return self.linear(torch.cat([summed / counts, features], 1))


def make_model():
    return BagOfWords()


def _padded_batch(sentences):
    longest = max(len(sentence) for sentence in sentences)
    return torch.LongTensor([sentence + [0] * (longest - len(sentence)) for sentence in sentences])


def train(model, data, steps):
    sentences = [row[:length] for row, length in zip(data["ids"].tolist(), data["lengths"])]
    features, labels = data["features"], data["labels"].tolist()
    momentum = {}
    for p in model.parameters():
        momentum[p] = p.data.new().resize_as_(p.data).zero_()
    history = torch.FloatTensor()
    for step in range(steps):
        start = step * BATCH % len(sentences)
        ids = _padded_batch(sentences[start : start + BATCH])
        x = torch.FloatTensor(features[start : start + BATCH])
        y = torch.LongTensor(labels[start : start + BATCH])
        assert isinstance(ids, torch.LongTensor) and isinstance(x, torch.FloatTensor)
        assert not isinstance(x, torch.DoubleTensor)
        model.zero_grad()
        loss = F.cross_entropy(model(ids, x), y)
        loss.backward()
        yield loss
        for p in model.parameters():
            buffer = momentum[p]
            buffer.mul_(0.9).add_(p.grad.data)
            p.data.add_(buffer, alpha=-0.5)
        history.resize_(step + 1)
        history[step] = loss.item()
    yield
    assert history.size(0) == steps and history.type(torch.DoubleTensor).dtype == torch.float64
