"""lucid.utils.tensorboard: TensorBoard event files, as torch.utils.tensorboard.

Needs only NumPy: the event records, their protocol buffers and PNG images are encoded here.
"""

from typing import Any

from lucid.utils.tensorboard.writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]


def __getattr__(name: str) -> Any:
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
