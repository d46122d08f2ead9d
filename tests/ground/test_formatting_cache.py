"""The memoized Babel helpers of econ.formatting give the strings Babel gives, on a first call and on a kept one, and
stay bounded (issue 19 part 5: the Cluster page formats hundreds of compact dollars per rerun)."""

import numpy as np
import pytest
from babel.numbers import format_compact_currency, format_compact_decimal, format_decimal

from econ import formatting as fmt

VALUES = sorted({*np.round(np.geomspace(1e-4, 5e15, 400), 6).tolist(), 0.0, -0.0, 999.5, 999_999.0, 1e4, 12_345.0,
                 -2.675, 2.675, 0.125, 1e15, 6.755e9})


def _babel_usd_compact(x, digits=3):
    """usd_compact with Babel called directly (the reference of the memoized path)."""
    import math
    a = float(f"{abs(x):.{digits}g}")
    if a < 1000:
        return None
    scaled = a / 10 ** (3 * min(4, int(math.floor(math.log10(a) / 3))))
    text = format_compact_currency(a, "USD", locale=fmt.LOCALE,
                                   fraction_digits=fmt._decimals_for(round(scaled, 10), digits, 0, 2))
    return ("-" + text) if x < 0 else text


@pytest.mark.parametrize("call", [1, 2])  # the first call fills the caches, the second reads them
def test_memoized_helpers_equal_babel(call):
    for x in VALUES:
        for d in (0, 2, 3):
            pattern = "#,##0" + ("." + "0" * d if d else "")
            assert fmt._fixed(x, d) == format_decimal(x, pattern, locale=fmt.LOCALE), (x, d)
        if x > 0:
            for d in (0, 1, 2):
                assert fmt._compact_usd(x, d) == format_compact_currency(x, "USD", locale=fmt.LOCALE,
                                                                         fraction_digits=d), (x, d)
                assert fmt._compact_number(x, d) == format_compact_decimal(x, locale=fmt.LOCALE,
                                                                           fraction_digits=d), (x, d)
        for sgn in (1, -1):
            ref = _babel_usd_compact(sgn * x)
            if ref is not None:
                assert fmt.usd_compact(sgn * x) == ref, x
    assert fmt._fixed(-0.0, 0) == format_decimal(-0.0, "#,##0", locale=fmt.LOCALE)  # not 0.0's kept string
    assert fmt._fixed(0.0, 2) == format_decimal(0.0, "#,##0.00", locale=fmt.LOCALE)


def test_caches_are_bounded():
    for f in (fmt._fixed_cached, fmt._compact_usd, fmt._compact_number):
        assert f.cache_info().maxsize == fmt.FORMAT_CACHE_ENTRIES
    for i in range(fmt.FORMAT_CACHE_ENTRIES + 10):
        fmt._compact_usd(1000.0 + i, 1)
    assert fmt._compact_usd.cache_info().currsize <= fmt.FORMAT_CACHE_ENTRIES
