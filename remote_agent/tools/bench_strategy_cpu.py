# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""CPU seconds the fast strategy itself spends deciding (next_phase + winners) in an 18-size run: time
in which the run process plans and the GPU waits, once per phase (issue 13). The measurements come
from the SYNTHETIC backend (simulated latencies; only the strategy's own CPU time is the figure).

    python3 remote_agent/tools/bench_strategy_cpu.py [--repeat 3] [--agent-root DIR]

--agent-root runs another checkout's moetune_agent (e.g. an older commit extracted with git archive) for a
before/after comparison. Prints, per shape and ops, the units, phases and the best-of-N process CPU
seconds of the strategy.
"""

import argparse
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--agent-root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    sys.path.insert(0, a.agent_root)
    from moetune_agent import space as space_mod
    from moetune_agent.backends.synthetic import SyntheticBackend
    from moetune_agent.kernel_types import CandidateError, Shape, batch_sizes_default
    from moetune_agent.strategies import make_strategy
    from moetune_agent.work import Measurement

    shapes = {"qwen3 bf16": Shape(E=128, N=768, K=2048, topk=8, dtype="bf16"),
              "fp8 block": Shape(E=256, N=256, K=7168, topk=8, dtype="fp8_w8a8", block_shape=(128, 128))}
    sizes = batch_sizes_default()
    print("agent: %s" % os.path.abspath(a.agent_root))
    for name, shape in shapes.items():
        for ops in (("both",), ("up", "down")):
            be = SyntheticBackend(shape)
            space = space_mod.build_space(shape, sizes, ops)
            best = None
            for _ in range(a.repeat):
                st = make_strategy("fast", space, sizes, ops, shape)
                meas, phases, cpu = [], 0, 0.0
                while True:
                    t = time.process_time()
                    ph = st.next_phase(meas)
                    cpu += time.process_time() - t
                    if ph is None:
                        break
                    phases += 1
                    for u in ph:
                        try:
                            meas.append(Measurement(u, be.measure(u.op, u.cfg, u.m, u.replays).samples_us))
                        except CandidateError as e:
                            meas.append(Measurement(u, None, e.kind, e.message))
                t = time.process_time()
                st.winners(meas)
                cpu += time.process_time() - t
                best = cpu if best is None else min(best, cpu)
            print("%-10s ops %-8s units %5d phases %3d strategy CPU %.2f s (best of %d)"
                  % (name, "+".join(ops), len(meas), phases, best, a.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
