"""TrueSkill for free-for-all matches of one-player teams, the leaderboard's only use of it.

The ``trueskill`` package builds a factor graph of Python objects for every match (about 1.8 ms for
ten players, more than a whole Pirate Game episode). A free-for-all of single players is a chain:
each player's performance ``t_i`` (skill prior plus performance noise), one difference ``t_i -
t_{i+1}`` per pair of neighbours in rank order, truncated by the outcome (win or draw). This
module passes the same messages in the same schedule as ``trueskill.TrueSkill.rate`` (forward and
backward sweeps over the chain until no truncation moves by more than ``min_delta``, at most ten
times) on plain floats, with the package's default parameters and draw margin. The truncation's
``v``/``w`` functions use the exact normal cdf (``math.erfc``) where the package approximates
``erfc`` to about 1e-7, so ratings agree with the package's to about 1e-6 (tests check 1e-5), at
a sixth of the cost or less.

Gaussians are in natural parameters: ``pi`` (precision) and ``tau`` (precision times mean).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import trueskill

Rating = tuple[float, float]  # (mu, sigma)
_VW = Callable[[float, float], tuple[float, float]]
_MIN_DELTA = 0.0001  # the package's default
_SWEEPS = 10
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / _SQRT2)


def _pdf(x: float) -> float:
    return _INV_SQRT_2PI * math.exp(-x * x / 2.0)


def _too_extreme() -> FloatingPointError:
    return FloatingPointError("TrueSkill: a winner's rating is too far below a loser's for double precision")


def _vw_win(diff: float, margin: float) -> tuple[float, float]:
    """Mean and variance corrections of a performance difference truncated to ``> margin``."""
    x = diff - margin
    denom = _cdf(x)
    v = _pdf(x) / denom if denom else -x
    w = v * (v + x)
    if not 0.0 < w < 1.0:
        raise _too_extreme()
    return v, w


def _vw_draw(diff: float, margin: float) -> tuple[float, float]:
    """Mean and variance corrections of a performance difference truncated to ``[-margin, margin]``."""
    a, b = margin - abs(diff), -margin - abs(diff)
    denom = _cdf(a) - _cdf(b)
    if not denom:
        raise _too_extreme()
    pdf_a, pdf_b = _pdf(a), _pdf(b)
    v = (pdf_b - pdf_a) / denom
    return (-v if diff < 0 else v), v * v + (a * pdf_a - b * pdf_b) / denom


def _sum_message(pairs: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """Message of a sum factor ``sum(c * x)`` from the (coefficient, pi, tau) of its other inputs."""
    pi_inv = 0.0
    mu = 0.0
    for coeff, pi, tau in pairs:
        mu += coeff * (pi and tau / pi)
        if pi_inv != math.inf:
            pi_inv = pi_inv + coeff ** 2 / pi if pi else math.inf
    pi = 1.0 / pi_inv
    return pi, pi * mu


class FreeForAll:
    """``rate(ratings, ranks)``: new (mu, sigma) of each player after one match (rank 0 = best)."""

    def __init__(self, env: trueskill.TrueSkill | None = None):
        self.env = env or trueskill.TrueSkill()
        self.beta2 = self.env.beta ** 2
        self.tau2 = self.env.tau ** 2
        self.margin = trueskill.calc_draw_margin(self.env.draw_probability, 2, self.env)

    def initial(self) -> Rating:
        return float(self.env.mu), float(self.env.sigma)

    def rate(self, ratings: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
        if len(ratings) != len(ranks) or len(ratings) < 2:
            raise ValueError(f"rate needs >= 2 ratings and one rank each, got {len(ratings)} and {len(ranks)}")
        order = sorted(range(len(ratings)), key=lambda i: ranks[i])
        # skill s_i: its prior; performance t_i = s_i + noise: the likelihood's message down
        s_pi: list[float] = []
        s_tau: list[float] = []
        p_msg: list[tuple[float, float]] = []  # the likelihood's message to the performance
        t_pi: list[float] = []
        t_tau: list[float] = []
        for i in order:
            mu, sigma = ratings[i]
            pi = math.sqrt(sigma ** 2 + self.tau2) ** -2
            tau = pi * mu
            s_pi.append(pi)
            s_tau.append(tau)
            a = 1.0 / (1.0 + self.beta2 * pi)
            p_msg.append((a * pi, a * tau))
            # the team-performance sum factor of a one-player team passes the message on
            down = _sum_message(((1, a * pi, a * tau),))
            t_pi.append(down[0])
            t_tau.append(down[1])
        prior = list(zip(t_pi, t_tau))
        links = len(order) - 1
        vw: list[_VW] = [_vw_draw if ranks[order[x]] == ranks[order[x + 1]] else _vw_win for x in range(links)]
        # messages of difference factor x: to t_x (left), to t_{x+1} (right), to d_x (down);
        # of truncation x to d_x (trunc); d_x's value
        left = [(0.0, 0.0)] * links
        right = [(0.0, 0.0)] * links
        down_msg = [(0.0, 0.0)] * links
        trunc = [(0.0, 0.0)] * links
        d_val = [(0.0, 0.0)] * links

        def diff_down(x: int) -> None:
            msg = _sum_message(((1, t_pi[x] - left[x][0], t_tau[x] - left[x][1]),
                                (-1, t_pi[x + 1] - right[x][0], t_tau[x + 1] - right[x][1])))
            old = down_msg[x]
            d_val[x] = (d_val[x][0] - old[0] + msg[0], d_val[x][1] - old[1] + msg[1])
            down_msg[x] = msg

        def trunc_up(x: int) -> float:
            d_pi, d_tau = d_val[x]
            c_pi, c_tau = d_pi - trunc[x][0], d_tau - trunc[x][1]
            sqrt_pi = math.sqrt(c_pi)
            v, w = vw[x](c_tau / sqrt_pi, self.margin * sqrt_pi)
            pi, tau = c_pi / (1.0 - w), (c_tau + sqrt_pi * v) / (1.0 - w)
            trunc[x] = (pi + trunc[x][0] - d_pi, tau + trunc[x][1] - d_tau)
            d_val[x] = (pi, tau)
            pi_delta = abs(d_pi - pi)
            return 0.0 if pi_delta == math.inf else max(abs(d_tau - tau), math.sqrt(pi_delta))

        def diff_up(x: int, to_right: bool) -> None:
            d = (d_val[x][0] - down_msg[x][0], d_val[x][1] - down_msg[x][1])
            if to_right:  # t_{x+1} = t_x - d_x
                msg = _sum_message(((1.0, t_pi[x] - left[x][0], t_tau[x] - left[x][1]), (-1.0, *d)))
                j, old, right[x] = x + 1, right[x], msg
            else:  # t_x = d_x + t_{x+1}
                msg = _sum_message(((1.0, *d), (1.0, t_pi[x + 1] - right[x][0], t_tau[x + 1] - right[x][1])))
                j, old, left[x] = x, left[x], msg
            t_pi[j] = t_pi[j] - old[0] + msg[0]
            t_tau[j] = t_tau[j] - old[1] + msg[1]

        for _ in range(_SWEEPS):
            if links == 1:
                diff_down(0)
                delta = trunc_up(0)
            else:
                delta = 0.0
                for x in range(links - 1):
                    diff_down(x)
                    delta = max(delta, trunc_up(x))
                    diff_up(x, to_right=True)
                for x in range(links - 1, 0, -1):
                    diff_down(x)
                    delta = max(delta, trunc_up(x))
                    diff_up(x, to_right=False)
            if delta <= _MIN_DELTA:
                break
        diff_up(0, to_right=False)
        diff_up(links - 1, to_right=True)
        rated: list[Rating] = [(0.0, 0.0)] * len(order)
        for k, i in enumerate(order):
            # back up: the team sum factor to the performance, the likelihood to the skill
            up = _sum_message(((1.0, t_pi[k] - prior[k][0], t_tau[k] - prior[k][1]),))
            lik = p_msg[k]
            msg_pi, msg_tau = (lik[0] + up[0]) - lik[0], (lik[1] + up[1]) - lik[1]
            a = 1.0 / (1.0 + self.beta2 * msg_pi)
            pi, tau = s_pi[k] + a * msg_pi, s_tau[k] + a * msg_tau
            rated[i] = (float(pi and tau / pi), float(math.sqrt(1 / pi) if pi else math.inf))
        return rated
