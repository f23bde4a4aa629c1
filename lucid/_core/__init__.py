"""The engine floor: dtypes, the tensor's data model, grad modes, the graph, Function, the
backward engine, observers and the NaN/Inf sentinel. NumPy and the standard library only:
nothing here imports ops, nn, factories or the tools built on them."""
