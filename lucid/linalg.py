"""lucid.linalg: PyTorch's torch.linalg API over lucid's linear-algebra ops.

Example::

    import lucid
    a = lucid.randn(4, 4)
    x = lucid.linalg.solve(a @ a.mT + lucid.eye(4), lucid.ones(4, 1))
    lucid.linalg.eigh(a + a.mT).eigenvalues
"""

from typing import Any

from lucid.ops.decompositions import (
    LinAlgError,
    cholesky_ex,
    cond,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    householder_product,
    inv,
    inv_ex,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_norm,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    solve,
    solve_ex,
    solve_triangular,
    svdvals,
    tensorinv,
    tensorsolve,
    vecdot,
    vector_norm,
)
from lucid.ops.decompositions import linalg_cholesky as cholesky
from lucid.ops.decompositions import linalg_cross as cross
from lucid.ops.decompositions import linalg_det as det
from lucid.ops.decompositions import linalg_diagonal as diagonal
from lucid.ops.decompositions import linalg_matrix_exp as matrix_exp
from lucid.ops.decompositions import linalg_matrix_power as matrix_power
from lucid.ops.decompositions import linalg_qr as qr
from lucid.ops.decompositions import linalg_slogdet as slogdet
from lucid.ops.decompositions import linalg_svd as svd
from lucid.ops.matrices import linalg_vander as vander
from lucid.ops.products import matmul

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh",
    "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "lstsq", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
    "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
    "vector_norm", "ldl_factor", "ldl_factor_ex", "ldl_solve",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
