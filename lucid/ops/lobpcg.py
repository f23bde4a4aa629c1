"""lucid.lobpcg: the k largest (or smallest) eigenpairs of a symmetric, possibly generalised,
eigenproblem A X = B X E by the locally optimal block preconditioned conjugate gradient method
(Knyazev's "basic" method and the "ortho" method with its block orthogonalisation), and the
gradient of those eigenpairs with respect to a dense A.

The iteration runs on NumPy arrays, one matrix of a batch at a time (each converges on its
own schedule); the small dense problems inside it (Cholesky, eigh, QR, triangular solves) go
through lucid.linalg's ops, so a failure there raises PyTorch's error. The backward is written
in lucid ops and can be differentiated again.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._core.dtypes import from_numpy_dtype
from lucid._core.function import Function
from lucid._core.tensor import _wrap
from lucid.factories import randn
from lucid.ops import decompositions
from lucid.ops.arithmetic import reciprocal
from lucid.ops.products import matmul

if TYPE_CHECKING:
    from lucid._tensor import Tensor

__all__ = ["lobpcg"]

# The default tolerance is the square root of these machine epsilons.
_EPSILON = {np.dtype(np.float32): 1.2e-07, np.dtype(np.float64): 2.23e-16}


# ------------------------------------------------------------------- dense kernels
def _times(a: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """a @ x, with a missing matrix (B or iK not given) read as the identity."""
    return x if a is None else a @ x


def _quadratic_form(a: np.ndarray | None, s: np.ndarray) -> np.ndarray:
    return s.T @ _times(a, s)


def _symmetric_eigen(matrix: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of a symmetric matrix from its upper triangle, largest first if asked."""
    values, vectors = decompositions.eigh(_wrap(matrix), UPLO="U")
    values, vectors = values._data, vectors._data
    if largest:
        return values[::-1].copy(), vectors[:, ::-1].copy()
    return values, vectors


def _orthonormal_basis(matrix: np.ndarray) -> np.ndarray:
    return decompositions.linalg_qr(_wrap(matrix)).Q._data


def _norm(array: np.ndarray) -> float:
    return float(np.sqrt(np.sum(array * array)))


# ------------------------------------------------------------------------ the worker
class LOBPCG:
    """One LOBPCG run on one matrix. A tracker is called with it after every iteration: its
    A, B, iK, X, E, R, S are lucid tensors, its settings and counters the dictionaries
    iparams, fparams, bparams, ivars, fvars, bvars, tvars under PyTorch's keys, and setting
    bvars["force_stop"] ends the run."""

    def __init__(self, A: np.ndarray, B: np.ndarray | None, X: np.ndarray,
                 iK: np.ndarray | None, iparams: dict[str, int], fparams: dict[str, float],
                 bparams: dict[str, bool], method: str, tracker: Any) -> None:  # fmt: skip
        self._a, self._b, self._ik = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method = method
        self.tracker = tracker
        m, n = iparams["m"], iparams["n"]
        self._x = X.copy()
        self._e = np.zeros(n, X.dtype)
        self._r = np.zeros((m, n), X.dtype)
        self._s = np.zeros((m, 3 * n), X.dtype)
        self._tvars: dict[str, np.ndarray] = {}
        self.ivars: dict[str, int] = {"istep": 0}
        self.fvars: dict[str, float] = {"_": 0.0}
        self.bvars: dict[str, bool] = {"_": False}

    # the state as tensors, for a tracker
    A = property(lambda self: _wrap(self._a))
    B = property(lambda self: None if self._b is None else _wrap(self._b))
    iK = property(lambda self: None if self._ik is None else _wrap(self._ik))
    X = property(lambda self: _wrap(self._x))
    E = property(lambda self: _wrap(self._e))
    R = property(lambda self: _wrap(self._r))
    S = property(lambda self: _wrap(self._s))
    tvars = property(lambda self: {key: _wrap(value) for key, value in self._tvars.items()})

    def update(self) -> None:
        """One iteration (the first one also measures the norms the convergence test uses)."""
        if self.ivars["istep"] == 0:
            x_norm = _norm(self._x)
            self.fvars["X_norm"] = x_norm
            self.fvars["A_norm"] = _norm(self._a @ self._x) / x_norm
            self.fvars["B_norm"] = _norm(_times(self._b, self._x)) / x_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self) -> None:
        self._r = self._a @ self._x - _times(self._b, self._x) * self._e

    def update_converged_count(self) -> int:
        """The number of leading eigenpairs whose backward-stable relative residual is below
        tol (Duersch et al. 2018, section 4.3); later pairs count only after earlier ones."""
        previous = self.ivars["converged_count"]
        x, r = self._x, self._r
        scale = self.fvars["A_norm"] + np.abs(self._e[: x.shape[-1]]) * self.fvars["B_norm"]
        with np.errstate(divide="ignore", invalid="ignore"):
            error = np.sqrt(np.sum(r * r, axis=0)) / (np.sqrt(np.sum(x * x, axis=0)) * scale)
        converged = error < self.fparams["tol"]
        count = int(np.argmin(converged)) if not converged.all() else converged.size
        if count < previous:
            raise AssertionError(
                f"the number of converged eigenpairs (was {previous}, got {count}) cannot decrease"
            )
        self.ivars["converged_count"] = count
        self._tvars["rerr"] = error
        return count

    def stop_iteration(self) -> bool:
        return (
            self.bvars.get("force_stop", False)
            or self.ivars["iterations_left"] == 0
            or self.ivars["converged_count"] >= self.iparams["k"]
        )

    def run(self) -> None:
        self.update()
        if self.tracker is not None:
            self.tracker(self)
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.tracker(self)

    # -------------------------------------------------------------------- the methods
    def _update_basic(self) -> None:
        """Knyazev's method: Rayleigh-Ritz on [X, P, iK R] made B-orthonormal by Cholesky."""
        n, largest = self.iparams["n"], self.bparams["largest"]
        converged, end = self.ivars["converged_count"], self.ivars["converged_end"]
        if self.ivars["istep"] == 0:
            transform = self._rayleigh_ritz_transform(self._x)
            reduced = _quadratic_form(_quadratic_form(self._a, self._x), transform)
            values, vectors = _symmetric_eigen(reduced, largest)
            self._x = self._x @ (transform @ vectors)
            self._e = values.copy()
            directions = 0
            self.update_residual()
            converged = self.update_converged_count()
        else:
            basis = self._s[:, converged:end]
            transform = self._rayleigh_ritz_transform(basis)
            reduced = _quadratic_form(_quadratic_form(self._a, basis), transform)
            values, vectors = _symmetric_eigen(reduced, largest)
            self._x[:, converged:] = basis @ (transform @ vectors[:, : n - converged])
            self._e[converged:] = values[: n - converged]
            step = basis @ (transform @ vectors[:, n : 2 * n - converged])
            directions = step.shape[-1]
            self.update_residual()
            converged = self.update_converged_count()
            self._s[:, n : n + directions] = step
        self._s[:, :n] = self._x
        preconditioned = _times(self._ik, self._r[:, converged:])
        end = n + directions + preconditioned.shape[-1]
        self.ivars["converged_end"] = end
        self._s[:, n + directions : end] = preconditioned

    def _update_ortho(self) -> None:
        """Rayleigh-Ritz on a basis kept B-orthonormal by _orthogonalize, no Cholesky of it."""
        n, largest = self.iparams["n"], self.bparams["largest"]
        converged, end = self.ivars["converged_count"], self.ivars["converged_end"]
        if self.ivars["istep"] == 0:
            transform = self._rayleigh_ritz_transform(self._x)
            reduced = _quadratic_form(_quadratic_form(self._a, self._x), transform)
            _, vectors = _symmetric_eigen(reduced, largest)
            # as PyTorch's, the first step leaves E at zero: the first residual is A X
            self._x = self._x @ (transform @ vectors)
            self.update_residual()
            directions = 0
            converged = self.update_converged_count()
            self._s[:, :n] = self._x
            search = self._orthogonalize(self._r, self._x)
        else:
            basis = self._s[:, converged:end]
            values, vectors = _symmetric_eigen(_quadratic_form(self._a, basis), largest)
            self._x[:, converged:] = basis @ vectors[:, : n - converged]
            self._e[converged:] = values[: n - converged]
            rest = vectors[:, n - converged :]
            step = basis @ (rest @ _orthonormal_basis(rest[: n - converged].T))
            directions = step.shape[-1]
            self.update_residual()
            converged = self.update_converged_count()
            self._s[:, :n] = self._x
            self._s[:, n : n + directions] = step
            search = self._orthogonalize(self._r[:, converged:], self._s[:, : n + directions])
        end = n + directions + search.shape[-1]
        self.ivars["converged_end"] = end
        self._s[:, n + directions : end] = search

    def _rayleigh_ritz_transform(self, basis: np.ndarray) -> np.ndarray:
        """Ri with Ri^T (S^T B S) Ri = I, upper triangular: the Cholesky factor of S^T B S,
        equilibrated by its diagonal first, inverted. Rayleigh-Ritz on S then reduces to the
        standard eigenproblem of Ri^T S^T A S Ri."""
        gram = _quadratic_form(self._b, basis)
        scale = np.diagonal(gram) ** -0.5
        factor = decompositions.cholesky_ex(
            _wrap((gram * scale) * scale[:, None]), upper=True, check_errors=False
        )
        if factor.info._data.any():
            # as PyTorch's basic method, a B-rank-deficient basis is an error
            decompositions.linalg_cholesky(_wrap((gram * scale) * scale[:, None]), upper=True)
        # Ri R = diag(scale)
        return decompositions.solve_triangular(
            factor.L, _wrap(np.diag(scale)), upper=True, left=False
        )._data

    def _svqb(self, u: np.ndarray, drop: bool, tau: float) -> np.ndarray:
        """U made B-orthonormal through the eigenpairs of its equilibrated Gram matrix
        (Duersch 2015, algorithm 4); with `drop`, the directions whose eigenvalue is below
        tau times the largest are dropped, else those eigenvalues are raised to it."""
        if u.size == 0:
            return u
        gram = _quadratic_form(self._b, u)
        diagonal = np.diagonal(gram)
        if (diagonal == 0).any():
            # an exactly zero column has no direction to normalise: drop it
            u = u[:, diagonal != 0]
            if u.size == 0:
                return u
            gram = _quadratic_form(self._b, u)
            diagonal = np.diagonal(gram)
        scale = diagonal**-0.5
        values, vectors = _symmetric_eigen((gram * scale[:, None]) * scale, False)
        threshold = tau * np.abs(values).max()
        if drop:
            keep = values > threshold
            values, vectors, scale = values[keep], vectors[:, keep], scale[keep]
        else:
            values = np.where(values < threshold, threshold, values)
        return (u * scale) @ (vectors * values**-0.5)

    def _orthogonalize(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """U made B-orthonormal and B-orthogonal to V (Duersch 2015, algorithm 3, or with
        ortho_use_drop algorithm 6): project V out, re-orthonormalise, and repeat while either
        relative error stays above ortho_tol. Empty when every column of U lies in span(V)."""
        m = self.iparams["m"]
        tolerance = self.fparams["ortho_tol"]
        tau_drop, tau_replace = self.fparams["ortho_tol_drop"], self.fparams["ortho_tol_replace"]
        use_drop = self.bparams["ortho_use_drop"]
        for key in [key for key in self.fvars if key.startswith("ortho_")]:
            if key.endswith("_rerr"):
                self.fvars.pop(key)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        bv_norm = _norm(_times(self._b, v))
        bu = _times(self._b, u)
        vbu = v.T @ bu
        i = j = 0
        for i in range(self.iparams["ortho_i_max"]):
            u = u - v @ vbu
            drop = False
            tau = tau_drop
            for j in range(self.iparams["ortho_j_max"]):
                if use_drop:
                    u = self._svqb(u, drop, tau)
                    drop, tau = True, tau_replace
                else:
                    u = self._svqb(u, False, tau_replace)
                if u.size == 0:
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return u
                bu = _times(self._b, u)
                ubu = u.T @ bu
                residual = _norm(ubu - np.eye(ubu.shape[-1], dtype=ubu.dtype))
                with np.errstate(divide="ignore"):
                    error = residual / (_norm(bu) * _norm(u))
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = error
                if error < tolerance:
                    break
            vbu = v.T @ bu
            with np.errstate(divide="ignore"):
                error = _norm(vbu) / (bv_norm * _norm(u))
            self.fvars[f"ortho_VBU_rerr[{i}]"] = error
            if error < tolerance:
                break
            if m < u.shape[-1] + v.shape[-1]:
                size = m if self._b is None else self._b.shape[-1]
                raise ValueError(
                    f"Overdetermined shape of U: #B-cols(={size}) >= #U-cols(={u.shape[-1]}) "
                    f"+ #V-cols(={v.shape[-1]}) must hold"
                )
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return u


def _settings(dtype: np.dtype, m: int, k: int, n: int, niter: Any, tol: Any, largest: Any,
              method: Any, ortho_iparams: Any, ortho_fparams: Any,
              ortho_bparams: Any) -> tuple[dict, dict, dict, str]:  # fmt: skip
    if tol is None:
        tol = _EPSILON[dtype] ** 0.5
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        fparams.setdefault("ortho_tol", tol)
        fparams.setdefault("ortho_tol_drop", tol)
        fparams.setdefault("ortho_tol_replace", tol)
        bparams.setdefault("ortho_use_drop", False)
    return iparams, fparams, bparams, method


def _lobpcg_arrays(a: np.ndarray, b: np.ndarray | None, x: np.ndarray | None,
                   ik: np.ndarray | None, k: Any, n: Any, niter: Any, tol: Any, largest: Any,
                   method: Any, tracker: Any, ortho_iparams: Any, ortho_fparams: Any,
                   ortho_bparams: Any) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The eigenpairs of every matrix of the batch, as PyTorch's checks and defaults read the
    arguments."""
    if a.shape[-2] != a.shape[-1]:
        raise AssertionError(f"A must be square, got shape lucid.Size({list(a.shape)})")
    if b is not None and a.shape != b.shape:
        raise AssertionError(
            f"A and B must have same shape, got lucid.Size({list(a.shape)}) vs "
            f"lucid.Size({list(b.shape)})"
        )
    # integer matrices iterate in float32, as PyTorch's do (and then fail its matmul)
    dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float32)
    if dtype == np.float16 and tol is None:
        raise KeyError(from_numpy_dtype(dtype))
    m = a.shape[-1]
    k = (1 if x is None else x.shape[-1]) if k is None else k
    n = (k if n is None else n) if x is None else x.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})"
        )
    iparams, fparams, bparams, method = _settings(
        dtype, m, k, n, niter, tol, largest, method, ortho_iparams, ortho_fparams, ortho_bparams
    )
    batch_shape = a.shape[:-2]
    count = math.prod(batch_shape)
    matrices = a.reshape(count, m, m)
    metrics = None if b is None else b.reshape(count, m, m)
    starts = None if x is None else x.reshape((count,) + x.shape[-2:])
    values = np.empty((count, k), dtype)
    vectors = np.empty((count, m, k), dtype)
    for index in range(count):
        if starts is None:
            start = randn(m, n, dtype=from_numpy_dtype(dtype))._data
        else:
            start = starts[index]
        if start.shape != (m, n):
            raise AssertionError(
                f"X shape mismatch: got lucid.Size({list(start.shape)}), expected {(m, n)}"
            )
        matrix = matrices[index]
        metric = None if metrics is None else metrics[index]
        # PyTorch's first products of A and B with X name a dtype mismatch
        if matrix.dtype != start.dtype:
            matmul(_wrap(matrix), _wrap(start))
        if metric is not None and metric.dtype != start.dtype:
            matmul(_wrap(metric), _wrap(start))
        if count > 1:
            iparams["batch_index"] = index
        worker = LOBPCG(matrix, metric, start, ik, iparams, fparams, bparams, method, tracker)
        worker.run()
        values[index] = worker._e[:k]
        vectors[index] = worker._x[:, :k]
    return values.reshape(batch_shape + (k,)), vectors.reshape(batch_shape + (m, k))


# --------------------------------------------------------------------------- backward
def _complete_eigenspace_grad(grad_values: Tensor, grad_vectors: Tensor, values: Tensor,
                              vectors: Tensor) -> Tensor:  # fmt: skip
    """U (diag(dD) + (U^T dU) * F) U^T with F_ij = 1 / (d_j - d_i), F_ii = 0: the gradient
    within span(U) (all of it when U is square)."""
    differences = values.unsqueeze(-2) - values.unsqueeze(-1)
    identity = _wrap(np.eye(values.shape[-1], dtype=values._data.dtype))
    # the diagonal of `differences` is exactly zero: shift it to one, invert, then clear it
    inverse = reciprocal(differences + identity) * (1 - identity)
    inner = decompositions._diag_embed(grad_values) + matmul(vectors.mT, grad_vectors) * inverse
    return matmul(vectors, matmul(inner, vectors.mT))


def _partial_eigenspace_grad(grad_vectors: Tensor, a: Tensor, values: Tensor,
                             vectors: Tensor) -> Tensor:  # fmt: skip
    """The gradient's part outside span(U): -sum_i y_i u_i^T, where y_i solves
    (A - d_i I) y_i = P g_i on the complement of span(U) (P = I - U U^T its projector, g_i
    the gradient of u_i). On span(U) the system is made the identity, so each y_i is one
    solve of P (A - d_i I) P + U U^T, a matrix that stays differentiable in A, U and D."""
    m = a.shape[-1]
    identity = _wrap(np.eye(m, dtype=a._data.dtype))
    outer = matmul(vectors, vectors.mT)
    projector = identity - outer
    shifted = a.unsqueeze(-3) - values.unsqueeze(-1).unsqueeze(-1) * identity
    system = matmul(projector.unsqueeze(-3), matmul(shifted, projector.unsqueeze(-3)))
    system = system + outer.unsqueeze(-3)
    right = matmul(projector, grad_vectors).mT.unsqueeze(-1)
    solutions = decompositions.solve(system, right).squeeze(-1)
    return -matmul(solutions.mT, vectors.mT)


class LOBPCGAutogradFunction(Function):
    """lobpcg of a (symmetrised) A that requires grad; the gradient of the k eigenpairs is
    the symmetric-eigenproblem one, restricted to the eigenspace found when k < m."""

    _backward_name = "LOBPCGAutogradFunctionBackward"
    _op_name = "lobpcg"

    @staticmethod
    def forward(ctx, a, b, x, ik, options):
        values, vectors = _lobpcg_arrays(
            a._data,
            None if b is None else b._data,
            None if x is None else x._data,
            None if ik is None else ik._data,
            **options,
        )
        values, vectors = _wrap(values), _wrap(vectors)
        ctx.has_metric = b is not None
        ctx.save_for_backward(a, values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        if ctx.has_metric:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        a, values, vectors = ctx.saved_tensors
        grad = _complete_eigenspace_grad(grad_values, grad_vectors, values, vectors)
        if vectors.shape[-1] != vectors.shape[-2]:
            grad = grad + _partial_eigenspace_grad(grad_vectors, a, values, vectors)
        return grad, None, None, None, None


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker: Any = None, ortho_iparams: dict[str, int] | None = None,
           ortho_fparams: dict[str, float] | None = None,
           ortho_bparams: dict[str, bool] | None = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """The k largest (largest=False: smallest) eigenvalues E and eigenvectors X of the
    symmetric positive-definite generalised problem A X = B X diag(E) (B = I when None), by
    LOBPCG: method "ortho" (the default) or "basic", a start X (random when None: n columns,
    n = k by default), a preconditioner iK (basic method), at most niter iterations (-1: until
    converged) to a relative residual tol. Differentiable in A (symmetrised first, so its
    gradient is symmetric); a tracker is called with the worker after every iteration.

    Example::

        a = lucid.randn(30, 30, dtype=lucid.float64)
        values, vectors = lucid.lobpcg(a @ a.mT, k=3)
    """
    options = {
        "k": k, "n": n, "niter": niter, "tol": tol, "largest": largest, "method": method,
        "tracker": tracker, "ortho_iparams": ortho_iparams, "ortho_fparams": ortho_fparams,
        "ortho_bparams": ortho_bparams,
    }  # fmt: skip
    if A.requires_grad or (B is not None and B.requires_grad):
        # the gradient of a symmetric problem is symmetric only through a symmetric input;
        # it keeps A - lr * grad symmetric in a first-order step
        symmetric_a = (A + A.mT) / 2
        symmetric_b = None if B is None else (B + B.mT) / 2
        return LOBPCGAutogradFunction.apply(symmetric_a, symmetric_b, X, iK, options)
    values, vectors = _lobpcg_arrays(
        A._data,
        None if B is None else B._data,
        None if X is None else X._data,
        None if iK is None else iK._data,
        **options,
    )
    return _wrap(values), _wrap(vectors)
