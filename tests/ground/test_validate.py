"""econ.validate.require_not_above: one check for 'a field must not exceed another', scalars and arrays."""

from __future__ import annotations

import numpy as np
import pytest

from econ.errors import InvalidInputError
from econ.validate import require_not_above


def test_equal_or_below_passes_and_broadcasts():
    require_not_above("a", np.array([1.0, 2.0]), "b", 2.0)
    require_not_above("a", 1.0, "b", np.array([1.0, 3.0]))


def test_the_first_offending_pair_and_its_row_are_named():
    with pytest.raises(InvalidInputError, match=r"^a=5 exceeds b=4 \(why\); first bad row 2 of 3$"):
        require_not_above("a", np.array([1.0, 2.0, 5.0]), "b", np.array([3.0, 3.0, 4.0]), "why")
    with pytest.raises(InvalidInputError, match=r"^p=0\.6 is above q=0\.5$"):
        require_not_above("p", 0.6, "q", 0.5, word="is above")
