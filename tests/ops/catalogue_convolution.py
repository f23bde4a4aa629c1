"""Op catalogue rows: the convolution family."""

from __future__ import annotations

import numpy as np
import torch

import lucid
from tests.ops.op_catalogue import OpCase

ROWS: list[OpCase] = []
