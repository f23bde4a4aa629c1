"""lucid.optim: optimizers and learning-rate schedules, mirroring torch.optim."""

import importlib
from typing import Any

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
    "swa_utils",
]


def __getattr__(name: str) -> Any:
    # swa_utils builds on lucid.nn, which the optimizers do not need: load it on first use.
    if name == "swa_utils":
        return importlib.import_module("lucid.optim.swa_utils")
    # torch's AttributeError, then why lucid lacks the name (the table loads on a miss only)
    from lucid._absent import attribute_error

    raise attribute_error(__name__, name)
