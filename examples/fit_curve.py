"""lucid's demo: fit a small tanh network to a noisy sine curve with plain lucid ops.

Run it with `python examples/fit_curve.py`; the loss printed every 100 steps falls steadily.
"""

import lucid


def main() -> None:
    lucid.manual_seed(0)
    x = lucid.linspace(-3.0, 3.0, 128).reshape(128, 1)
    y = (2 * x).sin() + 0.05 * lucid.randn(128, 1)

    hidden = 32
    w1 = (lucid.randn(1, hidden) * 0.5).requires_grad_()
    b1 = lucid.zeros(hidden, requires_grad=True)
    w2 = (lucid.randn(hidden, 1) * (1.0 / hidden**0.5)).requires_grad_()
    b2 = lucid.zeros(1, requires_grad=True)
    parameters = [w1, b1, w2, b2]
    learning_rate = 0.05

    for step in range(1001):
        prediction = (x @ w1 + b1).tanh() @ w2 + b2
        loss = ((prediction - y) ** 2).mean()
        for parameter in parameters:
            parameter.grad = None
        loss.backward()
        with lucid.no_grad():
            for parameter in parameters:
                parameter -= learning_rate * parameter.grad
        if step % 100 == 0:
            print(f"step {step:3d}  loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
