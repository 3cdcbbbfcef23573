"""The statistics of a run: Wilson 95 % intervals on rates, means with normal intervals, paired and unpaired
differences of two runs on the same seeds. Pure functions of counts and sums (integers where they can be), so the
same fights give the same bytes whichever way they were split.

A rate of k in n is reported with its Wilson score interval (it stays inside 0..1 and is honest near 0 and 1,
where the textbook p ± z·√(p(1-p)/n) is not):

>>> r = rate(16, 100)                                 # 16 %: 10.1 % to 24.4 %
>>> round(r.low, 4), round(r.high, 4)
(0.101, 0.2442)
>>> round(half_width(rate(4802, 9604)), 4)           # 50 % needs ~9,600 fights for ± 1 point
0.01

A mean is reported with mean ± z·s/√n (the normal approximation: a run has thousands of fights).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal

import msgspec

__all__ = ["Z95", "Rate", "Mean", "Difference", "rate", "mean", "half_width", "paired", "unpaired_rates",
           "paired_rates", "unpaired_means", "difference_of_rates", "difference_of_means", "share", "percent", "signed"]

#: The two-sided 95 % normal quantile.
Z95 = 1.959963984540054


class Rate(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``count`` fights of the run's, their share (``rate``) and its Wilson 95 % interval (``low``, ``high``)."""

    count: int
    rate: float
    low: float
    high: float


class Mean(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A mean over the run's fights, its standard deviation and its 95 % interval (``low``, ``high``)."""

    mean: float
    sd: float
    low: float
    high: float


class Difference(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A difference between two runs on the same seeds (A - B): each side's value, the difference, and its 95 %
    interval taking the pairs into account (``paired_*``: fight i of A against fight i of B) and ignoring them
    (``unpaired_*``: as two independent runs would be compared). Fights on the same seeds share their dice, so the
    paired interval is the tighter one when the encounters move together."""

    what: str
    a: float
    b: float
    difference: float
    paired_low: float
    paired_high: float
    unpaired_low: float
    unpaired_high: float


def rate(count: int, n: int) -> Rate:
    """The Wilson score interval of ``count`` in ``n`` (``n`` 0: nothing known, 0 to 1)."""
    if n == 0:
        return Rate(count=0, rate=0.0, low=0.0, high=1.0)
    p = count / n
    z2 = Z95 * Z95
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    low = 0.0 if count == 0 else max(0.0, centre - half)  # exactly 0 and 1 at the ends, not a rounding away
    high = 1.0 if count == n else min(1.0, centre + half)
    return Rate(count=count, rate=p, low=low, high=high)


def half_width(r: Rate) -> float:
    """Half the width of a rate's interval (what ``--until-ci`` compares with its target)."""
    return (r.high - r.low) / 2


def mean(total: int, squares: int, n: int, lowest: float | None = None, highest: float | None = None) -> Mean:
    """The mean of ``n`` whole numbers from their sum and the sum of their squares, with a normal 95 % interval
    (sample standard deviation; 0 with fewer than 2: no interval, which a report says), kept within the values
    the numbers can take (``lowest``, ``highest``: HP left is 0 to the sheet's; the normal interval near a bound
    reaches past it, as a tester found HP left "−0.013 to 14.002" of 14).

    >>> m = mean(27, 3 * 81, 3, lowest=0, highest=9)  # three 9s of 9: no spread
    >>> (m.low, m.high), mean(10, 100, 2, lowest=0).low  # 0 and 10: 5 ± 9.8, from 0
    ((9.0, 9.0), 0.0)
    """
    if n == 0:
        return Mean(mean=0.0, sd=0.0, low=0.0, high=0.0)
    m = total / n
    var = (squares * n - total * total) / (n * (n - 1)) if n > 1 else 0.0  # exact integers until the division
    sd = math.sqrt(max(var, 0.0))
    half = Z95 * sd / math.sqrt(n)
    low, high = m - half, m + half
    return Mean(mean=m, sd=sd, low=low if lowest is None else float(max(low, lowest)),
                high=high if highest is None else float(min(high, highest)))


def paired(a: Sequence[int], b: Sequence[int]) -> tuple[float, float, float]:
    """The mean difference of paired values (fight i of A minus fight i of B) and its normal 95 % interval."""
    n = len(a)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    m = mean(sum(diffs), sum(d * d for d in diffs), n)
    return m.mean, m.low, m.high


def unpaired_rates(ka: int, kb: int, n: int) -> tuple[float, float]:
    """Newcombe's hybrid score interval for the difference of two independent rates (``ka``/n - ``kb``/n), from
    their Wilson intervals."""
    ra, rb = rate(ka, n), rate(kb, n)
    d = ra.rate - rb.rate
    low = d - math.sqrt((ra.rate - ra.low) ** 2 + (rb.high - rb.rate) ** 2)
    high = d + math.sqrt((ra.high - ra.rate) ** 2 + (rb.rate - rb.low) ** 2)
    return max(-1.0, low), min(1.0, high)


def paired_rates(both: int, only_a: int, only_b: int, neither: int) -> tuple[float, float]:
    """Newcombe's interval for the difference of two paired rates (his method 10: the two Wilson intervals added in
    squares, corrected for how the pairs move together), from the four counts of the pairs: ``both`` true,
    ``only_a``, ``only_b``, ``neither``. Unlike the normal interval of the fight-by-fight differences it never
    collapses to a point when no pair differs: that says the difference is small, not that it is exactly 0
    (Newcombe 1998, Statistics in Medicine 17: 2635-2650; the correlation term as in Altman et al., *Statistics with
    Confidence*, 2000, ch. 6).

    >>> paired_rates(0, 0, 0, 100)  # no pair differs, neither side ever: 0, within Wilson's 0 to 3.7 % either way
    (-0.03699..., 0.03699...)
    """
    n = both + only_a + only_b + neither
    if n == 0:
        return -1.0, 1.0
    ka, kb = both + only_a, both + only_b
    ra, rb = rate(ka, n), rate(kb, n)
    d = ra.rate - rb.rate
    margins = ka * (n - ka) * kb * (n - kb)
    agree = both * neither - only_a * only_b
    phi = 0.0
    if margins:
        phi = (agree - n / 2 if agree > n / 2 else agree if agree < 0 else 0.0) / math.sqrt(margins)
    da, ua = ra.rate - ra.low, ra.high - ra.rate
    db, ub = rb.rate - rb.low, rb.high - rb.rate
    low = d - math.sqrt(max(0.0, da * da - 2 * phi * da * ub + ub * ub))
    high = d + math.sqrt(max(0.0, db * db - 2 * phi * db * ua + ua * ua))
    return max(-1.0, low), min(1.0, high)


def unpaired_means(a: Mean, b: Mean, n: int) -> tuple[float, float]:
    """The normal 95 % interval of the difference of two independent means of ``n`` each (Welch's standard
    error)."""
    if n == 0:
        return 0.0, 0.0
    se = math.sqrt((a.sd * a.sd + b.sd * b.sd) / n)
    d = a.mean - b.mean
    return d - Z95 * se, d + Z95 * se


def difference_of_rates(what: str, a: Sequence[bool], b: Sequence[bool]) -> Difference:
    """A rate's difference between two runs on the same seeds: paired (:func:`paired_rates`, Newcombe's interval for
    paired rates) and unpaired (:func:`unpaired_rates`), each within -1..+1 (a difference of two rates is never
    beyond it; the normal interval of the fight-by-fight differences reached past it near ±1, and collapsed to a
    point when no pair differed: a tester).

    >>> d = difference_of_rates("wins", [True] * 59 + [False], [False] * 59 + [True])
    >>> signed(d.difference), signed(d.paired_low), signed(d.paired_high)  # the normal one: +0.901 to +1.032
    ('+0.967', '+0.823', '+0.994')
    >>> same = difference_of_rates("wins", [True] * 50 + [False] * 50, [True] * 50 + [False] * 50)
    >>> signed(same.paired_low), signed(same.paired_high)  # no pair differs: small, not exactly 0
    ('-0.019', '+0.019')
    """
    n = len(a)
    ka, kb = sum(a), sum(b)
    both = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    plo, phi = paired_rates(both, ka - both, kb - both, n - ka - kb + both)
    ulo, uhi = unpaired_rates(ka, kb, n)
    return Difference(what=what, a=ka / n if n else 0.0, b=kb / n if n else 0.0, difference=(ka - kb) / n if n else 0.0,
                      paired_low=plo, paired_high=phi, unpaired_low=ulo, unpaired_high=uhi)


def difference_of_means(what: str, a: Sequence[int], b: Sequence[int]) -> Difference:
    """A mean's difference between two runs on the same seeds, paired and unpaired."""
    n = len(a)
    ma, mb = mean(sum(a), sum(x * x for x in a), n), mean(sum(b), sum(y * y for y in b), n)
    d, plo, phi = paired(a, b)
    ulo, uhi = unpaired_means(ma, mb, n)
    return Difference(what=what, a=ma.mean, b=mb.mean, difference=d, paired_low=plo, paired_high=phi,
                      unpaired_low=ulo, unpaired_high=uhi)


def share(r: Rate) -> str:
    """A rate as the text report's table writes it, in percent (the column says so), with its Wilson 95 % interval
    in brackets: compact enough for two such columns in a terminal's width.

    >>> share(rate(16, 100)), share(rate(0, 200))
    ('16.0 (10.1–24.4)', '0.0 (0.0–1.9)')
    """
    return f"{percent(r.rate)} ({percent(r.low)}–{percent(r.high)})"


def percent(value: float) -> str:
    """A share in percent to a tenth, as every report writes it: the decimal the float stands for (its shortest
    repr) rounded half to even, so that complementary shares that are exact halves of a tenth (78.85 % and 21.15 %)
    round apart and add up to 100.0 (binary floats round both down: 78.8 and 21.1, a tester).

    >>> percent(0.7885), percent(0.2115), percent(1 / 3), percent(0.0)
    ('78.8', '21.2', '33.3', '0.0')
    """
    return str((Decimal(repr(value)) * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN) + 0)


def signed(value: float) -> str:
    """A difference as the reports write it, to a thousandth with its sign; one that rounds to zero is +0.000, never
    -0.000.

    >>> signed(-0.0004), signed(0.0123), signed(-0.25)
    ('+0.000', '+0.012', '-0.250')
    """
    return f"{value:+z.3f}"
