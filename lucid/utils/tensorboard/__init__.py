"""lucid.utils.tensorboard: TensorBoard event files, as torch.utils.tensorboard.

Needs only NumPy: the event records, their protocol buffers and PNG images are encoded here.
"""

from lucid.utils.tensorboard.writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
