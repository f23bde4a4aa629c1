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
    # open: lucid/nn/functional.py (cosine_similarity): lucid.cosine_similarity(None, x) and
    # F.cosine_similarity(1.5, x) / ([1.0, 2.0], x) raise AttributeError ("'NoneType' object has
    # no attribute 'norm'"); torch raises TypeError: cosine_similarity(): argument 'x1'
    # (position 1) must be Tensor, not NoneType
    **{
        (name, kind): "internal"
        for name in ("lucid.cosine_similarity", "F.cosine_similarity")
        for kind in ("none", "python_scalar", "python_list")
    },
    # open: lucid/nn/functional.py (pairwise_distance): lucid.pairwise_distance(None, x) and
    # F.pairwise_distance(1.5, x) / ([1.0, 2.0], x) raise AttributeError ("... has no attribute
    # 'ndim'"); torch raises TypeError: pairwise_distance(): argument 'x1' (position 1) must be
    # Tensor, not NoneType
    **{
        (name, kind): "internal"
        for name in ("lucid.pairwise_distance", "F.pairwise_distance")
        for kind in ("none", "python_scalar", "python_list")
    },
    # open: lucid/nn/functional.py (softshrink): F.softshrink(None) / (1.5) / ([1.0, 2.0]) raise
    # AttributeError ("... has no attribute 'dtype'"); torch raises TypeError: softshrink():
    # argument 'input' (position 1) must be Tensor, not NoneType
    **{("F.softshrink", kind): "internal" for kind in ("none", "python_scalar", "python_list")},
    # open: lucid/ops/activations.py (prelu): x.prelu(None) / x.prelu(1.5) / x.prelu([1.0, 2.0])
    # raise AttributeError ("... has no attribute 'ndim'"); torch raises TypeError: prelu():
    # argument 'weight' (position 1) must be Tensor, not NoneType
    **{("Tensor.prelu", kind): "internal" for kind in ("none", "python_scalar", "python_list")},
}

# Known gaps of the surface sweep (tests/test_differential_errors_modules.py): (target, kind) ->
# (category, reason). A reason beginning "open:" is a gap whose fix lies in a file this sweep's
# owner does not change; it names the call and what PyTorch does.
KNOWN_SURFACE_GAPS: dict[tuple[str, str], tuple[str, str]] = {
    ("nn.AdaptiveAvgPool2d", "output_size=float_items"): (
        "silent",
        (
            "open: lucid.nn.functional.adaptive_avg_pool2d: nn.AdaptiveAvgPool2d((2.5, 2.5)) then"
            " called on the catalogue's input: lucid answers; torch raises TypeError: "
            "adaptive_avg_pool2d(): argument 'output_size' (position 2) must be tuple of ints, "
            "but found element of type float at pos"
        ),
    ),
    ("nn.AdaptiveAvgPool2d", "output_size=none"): (
        "silent",
        (
            "open: lucid.nn.functional.adaptive_avg_pool2d: nn.AdaptiveAvgPool2d(None) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: object of "
            "type 'NoneType' has no len()"
        ),
    ),
    ("nn.AdaptiveAvgPool3d", "output_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional.adaptive_avg_pool3d: nn.AdaptiveAvgPool3d(2.5) then called"
            " on the catalogue's input: lucid answers; torch raises TypeError: object of type "
            "'float' has no len()"
        ),
    ),
    ("nn.AdaptiveAvgPool3d", "output_size=none"): (
        "silent",
        (
            "open: lucid.nn.functional.adaptive_avg_pool3d: nn.AdaptiveAvgPool3d(None) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: object of "
            "type 'NoneType' has no len()"
        ),
    ),
    ("nn.AdaptiveMaxPool2d", "output_size=none"): (
        "silent",
        (
            "open: lucid.nn.functional.adaptive_max_pool2d_with_indices: "
            "nn.AdaptiveMaxPool2d(None) then called on the catalogue's input: lucid answers; "
            "torch raises TypeError: object of type 'NoneType' has no len()"
        ),
    ),
    ("nn.AdaptiveMaxPool3d", "output_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional.adaptive_max_pool3d_with_indices: "
            "nn.AdaptiveMaxPool3d(2.5, return_indices=True) then called on the catalogue's input:"
            " lucid answers; torch raises TypeError: object of type 'float' has no len()"
        ),
    ),
    ("nn.AdaptiveMaxPool3d", "output_size=none"): (
        "silent",
        (
            "open: lucid.nn.functional.adaptive_max_pool3d_with_indices: "
            "nn.AdaptiveMaxPool3d(None, return_indices=True) then called on the catalogue's "
            "input: lucid answers; torch raises TypeError: object of type 'NoneType' has no len()"
        ),
    ),
    ("nn.AlphaDropout", "p=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.alpha_dropout: nn.AlphaDropout(nan) then called on the "
            "catalogue's input: lucid answers; torch raises RuntimeError: dropout probability has"
            " to be between 0 and 1, but got nan"
        ),
    ),
    ("nn.AvgPool1d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.avg_pool1d: nn.AvgPool1d(3, stride=2.5, padding=1) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: "
            "avg_pool1d(): argument 'stride' (position 3) must be tuple of ints, but found "
            "element of type float at pos 0"
        ),
    ),
    ("nn.AvgPool2d", "kernel_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional.avg_pool2d: nn.AvgPool2d(2.5, ceil_mode=True, "
            "count_include_pad=False) then called on the catalogue's input: lucid answers; torch "
            "raises TypeError: avg_pool2d(): argument 'kernel_size' (position 2) must be tuple of"
            " ints, not float"
        ),
    ),
    ("nn.AvgPool2d", "divisor_override=string"): (
        "numpy",
        (
            "open: lucid/ops/pooling.py (forward): nn.AvgPool2d(2, ceil_mode=True, "
            "count_include_pad=False, divisor_override='a') then called on the catalogue's input:"
            " lucid leaks ValueError: could not convert string to float: np.str_('a'); torch "
            "raises TypeError: avg_pool2d(): argument 'divisor_override' (position 7) must be "
            "int, not str"
        ),
    ),
    ("nn.AvgPool3d", "divisor_override=float"): (
        "silent",
        (
            "open: lucid.nn.functional.avg_pool3d: nn.AvgPool3d(2, divisor_override=2.5) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: "
            "avg_pool3d(): argument 'divisor_override' (position 7) must be int, not float"
        ),
    ),
    ("nn.AvgPool3d", "divisor_override=string"): (
        "numpy",
        (
            "open: lucid/ops/pooling.py (forward): nn.AvgPool3d(2, divisor_override='a') then "
            "called on the catalogue's input: lucid leaks ValueError: could not convert string to"
            " float: np.str_('a'); torch raises TypeError: avg_pool3d(): argument "
            "'divisor_override' (position 7) must be int, not str"
        ),
    ),
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
    ("nn.BatchNorm1d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.BatchNorm1d(3, eps=None) then called on the"
            " catalogue's input: lucid answers; torch raises TypeError: '<=' not supported "
            "between instances of 'NoneType' and 'float'"
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
    ("nn.BatchNorm2d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.BatchNorm2d(3, momentum=0.3, affine=False, "
            "eps=None) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: '<=' not supported between instances of 'NoneType' and 'float'"
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
    ("nn.BatchNorm3d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.BatchNorm3d(2, track_running_stats=False, "
            "eps=None) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: '<=' not supported between instances of 'NoneType' and 'float'"
        ),
    ),
    ("nn.BatchNorm3d", "momentum=string"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.BatchNorm3d(2, track_running_stats=False, "
            "momentum='a') then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: batch_norm(): argument 'momentum' (position 7) must be float, not str"
        ),
    ),
    ("nn.Bilinear.forward", "none"): (
        "internal",
        (
            "open: lucid/ops/linear.py (bilinear): nn.Bilinear(...)(None, <float32 tensor of "
            "shape (5, 3)>): lucid leaks AttributeError: 'NoneType' object has no attribute "
            "'shape'; torch raises TypeError: bilinear(): argument 'input1' (position 1) must be "
            "Tensor, not NoneType"
        ),
    ),
    ("nn.Bilinear.forward", "python_list"): (
        "internal",
        (
            "open: lucid/ops/linear.py (bilinear): nn.Bilinear(...)(<list>, <float32 tensor of "
            "shape (5, 3)>): lucid leaks AttributeError: 'list' object has no attribute 'shape'; "
            "torch raises TypeError: bilinear(): argument 'input1' (position 1) must be Tensor, "
            "not list"
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
    ("nn.ConstantPad1d", "value=string"): (
        "numpy",
        (
            "open: lucid/ops/sampling.py (forward): nn.ConstantPad1d(2, 'a') then called on the "
            "catalogue's input: lucid leaks ValueError: could not convert string to float: "
            "np.str_('a'); torch raises TypeError: pad(): argument 'value' (position 4) must be "
            "float, not str"
        ),
    ),
    ("nn.ConstantPad2d", "value=string"): (
        "numpy",
        (
            "open: lucid/ops/sampling.py (forward): nn.ConstantPad2d((1, 0, 2, 1), 'a') then "
            "called on the catalogue's input: lucid leaks ValueError: could not convert string to"
            " float: np.str_('a'); torch raises TypeError: pad(): argument 'value' (position 4) "
            "must be float, not str"
        ),
    ),
    ("nn.ConstantPad3d", "value=string"): (
        "numpy",
        (
            "open: lucid/ops/sampling.py (forward): nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 'a') "
            "then called on the catalogue's input: lucid leaks ValueError: could not convert "
            "string to float: np.str_('a'); torch raises TypeError: pad(): argument 'value' "
            "(position 4) must be float, not str"
        ),
    ),
    ("nn.Conv1d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv1d: nn.Conv1d(3, 4, 3, padding=1, stride=2.5) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: conv1d() "
            "received an invalid combination of arguments - got (Tensor, Parameter, Parameter, "
            "tuple, tuple, tuple, int), bu"
        ),
    ),
    ("nn.Conv1d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv1d: nn.Conv1d(3, 4, 3, padding=2.5) then called on the"
            " catalogue's input: lucid answers; torch raises TypeError: conv1d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.Conv1d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv1d: nn.Conv1d(3, 4, 3, padding=1, dilation=2.5) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: conv1d() "
            "received an invalid combination of arguments - got (Tensor, Parameter, Parameter, "
            "tuple, tuple, tuple, int), bu"
        ),
    ),
    ("nn.Conv2d", "kernel_size=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv2d: nn.Conv2d(4, 6, 0, stride=2, padding=1, groups=2, "
            "padding_mode='reflect') then called on the catalogue's input: lucid answers; torch "
            "raises RuntimeError: could not create a primitive descriptor for the convolution "
            "forward propagation primitive. Run workload with environment"
        ),
    ),
    ("nn.Conv2d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv2d: nn.Conv2d(4, 6, 3, stride=2.5, padding=1, "
            "groups=2, padding_mode='reflect') then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: conv2d() received an invalid combination of "
            "arguments - got (Tensor, Parameter, Parameter, tuple, tuple, tuple, int), bu"
        ),
    ),
    ("nn.Conv2d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv2d: nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2, "
            "padding_mode='reflect', dilation=2.5) then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: conv2d() received an invalid combination of "
            "arguments - got (Tensor, Parameter, Parameter, tuple, tuple, tuple, int), bu"
        ),
    ),
    ("nn.Conv3d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv3d: nn.Conv3d(2, 3, 2, padding=1, bias=False, "
            "padding_mode='circular', stride=2.5) then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: conv3d() received an invalid combination of "
            "arguments - got (Tensor, Parameter, NoneType, tuple, tuple, tuple, int), but"
        ),
    ),
    ("nn.Conv3d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv3d: nn.Conv3d(2, 3, 2, padding=1, bias=False, "
            "padding_mode='circular', dilation=2.5) then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: conv3d() received an invalid combination of "
            "arguments - got (Tensor, Parameter, NoneType, tuple, tuple, tuple, int), but"
        ),
    ),
    ("nn.ConvTranspose1d", "out_channels=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.ConvTranspose1d(3, 0, 3, stride=2, "
            "output_padding=1) then called on the catalogue's input: lucid answers; torch raises "
            "RuntimeError: could not create a primitive descriptor for the deconvolution forward "
            "propagation primitive. Run workload with environme"
        ),
    ),
    ("nn.ConvTranspose1d", "kernel_size=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.ConvTranspose1d(3, 2, 0, stride=2, "
            "output_padding=1) then called on the catalogue's input: lucid answers; torch raises "
            "RuntimeError: could not create a primitive descriptor for the deconvolution forward "
            "propagation primitive. Run workload with environme"
        ),
    ),
    ("nn.ConvTranspose1d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.ConvTranspose1d(3, 2, 3, stride=2.5, "
            "output_padding=1) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose1d(): argument 'stride' (position 4) must be tuple of ints,"
            " but found element of type float at pos 0"
        ),
    ),
    ("nn.ConvTranspose1d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.ConvTranspose1d(3, 2, 3, stride=2, "
            "output_padding=1, padding=2.5) then called on the catalogue's input: lucid answers; "
            "torch raises TypeError: conv_transpose1d(): argument 'padding' (position 5) must be "
            "tuple of ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.ConvTranspose1d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.ConvTranspose1d(3, 2, 3, stride=2, "
            "output_padding=1, dilation=2.5) then called on the catalogue's input: lucid answers;"
            " torch raises TypeError: conv_transpose1d(): argument 'dilation' (position 8) must "
            "be tuple of ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.ConvTranspose2d", "out_channels=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.ConvTranspose2d(4, 0, 3, stride=2, "
            "padding=1, groups=2) then called on the catalogue's input: lucid answers; torch "
            "raises RuntimeError: could not create a primitive descriptor for the deconvolution "
            "forward propagation primitive. Run workload with environme"
        ),
    ),
    ("nn.ConvTranspose2d", "kernel_size=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.ConvTranspose2d(4, 2, 0, stride=2, "
            "padding=1, groups=2) then called on the catalogue's input: lucid answers; torch "
            "raises RuntimeError: could not create a primitive descriptor for the deconvolution "
            "forward propagation primitive. Run workload with environme"
        ),
    ),
    ("nn.ConvTranspose2d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.ConvTranspose2d(4, 2, 3, stride=2.5, "
            "padding=1, groups=2) then called on the catalogue's input: lucid answers; torch "
            "raises TypeError: conv_transpose2d(): argument 'stride' (position 4) must be tuple "
            "of ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.ConvTranspose2d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.ConvTranspose2d(4, 2, 3, stride=2, "
            "padding=2.5, groups=2) then called on the catalogue's input: lucid answers; torch "
            "raises TypeError: conv_transpose2d(): argument 'padding' (position 5) must be tuple "
            "of ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.ConvTranspose2d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.ConvTranspose2d(4, 2, 3, stride=2, "
            "padding=1, groups=2, dilation=2.5) then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: conv_transpose2d(): argument 'dilation' (position "
            "8) must be tuple of ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.ConvTranspose3d", "out_channels=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.ConvTranspose3d(2, 0, 2, dilation=2) "
            "then called on the catalogue's input: lucid answers; torch raises RuntimeError: "
            "could not create a primitive descriptor for the deconvolution forward propagation "
            "primitive. Run workload with environme"
        ),
    ),
    ("nn.ConvTranspose3d", "kernel_size=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.ConvTranspose3d(2, 2, 0, dilation=2) "
            "then called on the catalogue's input: lucid answers; torch raises RuntimeError: "
            "could not create a primitive descriptor for the deconvolution forward propagation "
            "primitive. Run workload with environme"
        ),
    ),
    ("nn.ConvTranspose3d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.ConvTranspose3d(2, 2, 2, dilation=2, "
            "stride=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose3d(): argument 'stride' (position 4) must be tuple of ints,"
            " but found element of type float at pos 0"
        ),
    ),
    ("nn.ConvTranspose3d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.ConvTranspose3d(2, 2, 2, dilation=2, "
            "padding=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose3d(): argument 'padding' (position 5) must be tuple of "
            "ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.ConvTranspose3d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.ConvTranspose3d(2, 2, 2, "
            "dilation=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose3d(): argument 'dilation' (position 8) must be tuple of "
            "ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.CosineEmbeddingLoss.forward", "none"): (
        "internal",
        (
            "open: lucid/ops/loss.py (cosine_embedding_loss): nn.CosineEmbeddingLoss(...)(None, "
            "<float32 tensor of shape (3, 4)>, <float32 tensor of shape (3,)>): lucid leaks "
            "AttributeError: 'NoneType' object has no attribute 'ndim'; torch raises TypeError: "
            "cosine_embedding_loss(): argument 'input1' (position 1) must be Tensor, not NoneType"
        ),
    ),
    ("nn.CosineEmbeddingLoss.forward", "python_list"): (
        "internal",
        (
            "open: lucid/ops/loss.py (cosine_embedding_loss): nn.CosineEmbeddingLoss(...)(<list>,"
            " <float32 tensor of shape (3, 4)>, <float32 tensor of shape (3,)>): lucid leaks "
            "AttributeError: 'list' object has no attribute 'ndim'; torch raises TypeError: "
            "cosine_embedding_loss(): argument 'input1' (position 1) must be Tensor, not list"
        ),
    ),
    ("nn.CosineSimilarity", "dim=none"): (
        "silent",
        (
            "open: lucid.nn.functional.cosine_similarity: nn.CosineSimilarity(dim=None) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: "
            "cosine_similarity(): argument 'dim' (position 3) must be int, not NoneType"
        ),
    ),
    ("nn.CosineSimilarity", "eps=negative"): (
        "silent",
        (
            "open: lucid.nn.functional.cosine_similarity: nn.CosineSimilarity(dim=1, eps=-1.0) "
            "then called on the catalogue's input: lucid answers; torch raises RuntimeError: eps "
            "must be non-negative, got: -1"
        ),
    ),
    ("nn.CosineSimilarity", "eps=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.cosine_similarity: nn.CosineSimilarity(dim=1, eps=nan) "
            "then called on the catalogue's input: lucid answers; torch raises RuntimeError: eps "
            "must be non-negative, got: nan"
        ),
    ),
    ("nn.CosineSimilarity.forward", "none"): (
        "internal",
        (
            "open: lucid/nn/functional.py (cosine_similarity): nn.CosineSimilarity(...)(None, "
            "<float32 tensor of shape (4, 5)>): lucid leaks AttributeError: 'NoneType' object has"
            " no attribute 'norm'; torch raises TypeError: cosine_similarity(): argument 'x1' "
            "(position 1) must be Tensor, not NoneType"
        ),
    ),
    ("nn.CosineSimilarity.forward", "python_list"): (
        "internal",
        (
            "open: lucid/nn/functional.py (cosine_similarity): nn.CosineSimilarity(...)(<list>, "
            "<float32 tensor of shape (4, 5)>): lucid leaks AttributeError: 'list' object has no "
            "attribute 'norm'; torch raises TypeError: cosine_similarity(): argument 'x1' "
            "(position 1) must be Tensor, not list"
        ),
    ),
    ("nn.CrossEntropyLoss", "ignore_index=float"): (
        "silent",
        (
            "open: lucid.nn.functional.cross_entropy: nn.CrossEntropyLoss(reduction='mean', "
            "label_smoothing=0.1, ignore_index=2.5) then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: cross_entropy_loss(): argument 'ignore_index' "
            "(position 5) must be int, not float"
        ),
    ),
    ("nn.CrossEntropyLoss", "ignore_index=string"): (
        "silent",
        (
            "open: lucid.nn.functional.cross_entropy: nn.CrossEntropyLoss(reduction='mean', "
            "label_smoothing=0.1, ignore_index='a') then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: cross_entropy_loss(): argument 'ignore_index' "
            "(position 5) must be int, not str"
        ),
    ),
    ("nn.CrossEntropyLoss", "ignore_index=none"): (
        "silent",
        (
            "open: lucid.nn.functional.cross_entropy: nn.CrossEntropyLoss(reduction='mean', "
            "label_smoothing=0.1, ignore_index=None) then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: cross_entropy_loss(): argument 'ignore_index' "
            "(position 5) must be int, not NoneType"
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
    ("nn.Dropout", "p=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.dropout: nn.Dropout(nan) then called on the catalogue's "
            "input: lucid answers; torch raises RuntimeError: dropout probability has to be "
            "between 0 and 1, but got nan"
        ),
    ),
    ("nn.Dropout.forward", "int_tensor"): (
        "silent",
        (
            "open: lucid.nn.functional.dropout: nn.Dropout(...)(<int64 tensor of shape (2, 3, "
            "4)>): lucid answers; torch raises RuntimeError: result type Float can't be cast to "
            "the desired output type Long"
        ),
    ),
    ("nn.Dropout1d", "p=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.dropout1d: nn.Dropout1d(p=nan) then called on the "
            "catalogue's input: lucid answers; torch raises RuntimeError: dropout probability has"
            " to be between 0 and 1, but got nan"
        ),
    ),
    ("nn.Dropout2d", "p=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.dropout2d: nn.Dropout2d(p=nan) then called on the "
            "catalogue's input: lucid answers; torch raises RuntimeError: dropout probability has"
            " to be between 0 and 1, but got nan"
        ),
    ),
    ("nn.Dropout2d.forward", "int_tensor"): (
        "silent",
        (
            "open: lucid.nn.functional.dropout2d: nn.Dropout2d(...)(<int64 tensor of shape (2, 3,"
            " 4, 2)>): lucid answers; torch raises RuntimeError: result type Float can't be cast "
            "to the desired output type Long"
        ),
    ),
    ("nn.Dropout2d.forward", "zero_d"): (
        "silent",
        (
            "open: lucid.nn.functional.dropout2d: nn.Dropout2d(...)(<float32 tensor of shape "
            "()>): lucid answers; torch raises RuntimeError: Feature dropout requires at least 2 "
            "dimensions in the input"
        ),
    ),
    ("nn.Dropout3d", "p=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.dropout3d: nn.Dropout3d(p=nan) then called on the "
            "catalogue's input: lucid answers; torch raises RuntimeError: dropout probability has"
            " to be between 0 and 1, but got nan"
        ),
    ),
    ("nn.Embedding", "max_norm=string"): (
        "numpy",
        (
            "open: lucid/ops/embedding.py (forward): nn.Embedding(10, 3, padding_idx=2, "
            "max_norm='a') then called on the catalogue's input: lucid leaks UFuncTypeError: "
            "ufunc 'greater' did not contain a loop with signature matching types (<class "
            "'numpy.dtypes.Float32DType'>, <class 'numpy; torch raises TypeError: "
            "embedding_renorm_(): argument 'max_norm' (position 3) must be float, not str"
        ),
    ),
    ("nn.EmbeddingBag", "max_norm=string"): (
        "numpy",
        (
            "open: lucid/ops/embedding.py (forward): nn.EmbeddingBag(10, 3, mode='max', "
            "max_norm='a') then called on the catalogue's input: lucid leaks UFuncTypeError: "
            "ufunc 'greater' did not contain a loop with signature matching types (<class "
            "'numpy.dtypes.Float32DType'>, <class 'numpy; torch raises TypeError: "
            "embedding_renorm_(): argument 'max_norm' (position 3) must be float, not str"
        ),
    ),
    ("nn.FeatureAlphaDropout", "p=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.feature_alpha_dropout: nn.FeatureAlphaDropout(p=nan) then "
            "called on the catalogue's input: lucid answers; torch raises RuntimeError: dropout "
            "probability has to be between 0 and 1, but got nan"
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
    ("nn.FractionalMaxPool2d", "kernel_size=negative"): (
        "numpy",
        (
            "open: lucid/ops/pooling.py (_gathered_max): nn.FractionalMaxPool2d(-1, "
            "output_size=3) then called on the catalogue's input: lucid leaks ValueError: zero-"
            "size array to reduction operation maximum which has no identity; torch answers"
        ),
    ),
    ("nn.FractionalMaxPool2d", "kernel_size=zero"): (
        "numpy",
        (
            "open: lucid/ops/pooling.py (_gathered_max): nn.FractionalMaxPool2d(0, output_size=3)"
            " then called on the catalogue's input: lucid leaks ValueError: zero-size array to "
            "reduction operation maximum which has no identity; torch answers"
        ),
    ),
    ("nn.FractionalMaxPool2d", "kernel_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional.fractional_max_pool2d_with_indices: "
            "nn.FractionalMaxPool2d(2.5, output_size=3) then called on the catalogue's input: "
            "lucid answers; torch raises TypeError: fractional_max_pool2d(): argument "
            "'kernel_size' (position 2) must be tuple of ints, but found element of type float at"
            " p"
        ),
    ),
    ("nn.FractionalMaxPool2d", "output_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional.fractional_max_pool2d_with_indices: "
            "nn.FractionalMaxPool2d(2, output_size=2.5) then called on the catalogue's input: "
            "lucid answers; torch raises TypeError: fractional_max_pool2d(): argument "
            "'output_size' (position 3) must be tuple of ints, but found element of type float at"
            " p"
        ),
    ),
    ("nn.FractionalMaxPool3d", "kernel_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional.fractional_max_pool3d_with_indices: "
            "nn.FractionalMaxPool3d(2.5, output_size=3) then called on the catalogue's input: "
            "lucid answers; torch raises TypeError: fractional_max_pool3d(): argument "
            "'kernel_size' (position 2) must be tuple of ints, but found element of type float at"
            " p"
        ),
    ),
    ("nn.FractionalMaxPool3d", "output_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional.fractional_max_pool3d_with_indices: "
            "nn.FractionalMaxPool3d(2, output_size=2.5) then called on the catalogue's input: "
            "lucid answers; torch raises TypeError: fractional_max_pool3d(): argument "
            "'output_size' (position 3) must be tuple of ints, but found element of type float at"
            " p"
        ),
    ),
    ("nn.GroupNorm", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.group_norm: nn.GroupNorm(2, 4, eps=None) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: group_norm(): argument"
            " 'eps' (position 5) must be float, not NoneType"
        ),
    ),
    ("nn.HuberLoss", "delta=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.huber_loss: nn.HuberLoss(reduction='mean', delta=nan) then"
            " called on the catalogue's input: lucid answers; torch raises RuntimeError: "
            "huber_loss does not support non-positive values for delta."
        ),
    ),
    ("nn.InstanceNorm1d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.InstanceNorm1d(3, affine=True, eps=None)"
            " then called on the catalogue's input: lucid answers; torch raises TypeError: "
            "instance_norm(): argument 'eps' (position 8) must be float, not NoneType"
        ),
    ),
    ("nn.InstanceNorm1d", "momentum=string"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.InstanceNorm1d(3, affine=True, "
            "momentum='a') then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: instance_norm(): argument 'momentum' (position 7) must be float, not str"
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
    ("nn.InstanceNorm2d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.InstanceNorm2d(2, "
            "track_running_stats=True, eps=None) then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: instance_norm(): argument 'eps' (position 8) must "
            "be float, not NoneType"
        ),
    ),
    ("nn.InstanceNorm3d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.InstanceNorm3d(2, affine=True, "
            "track_running_stats=True, eps=None) then called on the catalogue's input: lucid "
            "answers; torch raises TypeError: instance_norm(): argument 'eps' (position 8) must "
            "be float, not NoneType"
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
    ("nn.LPPool2d", "kernel_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional.lp_pool2d: nn.LPPool2d(3, 2.5) then called on the "
            "catalogue's input: lucid answers; torch raises TypeError: avg_pool2d(): argument "
            "'kernel_size' (position 2) must be tuple of ints, not float"
        ),
    ),
    ("nn.LayerNorm", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.layer_norm: nn.LayerNorm((3, 4), eps=None) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: layer_norm(): argument"
            " 'eps' (position 5) must be float, not NoneType"
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
    ("nn.LazyBatchNorm1d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.LazyBatchNorm1d(eps=None) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: '<=' not supported "
            "between instances of 'NoneType' and 'float'"
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
    ("nn.LazyBatchNorm2d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.LazyBatchNorm2d(eps=None) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: '<=' not supported "
            "between instances of 'NoneType' and 'float'"
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
    ("nn.LazyBatchNorm3d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.batch_norm: nn.LazyBatchNorm3d(eps=None) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: '<=' not supported "
            "between instances of 'NoneType' and 'float'"
        ),
    ),
    ("nn.LazyConv1d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv1d: nn.LazyConv1d(4, 3, stride=2.5) then called on the"
            " catalogue's input: lucid answers; torch raises TypeError: conv1d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConv1d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv1d: nn.LazyConv1d(4, 3, padding=2.5) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: conv1d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConv1d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv1d: nn.LazyConv1d(4, 3, dilation=2.5) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: conv1d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConv2d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv2d: nn.LazyConv2d(4, 3, stride=2.5) then called on the"
            " catalogue's input: lucid answers; torch raises TypeError: conv2d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConv2d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv2d: nn.LazyConv2d(4, 3, padding=2.5) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: conv2d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConv2d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv2d: nn.LazyConv2d(4, 3, dilation=2.5) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: conv2d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConv3d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv3d: nn.LazyConv3d(2, 2, stride=2.5) then called on the"
            " catalogue's input: lucid answers; torch raises TypeError: conv3d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConv3d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv3d: nn.LazyConv3d(2, 2, padding=2.5) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: conv3d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConv3d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv3d: nn.LazyConv3d(2, 2, dilation=2.5) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: conv3d() received an "
            "invalid combination of arguments - got (Tensor, Parameter, Parameter, tuple, tuple, "
            "tuple, int), bu"
        ),
    ),
    ("nn.LazyConvTranspose1d", "out_channels=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.LazyConvTranspose1d(0, 3) then called"
            " on the catalogue's input: lucid answers; torch raises RuntimeError: could not "
            "create a primitive descriptor for the deconvolution forward propagation primitive. "
            "Run workload with environme"
        ),
    ),
    ("nn.LazyConvTranspose1d", "kernel_size=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.LazyConvTranspose1d(4, 0) then called"
            " on the catalogue's input: lucid answers; torch raises RuntimeError: could not "
            "create a primitive descriptor for the deconvolution forward propagation primitive. "
            "Run workload with environme"
        ),
    ),
    ("nn.LazyConvTranspose1d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.LazyConvTranspose1d(4, 3, stride=2.5)"
            " then called on the catalogue's input: lucid answers; torch raises TypeError: "
            "conv_transpose1d(): argument 'stride' (position 4) must be tuple of ints, but found "
            "element of type float at pos 0"
        ),
    ),
    ("nn.LazyConvTranspose1d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.LazyConvTranspose1d(4, 3, "
            "padding=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose1d(): argument 'padding' (position 5) must be tuple of "
            "ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.LazyConvTranspose1d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose1d: nn.LazyConvTranspose1d(4, 3, "
            "dilation=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose1d(): argument 'dilation' (position 8) must be tuple of "
            "ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.LazyConvTranspose2d", "out_channels=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.LazyConvTranspose2d(0, 3) then called"
            " on the catalogue's input: lucid answers; torch raises RuntimeError: could not "
            "create a primitive descriptor for the deconvolution forward propagation primitive. "
            "Run workload with environme"
        ),
    ),
    ("nn.LazyConvTranspose2d", "kernel_size=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.LazyConvTranspose2d(4, 0) then called"
            " on the catalogue's input: lucid answers; torch raises RuntimeError: could not "
            "create a primitive descriptor for the deconvolution forward propagation primitive. "
            "Run workload with environme"
        ),
    ),
    ("nn.LazyConvTranspose2d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.LazyConvTranspose2d(4, 3, stride=2.5)"
            " then called on the catalogue's input: lucid answers; torch raises TypeError: "
            "conv_transpose2d(): argument 'stride' (position 4) must be tuple of ints, but found "
            "element of type float at pos 0"
        ),
    ),
    ("nn.LazyConvTranspose2d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.LazyConvTranspose2d(4, 3, "
            "padding=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose2d(): argument 'padding' (position 5) must be tuple of "
            "ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.LazyConvTranspose2d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose2d: nn.LazyConvTranspose2d(4, 3, "
            "dilation=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose2d(): argument 'dilation' (position 8) must be tuple of "
            "ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.LazyConvTranspose3d", "out_channels=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.LazyConvTranspose3d(0, 2) then called"
            " on the catalogue's input: lucid answers; torch raises RuntimeError: could not "
            "create a primitive descriptor for the deconvolution forward propagation primitive. "
            "Run workload with environme"
        ),
    ),
    ("nn.LazyConvTranspose3d", "kernel_size=zero"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.LazyConvTranspose3d(2, 0) then called"
            " on the catalogue's input: lucid answers; torch raises RuntimeError: could not "
            "create a primitive descriptor for the deconvolution forward propagation primitive. "
            "Run workload with environme"
        ),
    ),
    ("nn.LazyConvTranspose3d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.LazyConvTranspose3d(2, 2, stride=2.5)"
            " then called on the catalogue's input: lucid answers; torch raises TypeError: "
            "conv_transpose3d(): argument 'stride' (position 4) must be tuple of ints, but found "
            "element of type float at pos 0"
        ),
    ),
    ("nn.LazyConvTranspose3d", "padding=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.LazyConvTranspose3d(2, 2, "
            "padding=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose3d(): argument 'padding' (position 5) must be tuple of "
            "ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.LazyConvTranspose3d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional.conv_transpose3d: nn.LazyConvTranspose3d(2, 2, "
            "dilation=2.5) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: conv_transpose3d(): argument 'dilation' (position 8) must be tuple of "
            "ints, but found element of type float at pos 0"
        ),
    ),
    ("nn.LazyInstanceNorm1d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.LazyInstanceNorm1d(eps=None) then called"
            " on the catalogue's input: lucid answers; torch raises TypeError: instance_norm(): "
            "argument 'eps' (position 8) must be float, not NoneType"
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
    ("nn.LazyInstanceNorm2d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.LazyInstanceNorm2d(eps=None) then called"
            " on the catalogue's input: lucid answers; torch raises TypeError: instance_norm(): "
            "argument 'eps' (position 8) must be float, not NoneType"
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
    ("nn.LazyInstanceNorm3d", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.instance_norm: nn.LazyInstanceNorm3d(eps=None) then called"
            " on the catalogue's input: lucid answers; torch raises TypeError: instance_norm(): "
            "argument 'eps' (position 8) must be float, not NoneType"
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
    ("nn.LeakyReLU", "negative_slope=string"): (
        "numpy",
        (
            "open: lucid/ops/activations.py (forward): nn.LeakyReLU('a') then called on the "
            "catalogue's input: lucid leaks UFuncTypeError: ufunc 'multiply' did not contain a "
            "loop with signature matching types (dtype('float32'), dtype('<U1')) -> None; torch "
            "raises TypeError: leaky_relu(): argument 'negative_slope' (position 2) must be "
            "Number, not str"
        ),
    ),
    ("nn.LinearCrossEntropyLoss", "ignore_index=string"): (
        "silent",
        (
            "open: lucid.nn.functional.cross_entropy: nn.LinearCrossEntropyLoss(5, 4, bias=True, "
            "ignore_index='a') then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: cross_entropy_loss(): argument 'ignore_index' (position 5) must be int, "
            "not str"
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
    ("nn.MaxPool1d", "stride=float"): (
        "silent",
        (
            "open: lucid.nn.functional._max_pool1d: nn.MaxPool1d(3, stride=2.5) then called on "
            "the catalogue's input: lucid answers; torch raises TypeError: max_pool1d(): argument"
            " 'stride' (position 3) must be tuple of ints, not float"
        ),
    ),
    ("nn.MaxPool1d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional._max_pool1d: nn.MaxPool1d(3, stride=2, dilation=2.5) then "
            "called on the catalogue's input: lucid answers; torch raises TypeError: "
            "max_pool1d(): argument 'dilation' (position 5) must be tuple of ints, not float"
        ),
    ),
    ("nn.MaxPool2d", "kernel_size=float"): (
        "silent",
        (
            "open: lucid.nn.functional._max_pool2d: nn.MaxPool2d(2.5, padding=1, dilation=2) then"
            " called on the catalogue's input: lucid answers; torch raises TypeError: "
            "max_pool2d(): argument 'kernel_size' (position 2) must be tuple of ints, not float"
        ),
    ),
    ("nn.MaxPool2d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional._max_pool2d: nn.MaxPool2d(2, padding=1, dilation=2.5) then"
            " called on the catalogue's input: lucid answers; torch raises TypeError: "
            "max_pool2d(): argument 'dilation' (position 5) must be tuple of ints, not float"
        ),
    ),
    ("nn.MaxPool3d", "dilation=float"): (
        "silent",
        (
            "open: lucid.nn.functional._max_pool3d: nn.MaxPool3d(2, ceil_mode=True, dilation=2.5)"
            " then called on the catalogue's input: lucid answers; torch raises TypeError: "
            "max_pool3d(): argument 'dilation' (position 5) must be tuple of ints, not float"
        ),
    ),
    ("nn.NLLLoss", "ignore_index=float"): (
        "silent",
        (
            "open: lucid.nn.functional.nll_loss: nn.NLLLoss(reduction='mean', ignore_index=2.5) "
            "then called on the catalogue's input: lucid answers; torch raises TypeError: "
            "nll_loss_nd(): argument 'ignore_index' (position 5) must be int, not float"
        ),
    ),
    ("nn.NLLLoss", "ignore_index=string"): (
        "silent",
        (
            "open: lucid.nn.functional.nll_loss: nn.NLLLoss(reduction='mean', ignore_index='a') "
            "then called on the catalogue's input: lucid answers; torch raises TypeError: "
            "nll_loss_nd(): argument 'ignore_index' (position 5) must be int, not str"
        ),
    ),
    ("nn.NLLLoss", "ignore_index=none"): (
        "silent",
        (
            "open: lucid.nn.functional.nll_loss: nn.NLLLoss(reduction='mean', ignore_index=None) "
            "then called on the catalogue's input: lucid answers; torch raises TypeError: "
            "nll_loss_nd(): argument 'ignore_index' (position 5) must be int, not NoneType"
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
    ("nn.PReLU.forward", "none"): (
        "internal",
        (
            "open: lucid/ops/activations.py (prelu): nn.PReLU(...)(None): lucid leaks "
            "AttributeError: 'NoneType' object has no attribute 'dtype'; torch raises TypeError: "
            "prelu(): argument 'input' (position 1) must be Tensor, not NoneType"
        ),
    ),
    ("nn.PReLU.forward", "python_list"): (
        "internal",
        (
            "open: lucid/ops/activations.py (prelu): nn.PReLU(...)(<list>): lucid leaks "
            "AttributeError: 'list' object has no attribute 'dtype'; torch raises TypeError: "
            "prelu(): argument 'input' (position 1) must be Tensor, not list"
        ),
    ),
    ("nn.PairwiseDistance", "p=none"): (
        "silent",
        (
            "open: lucid.nn.functional.pairwise_distance: nn.PairwiseDistance(p=None, "
            "keepdim=True) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: pairwise_distance(): argument 'p' (position 3) must be float, not "
            "NoneType"
        ),
    ),
    ("nn.PairwiseDistance.forward", "none"): (
        "internal",
        (
            "open: lucid/nn/functional.py (pairwise_distance): nn.PairwiseDistance(...)(None, "
            "<float32 tensor of shape (4, 5)>): lucid leaks AttributeError: 'NoneType' object has"
            " no attribute 'ndim'; torch raises TypeError: pairwise_distance(): argument 'x1' "
            "(position 1) must be Tensor, not NoneType"
        ),
    ),
    ("nn.PairwiseDistance.forward", "python_list"): (
        "internal",
        (
            "open: lucid/nn/functional.py (pairwise_distance): nn.PairwiseDistance(...)(<list>, "
            "<float32 tensor of shape (4, 5)>): lucid leaks AttributeError: 'list' object has no "
            "attribute 'ndim'; torch raises TypeError: pairwise_distance(): argument 'x1' "
            "(position 1) must be Tensor, not list"
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
    ("nn.PoissonNLLLoss", "eps=string"): (
        "silent",
        (
            "open: lucid.nn.functional.poisson_nll_loss: nn.PoissonNLLLoss(reduction='mean', "
            "eps='a') then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: poisson_nll_loss(): argument 'eps' (position 5) must be float, not str"
        ),
    ),
    ("nn.PoissonNLLLoss", "eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.poisson_nll_loss: nn.PoissonNLLLoss(reduction='mean', "
            "eps=None) then called on the catalogue's input: lucid answers; torch raises "
            "TypeError: poisson_nll_loss(): argument 'eps' (position 5) must be float, not "
            "NoneType"
        ),
    ),
    ("nn.RReLU", "lower=nan"): (
        "internal",
        (
            "open: lucid/ops/activations.py (forward): nn.RReLU(nan, 0.3) then called on the "
            "catalogue's input: lucid leaks OverflowError: high - low range exceeds valid bounds;"
            " torch raises RuntimeError: rrelu: lower bound must be finite, got nan"
        ),
    ),
    ("nn.RReLU", "upper=nan"): (
        "internal",
        (
            "open: lucid/ops/activations.py (forward): nn.RReLU(0.1, nan) then called on the "
            "catalogue's input: lucid leaks OverflowError: high - low range exceeds valid bounds;"
            " torch raises RuntimeError: rrelu: upper bound must be finite, got nan"
        ),
    ),
    ("nn.RReLU", "upper=inf"): (
        "internal",
        (
            "open: lucid/ops/activations.py (forward): nn.RReLU(0.1, inf) then called on the "
            "catalogue's input: lucid leaks OverflowError: high - low range exceeds valid bounds;"
            " torch raises RuntimeError: rrelu: upper bound must be finite, got inf"
        ),
    ),
    ("nn.SmoothL1Loss", "beta=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.smooth_l1_loss: nn.SmoothL1Loss(reduction='mean', "
            "beta=nan) then called on the catalogue's input: lucid answers; torch raises "
            "RuntimeError: smooth_l1_loss does not support negative values for beta."
        ),
    ),
    ("nn.Softplus", "beta=string"): (
        "numpy",
        (
            "open: lucid/ops/activations.py (forward): nn.Softplus(beta='a', threshold=5.0) then "
            "called on the catalogue's input: lucid leaks UFuncTypeError: ufunc 'multiply' did "
            "not contain a loop with signature matching types (dtype('float32'), dtype('<U1')) ->"
            " None; torch raises TypeError: softplus(): argument 'beta' (position 2) must be "
            "Number, not str"
        ),
    ),
    ("nn.Softplus", "threshold=string"): (
        "numpy",
        (
            "open: lucid/ops/activations.py (forward): nn.Softplus(beta=2.0, threshold='a') then "
            "called on the catalogue's input: lucid leaks UFuncTypeError: ufunc 'minimum' did not"
            " contain a loop with signature matching types (dtype('float32'), dtype('<U1')) -> "
            "None; torch raises TypeError: softplus(): argument 'threshold' (position 3) must be "
            "Number, not str"
        ),
    ),
    ("nn.Softshrink.forward", "none"): (
        "internal",
        (
            "open: lucid/nn/functional.py (softshrink): nn.Softshrink(...)(None): lucid leaks "
            "AttributeError: 'NoneType' object has no attribute 'dtype'; torch raises TypeError: "
            "softshrink(): argument 'input' (position 1) must be Tensor, not NoneType"
        ),
    ),
    ("nn.Softshrink.forward", "python_list"): (
        "internal",
        (
            "open: lucid/nn/functional.py (softshrink): nn.Softshrink(...)(<list>): lucid leaks "
            "AttributeError: 'list' object has no attribute 'dtype'; torch raises TypeError: "
            "softshrink(): argument 'input' (position 1) must be Tensor, not list"
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
    ("nn.Transformer", "dropout=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.multi_head_attention_forward: nn.Transformer(d_model=8, "
            "nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16, "
            "dropout=nan) then called on the catalogue's input: lucid answers; torch raises "
            "RuntimeError: scaled_dot_product_attention_flash_attention: Currently do not support"
            " dropout > 0"
        ),
    ),
    ("nn.Transformer", "layer_norm_eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.layer_norm: nn.Transformer(d_model=8, nhead=2, "
            "num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16, dropout=0.0, "
            "layer_norm_eps=None) then called on the catalogue's input: lucid answers; torch "
            "raises TypeError: layer_norm(): argument 'eps' (position 5) must be float, not "
            "NoneType"
        ),
    ),
    ("nn.TransformerDecoderLayer", "dropout=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.multi_head_attention_forward: "
            "nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=nan, activation='gelu',"
            " batch_first=True) then called on the catalogue's input: lucid answers; torch raises"
            " RuntimeError: scaled_dot_product_attention_flash_attention: Currently do not "
            "support dropout > 0"
        ),
    ),
    ("nn.TransformerDecoderLayer", "layer_norm_eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.layer_norm: nn.TransformerDecoderLayer(8, 2, "
            "dim_feedforward=16, dropout=0.0, activation='gelu', batch_first=True, "
            "layer_norm_eps=None) then called on the catalogue's input: lucid answers; torch "
            "raises TypeError: layer_norm(): argument 'eps' (position 5) must be float, not "
            "NoneType"
        ),
    ),
    ("nn.TransformerEncoderLayer", "dropout=nan"): (
        "silent",
        (
            "open: lucid.nn.functional.multi_head_attention_forward: "
            "nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=nan) then called on the"
            " catalogue's input: lucid answers; torch raises RuntimeError: "
            "scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0"
        ),
    ),
    ("nn.TransformerEncoderLayer", "layer_norm_eps=none"): (
        "silent",
        (
            "open: lucid.nn.functional.layer_norm: nn.TransformerEncoderLayer(8, 2, "
            "dim_feedforward=16, dropout=0.0, layer_norm_eps=None) then called on the catalogue's"
            " input: lucid answers; torch raises TypeError: layer_norm(): argument 'eps' "
            "(position 5) must be float, not NoneType"
        ),
    ),
    ("nn.TripletMarginLoss", "p=none"): (
        "silent",
        (
            "open: lucid.nn.functional.triplet_margin_loss: nn.TripletMarginLoss(swap=True, "
            "reduction='mean', p=None) then called on the catalogue's input: lucid answers; torch"
            " raises TypeError: triplet_margin_loss(): argument 'p' (position 5) must be float, "
            "not NoneType"
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
    ("nn.utils.clip_grads_with_norm_", "total_norm=python_number"): (
        "internal",
        (
            "open: lucid/nn/utils/clip_grad.py (clip_grads_with_norm_): "
            "nn.utils.clip_grads_with_norm_ (total_norm=python_number): lucid leaks "
            "AttributeError: 'float' object has no attribute 'clamp'; torch raises TypeError: "
            "clamp() received an invalid combination of arguments - got (float, max=float), but "
            "expected one of:"
        ),
    ),
    ("nn.utils.vector_to_parameters", "int_tensor"): (
        "silent",
        (
            "open: lucid/nn/utils/convert_parameters.py (vector_to_parameters): "
            "nn.utils.vector_to_parameters (int_tensor): lucid answers; torch raises "
            "RuntimeError: data set to a tensor that requires gradients must be floating point or"
            " complex dtype"
        ),
    ),
    ("nn.utils.weight_norm", "dim=5"): (
        "silent",
        (
            "open: lucid/nn/utils/weight_norm.py (apply): nn.utils.weight_norm (dim=5): lucid "
            "answers; torch raises IndexError: Dimension out of range (expected to be in range of"
            " [-2, 1], but got 5)"
        ),
    ),
    ("nn.utils.weight_norm", "dim=2.5"): (
        "silent",
        (
            "open: lucid/nn/utils/weight_norm.py (apply): nn.utils.weight_norm (dim=2.5): lucid "
            "answers; torch raises TypeError: norm_except_dim(): argument 'dim' (position 3) must"
            " be int, not float"
        ),
    ),
    ("nn.utils.convert_conv2d_weight_memory_format", "memory_format=string"): (
        "silent",
        (
            "open: lucid/nn/utils/memory_format.py (convert_conv2d_weight_memory_format): "
            "nn.utils.convert_conv2d_weight_memory_format (memory_format=string): lucid answers; "
            "torch raises TypeError: clone(): argument 'memory_format' must be "
            "torch.memory_format, not str"
        ),
    ),
    ("data.DataLoader", "timeout=nan"): (
        "silent",
        (
            "open: lucid/utils/data/dataloader.py: data.DataLoader(<dataset>, batch_size=2, "
            "num_workers=0, timeout=nan): lucid answers; torch raises AssertionError: "
            "_SingleProcessDataLoaderIter requires timeout == 0"
        ),
    ),
    ("data.DataLoader", "timeout=inf"): (
        "silent",
        (
            "open: lucid/utils/data/dataloader.py: data.DataLoader(<dataset>, batch_size=2, "
            "num_workers=0, timeout=inf): lucid answers; torch raises AssertionError: "
            "_SingleProcessDataLoaderIter requires timeout == 0"
        ),
    ),
    ("data.Sampler", "data_source"): (
        "silent",
        (
            "open: None: data.Sampler (data_source): lucid answers; torch raises TypeError: "
            "Sampler() takes no arguments"
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
