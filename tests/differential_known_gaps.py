"""Known gaps of the differential fuzz test (tests/test_differential_errors.py).

(callable, input kind) -> the category it shows today. Every entry is not yet fixed
(issue 15); the test fails when an entry no longer shows, so fix the call and delete its
line. Entries are grouped by category and by the error seen (lucid's for "numpy",
PyTorch's for "silent").
"""

KNOWN_GAPS: dict[tuple[str, str], str] = {
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
    # silent: torch: NotImplementedError: "bmm" not implemented for 'T'
    ("lucid.einsum", "bool_tensor"): "silent",
    # silent: torch: NotImplementedError: "dot" not implemented for 'T'
    ("lucid.tensordot", "bool_tensor"): "silent",
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
    # silent: torch: TypeError: kl_div(): argument 'T' (position N) must be Tensor,
    ("F.kl_div", "python_scalar"): "silent",
    # silent: torch: TypeError: max_poolNd(): argument 'kernel_size' (position N) mu
    ("F.max_pool1d", "float_size"): "silent",
    # silent: torch: TypeError: rsub() received an invalid combination of arguments
    ("lucid.rsub", "python_scalar"): "silent",
}
