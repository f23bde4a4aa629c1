"""lucid.optim: optimizers and learning-rate schedules, mirroring torch.optim."""

from lucid.optim import lr_scheduler
from lucid.optim.adadelta import Adadelta
from lucid.optim.adafactor import Adafactor
from lucid.optim.adagrad import Adagrad
from lucid.optim.adam import Adam, AdamW
from lucid.optim.adamax import Adamax
from lucid.optim.asgd import ASGD
from lucid.optim.lbfgs import LBFGS
from lucid.optim.muon import Muon
from lucid.optim.nadam import NAdam
from lucid.optim.optimizer import Optimizer
from lucid.optim.radam import RAdam
from lucid.optim.rmsprop import RMSprop
from lucid.optim.rprop import Rprop
from lucid.optim.sgd import SGD
from lucid.optim.sparse_adam import SparseAdam

__all__ = [
    "ASGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "SparseAdam",
    "lr_scheduler",
]
