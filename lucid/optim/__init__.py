"""lucid.optim: optimizers and learning-rate schedules, mirroring torch.optim."""

from lucid.optim import lr_scheduler
from lucid.optim.adagrad import Adagrad
from lucid.optim.adam import Adam, AdamW
from lucid.optim.optimizer import Optimizer
from lucid.optim.rmsprop import RMSprop
from lucid.optim.sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
