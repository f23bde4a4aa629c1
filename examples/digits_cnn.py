"""Train a small CNN on scikit-learn's bundled 8x8 digits (the same run as `python -m lucid.demo`).

Run it with `python examples/digits_cnn.py [--epochs N] [--seed S]`; it needs scikit-learn
(`pip install -e ".[demo]"`). The model, data pipeline and training loop live in `lucid.demo`:
read `build_model` and `train` there.
"""

import sys

from lucid.demo import main

if __name__ == "__main__":
    sys.exit(main())
