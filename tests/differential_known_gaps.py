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
    ("nn.BCELoss.forward", "float64"): (
        "silent",
        (
            "open: lucid.nn.functional.binary_cross_entropy: nn.BCELoss(...)(<float64 tensor of "
            "shape (3, 4)>, <float32 tensor of shape (3, 4)>): lucid answers; torch raises "
            "RuntimeError: Found dtype Float but expected Double"
        ),
    ),
    ("nn.BCEWithLogitsLoss.forward", "float64"): (
        "values",
        (
            "open: lucid.nn.functional.binary_cross_entropy_with_logits: "
            "nn.BCEWithLogitsLoss(...)(<float64 tensor of shape (3, 4)>, <float32 tensor of shape"
            " (3, 4)>): lucid answers otherwise ('lucid.float64' != torch's 'lucid.float32'); "
            "torch answers"
        ),
    ),
    ("nn.BatchNorm1d", "eps=negative"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.BatchNorm1d(3, eps=-1.0) then called on the"
            " catalogue's input: lucid answers; torch raises ValueError: batch_norm eps must be "
            "positive during training, but got -1.0"
        ),
    ),
    ("nn.BatchNorm2d", "eps=negative"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.BatchNorm2d(3, momentum=0.3, affine=False, "
            "eps=-1.0) then called on the catalogue's input: lucid answers; torch raises "
            "ValueError: batch_norm eps must be positive during training, but got -1.0"
        ),
    ),
    ("nn.BatchNorm3d", "eps=negative"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.BatchNorm3d(2, track_running_stats=False, "
            "eps=-1.0) then called on the catalogue's input: lucid answers; torch raises "
            "ValueError: batch_norm eps must be positive during training, but got -1.0"
        ),
    ),
    ("nn.CTCLoss", "blank=float"): (
        "silent",
        (
            "open: lucid.nn.functional.ctc_loss: nn.CTCLoss(blank=2.5, zero_infinity=True) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: ctc_loss() "
            "received an invalid combination of arguments - got (Tensor, Tensor, Tensor, Tensor, "
            "float, int, bool), but ex"
        ),
    ),
    ("nn.CrossEntropyLoss.forward", "rank_minus_one"): (
        "silent",
        (
            "open: lucid.nn.functional.cross_entropy: nn.CrossEntropyLoss(...)(<float32 tensor of"
            " shape (5,)>, <int64 tensor of shape (4,)>): lucid answers; torch raises ValueError:"
            " For 1D input, 1D target must have size 1, but got target size: 4"
        ),
    ),
    ("nn.Flatten.forward", "zero_d"): (
        "silent",
        (
            "open: Tensor.flatten (lucid/_tensor.py, lucid/ops): nn.Flatten(...)(<float32 tensor "
            "of shape ()>): lucid answers; torch raises IndexError: Dimension out of range "
            "(expected to be in range of [-1, 0], but got 1)"
        ),
    ),
    ("nn.InstanceNorm1d.forward", "empty_batch"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.InstanceNorm1d(...)(<float32 tensor of "
            "shape (0, 3, 5)>): lucid answers; torch raises IndexError: select(): index 0 out of "
            "range for tensor of size [0] at dimension 0"
        ),
    ),
    ("nn.InstanceNorm3d.forward", "empty_batch"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.InstanceNorm3d(...)(<float32 tensor of "
            "shape (0, 2, 2, 3, 2)>): lucid answers; torch raises IndexError: select(): index 0 "
            "out of range for tensor of size [0] at dimension 0"
        ),
    ),
    ("nn.LazyBatchNorm1d", "eps=negative"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.LazyBatchNorm1d(eps=-1.0) then called on "
            "the catalogue's input: lucid answers; torch raises ValueError: batch_norm eps must "
            "be positive during training, but got -1.0"
        ),
    ),
    ("nn.LazyBatchNorm2d", "eps=negative"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.LazyBatchNorm2d(eps=-1.0) then called on "
            "the catalogue's input: lucid answers; torch raises ValueError: batch_norm eps must "
            "be positive during training, but got -1.0"
        ),
    ),
    ("nn.LazyBatchNorm3d", "eps=negative"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.LazyBatchNorm3d(eps=-1.0) then called on "
            "the catalogue's input: lucid answers; torch raises ValueError: batch_norm eps must "
            "be positive during training, but got -1.0"
        ),
    ),
    ("nn.LazyInstanceNorm1d.forward", "empty_batch"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.LazyInstanceNorm1d(...)(<float32 tensor "
            "of shape (0, 3, 5)>): lucid answers; torch raises IndexError: select(): index 0 out "
            "of range for tensor of size [0] at dimension 0"
        ),
    ),
    ("nn.LazyInstanceNorm2d.forward", "empty_batch"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.LazyInstanceNorm2d(...)(<float32 tensor "
            "of shape (0, 2, 3, 4)>): lucid answers; torch raises IndexError: select(): index 0 "
            "out of range for tensor of size [0] at dimension 0"
        ),
    ),
    ("nn.LazyInstanceNorm3d.forward", "empty_batch"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.LazyInstanceNorm3d(...)(<float32 tensor "
            "of shape (0, 2, 2, 3, 2)>): lucid answers; torch raises IndexError: select(): index "
            "0 out of range for tensor of size [0] at dimension 0"
        ),
    ),
    ("nn.LinearCrossEntropyLoss", "options=negative"): (
        "silent",
        (
            "open: lucid.nn.functional.linear_cross_entropy: nn.LinearCrossEntropyLoss(5, 4, "
            "bias=True, options=-100) then called on the catalogue's input: lucid answers; torch "
            "raises AttributeError: 'int' object has no attribute '_adjust'"
        ),
    ),
    ("nn.LinearCrossEntropyLoss", "options=string"): (
        "silent",
        (
            "open: lucid.nn.functional.linear_cross_entropy: nn.LinearCrossEntropyLoss(5, 4, "
            "bias=True, options='a') then called on the catalogue's input: lucid answers; torch "
            "raises AttributeError: 'str' object has no attribute '_adjust'"
        ),
    ),
    ("nn.LinearCrossEntropyLoss.forward", "rank_minus_one"): (
        "silent",
        (
            "open: lucid.nn.functional.cross_entropy: nn.LinearCrossEntropyLoss(...)(<float32 "
            "tensor of shape (5,)>, <int64 tensor of shape (3,)>): lucid answers; torch raises "
            "ValueError: For 1D input, 1D target must have size 1, but got target size: 3"
        ),
    ),
    ("nn.NLLLoss.forward", "int_tensor"): (
        "silent",
        (
            "open: lucid.nn.functional.nll_loss: nn.NLLLoss(...)(<int64 tensor of shape (4, 5)>, "
            "<int64 tensor of shape (4,)>): lucid answers; torch raises NotImplementedError: "
            "\"nll_loss_out_frame\" not implemented for 'Long'"
        ),
    ),
    ("nn.PixelUnshuffle.forward", "empty_batch"): (
        "values",
        (
            "open: lucid.nn.functional.pixel_unshuffle (lucid/ops): "
            "nn.PixelUnshuffle(...)(<float32 tensor of shape (0, 2, 4, 6)>): lucid answers "
            "otherwise (8 != torch's 2); torch answers"
        ),
    ),
    ("nn.Threshold.forward", "int_tensor"): (
        "values",
        (
            "open: lucid.nn.functional.threshold (lucid/ops): nn.Threshold(...)(<int64 tensor of "
            "shape (2, 3, 4)>): lucid answers otherwise ('lucid.float32' != torch's "
            "'lucid.int64'); torch answers"
        ),
    ),
    ("nn.UpsamplingBilinear2d", "size=float_items"): (
        "silent",
        (
            "open: lucid.nn.functional.interpolate: nn.UpsamplingBilinear2d(size=(2.5, 2.5)) then"
            " called on the catalogue's input: lucid answers; torch raises TypeError: expected "
            "size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], but "
            "got size with types [<class"
        ),
    ),
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
    ("nn.utils.weight_norm", "dim=5"): (
        "silent",
        (
            "open: lucid/ops/normalization.py (norm_except_dim, which weight_norm calls): "
            "nn.utils.weight_norm (dim=5): lucid answers; torch raises IndexError: Dimension out "
            "of range (expected to be in range of [-2, 1], but got 5)"
        ),
    ),
    ("nn.utils.weight_norm", "dim=2.5"): (
        "silent",
        (
            "open: lucid/ops/normalization.py (norm_except_dim, which weight_norm calls): "
            "nn.utils.weight_norm (dim=2.5): lucid answers; torch raises TypeError: "
            "norm_except_dim(): argument 'dim' (position 3) must be int, not float"
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
