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
}
