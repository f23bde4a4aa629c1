"""Known gaps of the differential fuzz test (tests/test_differential_errors.py).

(callable, input kind) -> the category it shows today. Every entry is not yet fixed
(issue 15); the test fails when an entry no longer shows, so fix the call and delete its
line. Entries are grouped by category and by the error seen (lucid's for "numpy",
PyTorch's for "silent").
"""

KNOWN_GAPS: dict[tuple[str, str], str] = {
    # silent: torch: RuntimeError: Expected ND or ND (batch mode) tensor with option
    ("F.avg_pool1d", "empty"): "silent",
    # silent: torch: RuntimeError: ND target tensor expects ND input tensors, but fo
    ("F.cosine_embedding_loss", "zero_d"): "silent",
    # silent: torch: RuntimeError: max_poolNd: Expected ND or ND (batch mode) tensor
    ("F.max_pool1d", "empty"): "silent",
    # silent: torch: RuntimeError: running_mean should contain N elements not N
    ("F.batch_norm", "zero_d"): "silent",
    # silent: torch: TypeError: avg_poolNd(): argument 'kernel_size' (position N) mu
    ("F.avg_pool1d", "float_size"): "silent",
    # silent: torch: TypeError: max_poolNd(): argument 'kernel_size' (position N) mu
    ("F.max_pool1d", "float_size"): "silent",
}
