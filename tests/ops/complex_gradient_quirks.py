"""Catalogue rows whose complex gradients follow PyTorch's even where PyTorch's are not the
conjugate Wirtinger derivative: the complex parity columns (tests/ops/test_op_catalogue.py) hold
them to torch, so the complex gradcheck columns leave them out.
"""

TORCH_COMPLEX_GRADIENT_QUIRKS: dict[str, str] = {
    "silu_inplace": "torch's in-place silu backward on complex inputs is its real formula, "
    "not conjugated",
    "scatter_reduce_inplace": "torch's in-place scatter_reduce prod backward on complex inputs "
    "is its real formula, not conjugated",
    "cholesky_inverse": "LAPACK (and so torch) reads a Cholesky factor's diagonal as real, "
    "while its gradient has an imaginary part there: the row's complex factor is not one",
}
