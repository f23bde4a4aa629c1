"""Known gaps of the differential fuzz test (tests/test_differential_errors.py).

(callable, input kind) -> the category it shows. Empty: no call of the sweep leaks a NumPy
error, answers silently where PyTorch refuses or answers with other values. A gap found later
is fixed, or listed here with the reason it cannot be; the test fails on an unlisted gap and on
a listed one that no longer shows, so the list only shrinks.
"""

KNOWN_GAPS: dict[tuple[str, str], str] = {
    # torch.isin refuses a non-contiguous test_elements of two or more dims with a view error
    # of its own implementation; the answer is well defined, and lucid gives it.
    ("lucid.isin", "noncontiguous"): "silent",
    # lucid.linalg.matmul is lucid.matmul (one function, as torch documents the two), so its
    # errors name matmul, and lucid.matmul checks the dtypes before the shapes
    ("linalg.matmul", "none"): "wording",
    ("linalg.matmul", "python_list"): "wording",
    ("linalg.matmul", "bool_tensor"): "type",
    ("linalg.matmul", "float32_with_float64"): "wording",
    # torch's float16 matrix_exp overflows in half precision and returns NaN where the
    # exponential is finite; lucid computes in float64 and rounds
    ("linalg.matrix_exp", "float16"): "values",
    # PyTorch resolves these overloaded bindings first and lists every overload; lucid names
    # the argument that is not a tensor
    ("linalg.matrix_rank", "none"): "wording",
    ("linalg.matrix_rank", "python_list"): "wording",
    ("linalg.pinv", "none"): "wording",
    ("linalg.pinv", "python_list"): "wording",
}

# Known gaps of the surface sweep (tests/test_differential_errors_modules.py): (target, kind) ->
# (category, reason). A reason beginning "open:" is a gap whose fix lies in a file this sweep's
# owner does not change; it names the call and what PyTorch does.
KNOWN_SURFACE_GAPS: dict[tuple[str, str], tuple[str, str]] = {
    ("nn.utils.clip_grad_value_", "empty_list"): (
        "silent",
        (
            "torch's foreach kernel refuses a parameter list without gradients with an internal "
            'check ("Expected !nested_tensorlist[0].empty()"), an artefact of its implementation:'
            " lucid clips nothing, as torch's own clip_grad_norm_ does for the same parameters"
        ),
    ),
    ("nn.utils.clip_grad_value_", "int_tensor"): (
        "silent",
        (
            "torch's foreach kernel refuses a parameter list without gradients with an internal "
            'check ("Expected !nested_tensorlist[0].empty()"), an artefact of its implementation:'
            " lucid clips nothing, as torch's own clip_grad_norm_ does for the same parameters"
        ),
    ),
    ("nn.utils.clip_grad_value_", "tensor"): (
        "silent",
        (
            "torch's foreach kernel refuses a parameter list without gradients with an internal "
            'check ("Expected !nested_tensorlist[0].empty()"), an artefact of its implementation:'
            " lucid clips nothing, as torch's own clip_grad_norm_ does for the same parameters"
        ),
    ),
    ("distributed.is_mpi_available", "before_init"): (
        "values",
        (
            "lucid.distributed runs on MPI (gloo included): is_mpi_available() is True where "
            "torch's CPU build has no MPI"
        ),
    ),
}
