"""The PyTorch tutorial's polynomial fit with a custom autograd Function (LegendrePolynomial3).

From "Learning PyTorch with Examples": y = a + b * P3(c + d * x) fitted to sin(x), with the
parameters wrapped in a module so the harness can compare them.
"""

import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


class Polynomial(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.full((), 0.0))
        self.b = torch.nn.Parameter(torch.full((), -1.0))
        self.c = torch.nn.Parameter(torch.full((), 0.0))
        self.d = torch.nn.Parameter(torch.full((), 0.3))

    def forward(self, x):
        P3 = LegendrePolynomial3.apply
        return self.a + self.b * P3(self.c + self.d * x)


def make_model():
    return Polynomial()


def train(model, data, steps):
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    learning_rate = 5e-6
    for _ in range(steps):
        y_pred = model(x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        yield loss
        with torch.no_grad():
            for p in model.parameters():
                p -= learning_rate * p.grad
                p.grad = None
    yield
