"""lucid: a deep-learning framework on NumPy whose API mirrors PyTorch.

Example::

    import lucid
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad          # tensor([2., 4., 6.])
"""

from lucid._malloc import tune_malloc

tune_malloc()

from lucid import dtypes  # noqa: E402
from lucid._tensor import Size, Tensor
from lucid.dtypes import (
    bool,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
)
from lucid.factories import *  # noqa: F403
from lucid.ops import *  # noqa: F403
from lucid.ops import broadcast_shapes

from lucid import autograd  # noqa: E402,I001  (autograd needs the ops above registered)
from lucid.autograd.grad_mode import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__version__ = "0.1.0"


def is_tensor(obj: object) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def result_type(tensor1: object, tensor2: object) -> dtype:
    return dtypes.result_type(tensor1, tensor2)


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


from lucid.utils.serialization import from_dlpack, load, save  # noqa: E402

# torch.nn and torch.optim are attributes of torch after `import torch`; so are these.
from lucid import nn, optim  # noqa: E402
