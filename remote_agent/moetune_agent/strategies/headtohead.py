# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The final decision per (op, batch size): an interleaved head-to-head of the finalists and the server's
default, in the same rounds.

Why: timing the default once at the start and the finalists later lets drift and small-M noise (5-10%)
decide, and a tuned file then comes out slower than no file (issue 9: 0.934-0.999 at M=1-4). Here every
round times every contender of every undecided key once (interleaved), so slow drift hits all of them
alike. A challenger replaces the default only when its margin is outside the measured spread: the upper
quartile of its per-round times is below the lower quartile of the default's. Otherwise more rounds run
(up to MAX_ROUNDS); a key still undecided then keeps the default (a tie), so the file is never slower
than no file at any key.

Rounds: 3 first; a key whose outcome is unmistakable by then (one side faster in every round, by 3%
or more in the median) is decided there, which is most keys where tuning gains 1.4x (issue 13: the
head-to-head was the largest block of GPU time left); every other key gets at least 5.

Stopping as soon as a decision is certain (issue 22: on the user's path the head-to-head was still ~15%
of the wall): the first two rounds run alone, and a key whose sides are apart by more than BIG_MARGIN
in both (the slowest round of the faster side 10% under the fastest of the other: per-round medians of
10 replays vary by at most a few percent even at M=1) is decided there; a tuned contender that lost
both of those rounds to another tuned one by CLEAR_MARGIN is dropped from the later rounds (it cannot
become the challenger: the decision is between the default and the best tuned contender); after the
minimum, keys are re-judged every STEP_ROUNDS rounds instead of four. The drop is judged on rounds 0
and 1 only, so it never changes once made and a resumed run repeats it.

Quiet rounds (issue 22: on the server paths most keys' contenders are within a fraction of a percent of
the default, and each ran the full MIN_ROUNDS, about 60% of a SGLang head-to-head's units): after
FIRST_ROUNDS, where every side's rounds lie within EVEN_SPREAD of each other (the paired ratios on a GPU
do; noisy rounds go on as before), a key is decided there when
  - every round of the best tuned contender beat every round of the default by QUIET_WIN (tuned), or
  - it is even: the best tuned median within TIE of the default's (or slower) and no tuned round more than
    EVEN_SPREAD faster than the default's median (the default is kept).
bench/h2h_replay.py drives the recorded H200 head-to-heads through both rule sets: the same config at
108 of 108 keys but one (two tuned contenders 0.2% apart), 15-30% fewer units on the server paths.

With separate up/down ops the decision is per batch size on the sum of the two GEMMs of a pair that
shares BLOCK_SIZE_M (the servers share one alignment between them), against the default pair.

Pure functions of the measurements (standard library only): a resumed run reaches the same decisions.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..kernel_types import KernelConfig
from ..work import Measurement, Unit, timed_replays
from .common import median
from .contenders import FINALISTS, pick_contenders

__all__ = [
    "BIG_MARGIN",
    "CLEAR_MARGIN",
    "Contender",
    "EARLY_ROUNDS",
    "EVEN_SPREAD",
    "FINALISTS",
    "FIRST_ROUNDS",
    "H2H_ROUND",
    "HeadToHead",
    "MAX_ROUNDS",
    "MIN_ROUNDS",
    "QUIET_WIN",
    "REPLAYS",
    "STEP_ROUNDS",
    "TIE",
    "pick_contenders",
    "quantile",
]

H2H_ROUND = 200  # rounds 200.. are head-to-head rounds (tier 2 of the strategies' Book)
FIRST_ROUNDS = 3  # a key whose outcome is already unmistakable is decided here (issue 13)
CLEAR_MARGIN = 0.03  # ... when every round of one side beat every round of the other by this much
MIN_ROUNDS = 5
STEP_ROUNDS = 2
EARLY_ROUNDS = 2  # rounds after which a key apart by BIG_MARGIN is decided and clear losers drop out
BIG_MARGIN = 0.10
MAX_ROUNDS = 13
REPLAYS = 10
TIE = 0.002  # a challenger within 0.2% of the default is a tie whatever the spread
EVEN_SPREAD = 0.005  # quiet rounds: each side's rounds within this; an even key: no tuned round this much faster
QUIET_WIN = 0.003  # quiet rounds: every tuned round this much faster than every default round decides


def quantile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    if not s:
        return float("inf")
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


class Contender(object):
    """One side of a key's head-to-head: a config (op "both") or an (up, down) pair."""

    def __init__(self, cfgs: Tuple[KernelConfig, ...], is_default: bool):
        self.cfgs = cfgs
        self.is_default = is_default

    def key(self) -> str:
        return "+".join(c.key() for c in self.cfgs)


class HeadToHead(object):
    def __init__(
        self,
        ops: Sequence[str],
        sizes: Sequence[int],
        defaults: Dict[Tuple[str, int], KernelConfig],
        contenders: Dict[Tuple[str, int], List[KernelConfig]],
        replays: int = REPLAYS,
        min_rounds: int = MIN_ROUNDS,
        step_rounds: int = STEP_ROUNDS,
        max_rounds: int = MAX_ROUNDS,
        first_rounds: int = FIRST_ROUNDS,
        early_rounds: int = EARLY_ROUNDS,
        call_us: Optional[Dict[Tuple[str, int], Optional[float]]] = None,
        paired: bool = False,
        even_spread: float = EVEN_SPREAD,
    ):
        """contenders: per (op, m) the tuned configs to try (the default is added here). early_rounds 0
        turns off the decisions and drops after the first two rounds (the agent before issue 22).
        call_us: per (op, m) the default's measured time; the replays of a round at that size then
        follow work.timed_replays (10 at small M, down to 3 where one replay of 10 calls takes
        milliseconds), else `replays` everywhere. A function of the journal: a resumed run derives the
        same units. paired: every tuned config of a round is timed in one unit with the default (Unit.pair,
        replay by replay alternating) and judged by its ratio to the default of that unit (see _times);
        an op whose only config is the default is timed alone. even_spread 0 turns off the quiet-rounds
        decisions after FIRST_ROUNDS (the agent before stop 34)."""
        self.paired = paired
        self.even_spread = even_spread
        self.first_rounds = min(first_rounds, min_rounds)
        self.early_rounds = min(early_rounds, self.first_rounds - 1) if early_rounds > 0 else 0
        self.ops = tuple(ops)
        self.sizes = list(sizes)
        self.defaults = dict(defaults)
        self.replays = replays
        self.replays_at: Dict[Tuple[str, int], int] = {}
        for op in self.ops:
            for m in self.sizes:
                self.replays_at[(op, m)] = (
                    timed_replays((call_us or {}).get((op, m)), unknown=replays) if call_us is not None else replays
                )
        self.min_rounds = min_rounds
        self.step_rounds = step_rounds
        self.max_rounds = max_rounds
        self.cfgs: Dict[Tuple[str, int], List[KernelConfig]] = {}
        for op in self.ops:
            for m in self.sizes:
                d = self.defaults[(op, m)]
                seen = [d]
                for c in contenders.get((op, m), []):
                    if c not in seen:
                        seen.append(c)
                self.cfgs[(op, m)] = seen

    # -- the work ----------------------------------------------------------------------------------
    def units(self, m: int, rnd: int, times=None) -> List[Unit]:
        """Round rnd at m: the default and every config of a contender still in the race."""
        live = None
        if times is not None and self.early_rounds and rnd >= self.early_rounds:
            keep = [c for c in self._contenders(m) if c.is_default or c.key() not in self._dropped(m, times)]
            live = {op: {cfg for c in keep for o, cfg in zip(self.ops, c.cfgs) if o == op} for op in self.ops}
        out: List[Any] = []
        for op in self.ops:
            d = self.defaults[(op, m)]
            reps = self.replays_at[(op, m)]
            if not self.paired:
                out.extend(
                    Unit(op, c, m, reps, H2H_ROUND + rnd)
                    for c in self.cfgs[(op, m)]
                    if live is None or c in live[op] or c == d
                )
                continue
            tuned = [c for c in self.cfgs[(op, m)] if c != d and (live is None or c in live[op])]
            out.extend(Unit(op, c, m, reps, H2H_ROUND + rnd, pair=d) for c in tuned)
            if not tuned:
                out.append(Unit(op, d, m, reps, H2H_ROUND + rnd))
        return out

    def _dropped(self, m: int, times) -> set:
        """Keys of the tuned contenders out of the race at m: slower than another tuned contender in each
        of the first early_rounds rounds by CLEAR_MARGIN (judged on those rounds only: stable)."""
        if not self.early_rounds:
            return set()
        first = list(range(self.early_rounds))
        series = []
        for c in self._contenders(m):
            if c.is_default:
                continue
            sr = self._series(m, c, times)
            if all(r in sr for r in first):
                vals = [sr[r] for r in first]
                series.append((c.key(), min(vals), max(vals), median(vals)))
        out = set()
        for k, lo, _hi, med in series:
            for k2, _lo2, hi2, med2 in series:
                if k2 != k and hi2 < lo and med2 * (1.0 + CLEAR_MARGIN) <= med:
                    out.add(k)
                    break
        return out

    def next_units(self, measured: Sequence[Measurement]) -> Optional[List[Unit]]:
        """The next rounds for every undecided batch size (interleaved: round r of every size and
        contender before round r+1), or None when every size is decided."""
        times = self._times(measured)
        todo: List[Unit] = []
        for m in self.sizes:
            dec = self._decide(m, times)
            if dec["final"]:
                continue
            n = dec["rounds"]
            if self.early_rounds and n < self.early_rounds:
                target = self.early_rounds
            elif n < self.first_rounds:
                target = self.first_rounds
            elif n < self.min_rounds:
                target = self.min_rounds
            else:
                target = min(self.max_rounds, n + self.step_rounds)
            for rnd in range(n, target):
                todo.extend(self.units(m, rnd, times))
        if not todo:
            return None
        todo.sort(key=lambda u: (u.round, self.sizes.index(u.m)))
        return todo

    def decisions(self, measured: Sequence[Measurement]) -> Dict[int, dict]:
        times = self._times(measured)
        return {m: self._decide(m, times) for m in self.sizes}

    # -- statistics ----------------------------------------------------------------------------------
    def _times(self, measured: Sequence[Measurement]) -> Dict[Tuple[str, int, str], Dict[int, float]]:
        """(op, m, config key) -> {round: median of that round's samples}; failures are absent.

        A paired unit gives its tuned config the ratio to the default timed beside it, scaled by the
        default's median over every paired unit at (op, m): value = D * c / d. The default's own value in
        such a round is D, so the rules below (quartiles over rounds) judge the ratios, free of the drift
        and clock changes that move rounds apart (issue 19: at M = 4096 unpaired units put the same two
        configs 1.50x to 1.70x apart). A paired unit whose default failed gives its config's own time."""
        out: Dict[Tuple[str, int, str], Dict[int, float]] = {}
        ref: Dict[Tuple[str, int], List[float]] = {}
        for meas in measured:
            u = meas.unit
            if u.round >= H2H_ROUND and u.cfg_down is None and meas.pair_samples_us:
                ref.setdefault((u.op, u.m), []).append(meas.pair_median_us)
        scale = {k: median(v) for k, v in ref.items()}
        for meas in measured:
            u = meas.unit
            if u.round < H2H_ROUND or u.cfg_down is not None:
                continue
            rnd = u.round - H2H_ROUND
            att = out.setdefault(("attempted", u.m, ""), {})
            att[rnd] = att.get(rnd, 0.0) + 1.0  # units of that round timed (or failed)
            if u.pair is not None and meas.pair_samples_us:
                out.setdefault((u.op, u.m, u.pair.key()), {})[rnd] = scale[(u.op, u.m)]
            if not meas.ok:
                continue  # (a tuned config that failed: its default was still timed, above)
            if meas.paired and meas.pair_median_us > 0:
                dd = scale[(u.op, u.m)]
                out.setdefault((u.op, u.m, u.cfg.key()), {})[rnd] = dd * meas.median_us / meas.pair_median_us
            else:
                out.setdefault((u.op, u.m, u.cfg.key()), {})[rnd] = median(meas.samples_us or [])
        return out

    def _contenders(self, m: int) -> List[Contender]:
        if self.ops == ("up", "down"):
            du, dd = self.defaults[("up", m)], self.defaults[("down", m)]
            out = [Contender((du, dd), True)]
            for u in self.cfgs[("up", m)]:
                for d in self.cfgs[("down", m)]:
                    if u.BLOCK_SIZE_M == d.BLOCK_SIZE_M and not (u == du and d == dd):
                        out.append(Contender((u, d), False))
            return out
        op = self.ops[0]
        d = self.defaults[(op, m)]
        return [Contender((d,), True)] + [Contender((c,), False) for c in self.cfgs[(op, m)] if c != d]

    def _series(self, m: int, c: Contender, times) -> Dict[int, float]:
        """Per round: the contender's time (the sum of its GEMMs for a pair); rounds where a part is
        missing are left out."""
        parts = [times.get((op, m, cfg.key()), {}) for op, cfg in zip(self.ops, c.cfgs)]
        rounds = set(parts[0])
        for p in parts[1:]:
            rounds &= set(p)
        return {r: sum(p[r] for p in parts) for r in rounds}

    def _rounds_run(self, m: int, times) -> int:
        """Rounds run at m, whatever failed in them: the leading rounds each of whose units was timed. A
        round the early head-to-head timed only in part (its fillers left over when a phase ended:
        tunerun/phases._early_head_to_head) is not counted until its other units are timed: next_units asks
        for them (the journal keeps those already timed), so no decision rests on a round one contender
        missed."""
        att = times.get(("attempted", m, ""), {})
        n = 0
        while n in att and att[n] >= len(self.units(m, n, times)):
            n += 1
        return n

    def _decide(self, m: int, times) -> dict:
        cons = self._contenders(m)
        stats: List[Dict[str, Any]] = []
        for c in cons:
            s = self._series(m, c, times)
            vals = [s[r] for r in sorted(s)]
            stats.append(
                {
                    "contender": c,
                    "values": vals,
                    "median": median(vals) if vals else float("inf"),
                    "q25": quantile(vals, 0.25),
                    "q75": quantile(vals, 0.75),
                    "min": min(vals) if vals else None,
                    "max": max(vals) if vals else None,
                }
            )
        dflt = stats[0]
        rounds = self._rounds_run(m, times)
        dropped = self._dropped(m, times) if rounds > self.early_rounds else set()
        ranked = sorted(
            (st for st in stats[1:] if st["contender"].key() not in dropped),
            key=lambda st: (st["median"], st["contender"].key()),
        )
        chal = ranked[0] if ranked and ranked[0]["values"] else None
        out = {
            "m": m,
            "rounds": rounds,
            "stats": stats,
            "default": dflt,
            "challenger": chal,
            "dropped": sorted(dropped),
        }
        if rounds < self.min_rounds:
            clear = None
            if chal is not None and len(chal["values"]) < rounds:
                pass  # a round in which the challenger failed: never decided early
            elif rounds >= self.first_rounds:
                clear = self._clear(dflt, chal)
                if clear is None:
                    clear = self._quiet(dflt, chal, [st for st in stats[1:] if st["contender"].key() not in dropped])
            elif self.early_rounds and rounds >= self.early_rounds:
                clear = self._clear(dflt, chal, BIG_MARGIN, others=stats[1:])
            if clear is not None:
                out.update(final=True, chosen=chal if clear == "tuned_faster" else dflt, decision=clear)
            else:
                out.update(final=False, chosen=dflt, decision="pending")
            return out
        if not dflt["values"]:
            # the server's default could not run here: the best tuned contender that did, if any
            out.update(final=True, chosen=chal, decision="default_failed" if chal else "all_failed")
            return out
        if chal is None or chal["median"] >= dflt["median"] * (1.0 - TIE):
            out.update(
                final=True,
                chosen=dflt,
                decision="default_fastest" if chal is None or chal["median"] >= dflt["median"] else "tie_default_kept",
            )
            return out
        if chal["q75"] < dflt["q25"]:
            out.update(final=True, chosen=chal, decision="tuned_faster")
            return out
        if rounds >= self.max_rounds:
            out.update(final=True, chosen=dflt, decision="tie_default_kept")
            return out
        out.update(final=False, chosen=dflt, decision="pending")
        return out

    def _quiet(self, dflt: dict, chal: Optional[dict], tuned: List[dict]) -> Optional[str]:
        """After FIRST_ROUNDS, the quiet-rounds rules of the module comment -> a decision or None. tuned:
        the contenders still in the race (chal is the best of them); any failed round: None."""
        if self.even_spread <= 0 or chal is None or not dflt["values"]:
            return None
        n = len(dflt["values"])
        d = dflt["median"]
        if any(len(st["values"]) != n for st in tuned):
            return None
        if any(max(st["values"]) - min(st["values"]) > d * self.even_spread for st in [dflt] + tuned):
            return None  # rounds this far apart: three of them do not tell a small gain from a tie
        if max(chal["values"]) <= min(dflt["values"]) * (1.0 - QUIET_WIN):
            return "tuned_faster"
        if chal["median"] >= d * (1.0 - TIE) and all(min(st["values"]) >= d * (1.0 - self.even_spread) for st in tuned):
            return "default_fastest" if chal["median"] >= d else "tie_default_kept"
        return None

    @staticmethod
    def _clear(
        dflt: dict, chal: Optional[dict], big: Optional[float] = None, others: Optional[List[dict]] = None
    ) -> Optional[str]:
        """After FIRST_ROUNDS: "tuned_faster" when the best challenger beat the default in every round
        and its median is CLEAR_MARGIN faster; "default_fastest" when the default beat every challenger
        round by that margin; None (more rounds) otherwise, and always while a side has a failed round.
        big (after EARLY_ROUNDS): the slowest round of the faster side must be that much under the
        fastest round of the other (and, for the default, under every tuned contender's)."""
        if chal is None or not dflt["values"] or len(chal["values"]) != len(dflt["values"]):
            return None
        if big is not None:
            if max(chal["values"]) * (1.0 + big) <= min(dflt["values"]):
                return "tuned_faster"
            if all(
                st["values"]
                and len(st["values"]) == len(dflt["values"])
                and max(dflt["values"]) * (1.0 + big) <= min(st["values"])
                for st in (others or [chal])
            ):
                return "default_fastest"
            return None
        if max(chal["values"]) < min(dflt["values"]) and chal["median"] * (1.0 + CLEAR_MARGIN) <= dflt["median"]:
            return "tuned_faster"
        if min(chal["values"]) > max(dflt["values"]) and dflt["median"] * (1.0 + CLEAR_MARGIN) <= chal["median"]:
            return "default_fastest"
        return None

    # -- results -------------------------------------------------------------------------------------
    def op_medians(self, measured: Sequence[Measurement]) -> Dict[Tuple[str, int, str], float]:
        """(op, m, config key) -> median over its head-to-head rounds."""
        out = {}
        for k, by_round in self._times(measured).items():
            if k[0] != "attempted" and by_round:
                out[k] = median(list(by_round.values()))
        return out

    def winners(self, measured: Sequence[Measurement]) -> Dict[Tuple[str, int], KernelConfig]:
        out: Dict[Tuple[str, int], KernelConfig] = {}
        for m, dec in self.decisions(measured).items():
            ch = dec.get("chosen")
            if ch is None:
                continue
            for op, cfg in zip(self.ops, ch["contender"].cfgs):
                out[(op, m)] = cfg
        return out

    def report(self, measured: Sequence[Measurement]) -> List[dict]:
        """Per batch size, for result.json: every contender's medians, quartiles and extremes, the
        decision, the rounds, and the speedup (default median / chosen median)."""
        rows = []
        for m, dec in self.decisions(measured).items():
            ch, d = dec.get("chosen"), dec["default"]

            def side(st):
                if st is None:
                    return None
                med = st["median"] if st["values"] else None
                return {
                    "configs": {op: c.as_dict() for op, c in zip(self.ops, st["contender"].cfgs)},
                    "default": st["contender"].is_default,
                    "median_us": med,
                    "q25_us": st["q25"] if st["values"] else None,
                    "q75_us": st["q75"] if st["values"] else None,
                    "min_us": st["min"],
                    "max_us": st["max"],
                    "rounds": len(st["values"]),
                    "spread": ((st["q75"] - st["q25"]) / med) if med else None,
                    "samples_us": [round(v, 4) for v in st["values"]],
                }

            dmed = d["median"] if d["values"] else None
            cmed = ch["median"] if ch is not None and ch["values"] else None
            chal = dec.get("challenger")
            rows.append(
                {
                    "m": m,
                    "ops": list(self.ops),
                    "rounds": dec["rounds"],
                    "decision": dec["decision"],
                    "dropped": dec.get("dropped") or [],
                    "chosen_default": bool(ch is not None and ch["contender"].is_default),
                    "chosen": side(ch),
                    "default": side(d),
                    "challenger": side(chal),
                    "median_us": cmed,
                    "default_median_us": dmed,
                    "speedup": (dmed / cmed) if dmed and cmed else None,
                    "margin": (d["median"] / chal["median"] - 1.0) if dmed and chal and chal["values"] else None,
                    "contenders": [side(st) for st in dec["stats"]],
                }
            )
        return rows
