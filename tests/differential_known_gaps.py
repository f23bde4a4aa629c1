"""Known gaps of the differential fuzz test (tests/test_differential_errors.py).

(callable, input kind) -> the category it shows today. Every entry is not yet fixed
(issue 15); the test fails when an entry no longer shows, so fix the call and delete its
line. Entries are grouped by category and by the error seen (lucid's for "numpy",
PyTorch's for "silent").
"""

KNOWN_GAPS: dict[tuple[str, str], str] = {
    # numpy: TypeError: 'T' object cannot be interpreted as an integer
    ("Tensor.repeat", "float_size"): "numpy",
    ("lucid.eye", "float_size"): "numpy",
    # numpy: TypeError: numpy boolean subtract, the `-` operator, is not supported,
    ("F.group_norm", "bool_tensor"): "numpy",
    ("F.huber_loss", "bool_tensor"): "numpy",
    ("F.scaled_dot_product_attention", "bool_tensor"): "numpy",
    ("F.smooth_l1_loss", "bool_tensor"): "numpy",
    # numpy: UFuncTypeError: Cannot cast ufunc 'T' output from dtype('T') to dtype(
    ("F.group_norm", "int_tensor"): "numpy",
    ("F.scaled_dot_product_attention", "int_tensor"): "numpy",
    # numpy: TypeError: The numpy boolean negative, the `-` operator, is not suppor
    ("F.binary_cross_entropy", "bool_tensor"): "numpy",
    ("F.binary_cross_entropy_with_logits", "bool_tensor"): "numpy",
    # numpy: ValueError: shape mismatch: objects cannot be broadcast to a single sh
    ("F.huber_loss", "shape_mismatch"): "numpy",
    ("F.smooth_l1_loss", "shape_mismatch"): "numpy",
    # numpy: ValueError: Calling nonzero on Nd arrays is not allowed. Use np.atleas
    ("lucid.where", "zero_d"): "numpy",
    # numpy: ValueError: Invalid integer data type 'T'.
    ("F.max_pool1d", "bool_tensor"): "numpy",
    # numpy: ValueError: cannot reshape array of size N into shape (N,N,newaxis)
    ("F.group_norm", "empty"): "numpy",
    # numpy: ValueError: data type <class 'numpy.bool'> not inexact
    ("F.rms_norm", "bool_tensor"): "numpy",
    # numpy: ValueError: data type <class 'numpy.intN'> not inexact
    ("F.rms_norm", "int_tensor"): "numpy",
    # silent: torch: TypeError: arange() received an invalid combination of argument
    ("lucid.arange", "bool_tensor"): "silent",
    ("lucid.arange", "empty"): "silent",
    ("lucid.arange", "float32_with_float64"): "silent",
    ("lucid.arange", "int_tensor"): "silent",
    ("lucid.arange", "noncontiguous"): "silent",
    ("lucid.arange", "three_d"): "silent",
    ("lucid.arange", "valid"): "silent",
    ("lucid.arange", "zero_d"): "silent",
    # silent: torch: TypeError: scalar_tensor(): argument 'T' (position N) must be N
    ("lucid.scalar_tensor", "bool_tensor"): "silent",
    ("lucid.scalar_tensor", "empty"): "silent",
    ("lucid.scalar_tensor", "float32_with_float64"): "silent",
    ("lucid.scalar_tensor", "int_tensor"): "silent",
    ("lucid.scalar_tensor", "noncontiguous"): "silent",
    ("lucid.scalar_tensor", "three_d"): "silent",
    ("lucid.scalar_tensor", "valid"): "silent",
    # silent: torch: TypeError: log_softmax() missing N required positional argument
    ("lucid.log_softmax", "empty"): "silent",
    ("lucid.log_softmax", "float32_with_float64"): "silent",
    ("lucid.log_softmax", "noncontiguous"): "silent",
    ("lucid.log_softmax", "three_d"): "silent",
    ("lucid.log_softmax", "valid"): "silent",
    ("lucid.log_softmax", "zero_d"): "silent",
    # silent: torch: TypeError: softmax() missing N required positional arguments: "
    ("lucid.softmax", "empty"): "silent",
    ("lucid.softmax", "float32_with_float64"): "silent",
    ("lucid.softmax", "noncontiguous"): "silent",
    ("lucid.softmax", "three_d"): "silent",
    ("lucid.softmax", "valid"): "silent",
    ("lucid.softmax", "zero_d"): "silent",
    # silent: torch: NotImplementedError: "addmm_impl_cpu_" not implemented for 'T'
    ("F.linear", "bool_tensor"): "silent",
    ("Tensor.inner", "bool_tensor"): "silent",
    ("lucid.inner", "bool_tensor"): "silent",
    # silent: torch: TypeError: eq() received an invalid combination of arguments -
    ("lucid.eq", "none"): "silent",
    ("lucid.eq", "python_scalar"): "silent",
    # silent: torch: TypeError: ne() received an invalid combination of arguments -
    ("lucid.ne", "none"): "silent",
    ("lucid.ne", "python_scalar"): "silent",
    # silent: torch: TypeError: not_equal() received an invalid combination of argum
    ("lucid.not_equal", "none"): "silent",
    ("lucid.not_equal", "python_scalar"): "silent",
    # silent: torch: NotImplementedError: "avg_poolNd" not implemented for 'T'
    ("F.avg_pool1d", "bool_tensor"): "silent",
    # silent: torch: NotImplementedError: "bmm" not implemented for 'T'
    ("lucid.einsum", "bool_tensor"): "silent",
    # silent: torch: NotImplementedError: "dot" not implemented for 'T'
    ("lucid.tensordot", "bool_tensor"): "silent",
    # silent: torch: NotImplementedError: "huber_cpu" not implemented for 'T'
    ("F.huber_loss", "int_tensor"): "silent",
    # silent: torch: NotImplementedError: "max_poolNd_impl" not implemented for 'T'
    ("F.max_pool1d", "int_tensor"): "silent",
    # silent: torch: NotImplementedError: "smooth_lN_cpu" not implemented for 'T'
    ("F.smooth_l1_loss", "int_tensor"): "silent",
    # silent: torch: RuntimeError: Expected ND or ND (batch mode) tensor with option
    ("F.avg_pool1d", "empty"): "silent",
    # silent: torch: RuntimeError: Expected query, key, and value to have the same d
    ("F.scaled_dot_product_attention", "float32_with_float64"): "silent",
    # silent: torch: RuntimeError: ND target tensor expects ND input tensors, but fo
    ("F.cosine_embedding_loss", "zero_d"): "silent",
    # silent: torch: RuntimeError: kl_div: Integral inputs not supported.
    ("F.kl_div", "int_tensor"): "silent",
    # silent: torch: RuntimeError: max_poolNd: Expected ND or ND (batch mode) tensor
    ("F.max_pool1d", "empty"): "silent",
    # silent: torch: RuntimeError: running_mean should contain N elements not N
    ("F.batch_norm", "zero_d"): "silent",
    # silent: torch: TypeError: avg_poolNd(): argument 'kernel_size' (position N) mu
    ("F.avg_pool1d", "float_size"): "silent",
    # silent: torch: TypeError: ge() received an invalid combination of arguments -
    ("lucid.ge", "python_scalar"): "silent",
    # silent: torch: TypeError: greater() received an invalid combination of argumen
    ("lucid.greater", "python_scalar"): "silent",
    # silent: torch: TypeError: greater_equal() received an invalid combination of a
    ("lucid.greater_equal", "python_scalar"): "silent",
    # silent: torch: TypeError: gt() received an invalid combination of arguments -
    ("lucid.gt", "python_scalar"): "silent",
    # silent: torch: TypeError: kl_div(): argument 'T' (position N) must be Tensor,
    ("F.kl_div", "python_scalar"): "silent",
    # silent: torch: TypeError: le() received an invalid combination of arguments -
    ("lucid.le", "python_scalar"): "silent",
    # silent: torch: TypeError: less() received an invalid combination of arguments
    ("lucid.less", "python_scalar"): "silent",
    # silent: torch: TypeError: less_equal() received an invalid combination of argu
    ("lucid.less_equal", "python_scalar"): "silent",
    # silent: torch: TypeError: lt() received an invalid combination of arguments -
    ("lucid.lt", "python_scalar"): "silent",
    # silent: torch: TypeError: max_poolNd(): argument 'kernel_size' (position N) mu
    ("F.max_pool1d", "float_size"): "silent",
    # silent: torch: TypeError: rsub() received an invalid combination of arguments
    ("lucid.rsub", "python_scalar"): "silent",
}
