"""The statistics of a run (omen_replay/simulate/stats.py): Wilson intervals, means, paired and unpaired differences."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omen_replay.simulate.stats import (
    Z95,
    difference_of_means,
    difference_of_rates,
    half_width,
    mean,
    paired_rates,
    percent,
    rate,
    unpaired_rates,
)


class TestWilson:
    def test_the_textbook_values(self) -> None:
        """Wilson's score interval of 16 in 100 is 10.1 % to 24.4 %; of 0 in 10, 0 to 27.8 %; of 10 in 10, 72.2 %
        to 100 % (computed by hand from (p + z²/2n ± z√(p(1-p)/n + z²/4n²)) / (1 + z²/n))."""
        assert [round(x, 3) for x in (rate(16, 100).low, rate(16, 100).high)] == [0.101, 0.244]
        assert (rate(0, 10).low, round(rate(0, 10).high, 3)) == (0.0, 0.278)
        assert (round(rate(10, 10).low, 3), rate(10, 10).high) == (0.722, 1.0)

    @given(st.integers(1, 100_000), st.data())
    def test_an_interval_holds_its_rate_and_stays_in_0_to_1(self, n: int, data: st.DataObject) -> None:
        """Every interval holds the rate it is about and lies within 0 and 1."""
        k = data.draw(st.integers(0, n))
        r = rate(k, n)
        assert 0.0 <= r.low <= r.rate <= r.high <= 1.0 and r.rate == k / n

    def test_half_a_win_rate_needs_about_9600_fights_for_one_point(self) -> None:
        """At 50 %, the half-width falls under 0.01 near 1.96² · 0.25 / 0.01² = 9,604 fights (Wilson's interval is
        a little narrower than the textbook one: by 9,600)."""
        assert half_width(rate(4750, 9500)) > 0.01 > half_width(rate(4800, 9600))

    def test_nothing_known_is_0_to_1(self) -> None:
        """No fights: the interval is the whole range."""
        assert (rate(0, 0).low, rate(0, 0).high) == (0.0, 1.0)


class TestMeans:
    @given(st.lists(st.integers(-50, 50), min_size=2, max_size=200))
    def test_a_mean_and_its_spread_are_the_samples(self, values: list[int]) -> None:
        """The mean and standard deviation are the sample's (statistics module), the interval mean ± z·s/√n."""
        m = mean(sum(values), sum(v * v for v in values), len(values))
        assert m.mean == pytest.approx(statistics.fmean(values))
        assert m.sd == pytest.approx(statistics.stdev(values), abs=1e-9)
        assert m.high - m.mean == pytest.approx(Z95 * m.sd / math.sqrt(len(values)), abs=1e-9)


class TestDifferences:
    def test_paired_is_tighter_when_the_runs_move_together(self) -> None:
        """Two runs whose fights mostly agree (A wins where B wins, 10 of 400 differ): the paired interval of the
        difference in win rates is far narrower than the unpaired one, and both hold the difference."""
        a = [i % 2 == 0 for i in range(400)]
        b = [x if i >= 10 else not x for i, x in enumerate(a)]
        d = difference_of_rates("wins", a, b)
        assert d.paired_low <= d.difference <= d.paired_high and d.unpaired_low <= d.difference <= d.unpaired_high
        assert (d.paired_high - d.paired_low) * 3 < d.unpaired_high - d.unpaired_low

    def test_the_same_run_twice_differs_by_nothing(self) -> None:
        """A run compared with itself: the paired difference is exactly 0 with no width."""
        values = [1, 4, 2, 8, 5, 7]
        d = difference_of_means("rounds", values, values)
        assert (d.difference, d.paired_low, d.paired_high) == (0.0, 0.0, 0.0) and d.unpaired_low < 0 < d.unpaired_high

    def test_newcombes_interval_is_built_from_the_two_wilson_intervals(self) -> None:
        """The unpaired difference of two rates is Newcombe's hybrid score interval: d - √((p1-l1)² + (u2-p2)²) to
        d + √((u1-p1)² + (p2-l2)²)."""
        a, b = rate(60, 100), rate(45, 100)
        low, high = unpaired_rates(60, 45, 100)
        assert low == pytest.approx(0.15 - math.hypot(a.rate - a.low, b.high - b.rate))
        assert high == pytest.approx(0.15 + math.hypot(a.high - a.rate, b.rate - b.low))


class TestDifferencesStayInRange:
    def test_a_paired_difference_of_rates_stays_within_minus_one_plus_one(self) -> None:
        """A wins 59 of 60 where B wins 1, on opposite fights: the normal interval of the fight-by-fight differences
        (+0.967) was +0.901 to +1.032, past +1, which no difference of two rates can be (the tester saw +1.016);
        Newcombe's paired interval is inside, and mirrored when A and B swap, as is the unpaired one."""
        d = difference_of_rates("wins", [True] * 59 + [False], [False] * 59 + [True])
        assert (round(d.difference, 4), round(d.paired_low, 4), round(d.paired_high, 4)) == (0.9667, 0.8229, 0.9941)
        e = difference_of_rates("wins", [False] * 59 + [True], [True] * 59 + [False])
        assert (round(e.paired_low, 4), round(e.paired_high, 4)) == (-0.9941, -0.8229)
        assert -1.0 <= d.unpaired_low <= d.unpaired_high <= 1.0


class TestPairedRates:
    def test_newcombes_own_worked_example(self) -> None:
        """Newcombe (1998, Statistics in Medicine 17: 2635-2650), his paired example of 50 pairs, 36 both, 12 the
        first alone, 2 the second alone, none neither: method 10 gives 0.0569 to 0.3404 for the difference 0.2."""
        low, high = paired_rates(36, 12, 2, 0)
        assert (round(low, 4), round(high, 4)) == (0.0569, 0.3404)

    def test_no_pair_differing_is_a_small_difference_not_an_exact_zero(self) -> None:
        """Two runs that agree fight by fight (50 wins of 100 each, the same fights): the paired difference is 0, and
        its interval is Newcombe's ±0.019, not the point 0 to 0 the normal interval of the differences gave (its
        standard deviation is 0: "0 ± 0", the overconfidence the Wilson interval avoids for a rate: a tester)."""
        d = difference_of_rates("wins", [True] * 50 + [False] * 50, [True] * 50 + [False] * 50)
        assert d.difference == 0.0
        assert round(d.paired_low, 4) == -0.0192 and round(d.paired_high, 4) == 0.0192

    def test_never_won_on_either_side_is_wilsons_upper_bound_either_way(self) -> None:
        """Neither side ever wins in 100 paired fights: the correlation term has no margins (phi 0), so the interval
        is the square-and-add of the two Wilson intervals, 0 to 3.7 % each: -0.037 to +0.037."""
        low, high = paired_rates(0, 0, 0, 100)
        top = rate(0, 100).high
        assert low == pytest.approx(-top) and high == pytest.approx(top) and round(top, 4) == 0.037

    def test_uncorrelated_pairs_give_the_unpaired_interval(self) -> None:
        """Pairs that move independently (25 both, 25 only A, 25 only B, 25 neither: ad - bc = 0, phi 0) give
        Newcombe's unpaired hybrid interval exactly: pairing buys nothing."""
        assert paired_rates(25, 25, 25, 25) == pytest.approx(unpaired_rates(50, 50, 100))

    @given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
    def test_the_interval_holds_the_difference_and_stays_in_range(self, both: int, only_a: int, only_b: int,
                                                                  neither: int) -> None:
        """Whatever the four counts, the paired interval holds the observed difference and lies within -1..+1."""
        n = both + only_a + only_b + neither
        low, high = paired_rates(both, only_a, only_b, neither)
        d = (only_a - only_b) / n if n else 0.0
        assert -1.0 <= low <= d + 1e-12 and d - 1e-12 <= high <= 1.0


class TestPercent:
    def test_complementary_halves_round_apart_and_add_up_to_a_hundred(self) -> None:
        """1,577 wins and 423 draws of 2,000 (78.85 % and 21.15 %): rounded half to even from the decimals they stand
        for, 78.8 % and 21.2 %; the floats' own rounding gave 78.8 % and 21.1 %, 99.9 % in all (a tester)."""
        a, b = rate(1577, 2000).rate, rate(423, 2000).rate
        assert (f"{a:.1%}", f"{b:.1%}") == ("78.8%", "21.1%")  # the floats' own rounding, both down
        assert (percent(a), percent(b)) == ("78.8", "21.2")
        assert float(percent(a)) + float(percent(b)) == 100.0
