# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run registry (PROTOCOL.md section 4), one floor above the safe-file layer:

- store: run folders under the home folder, ids, state, pid liveness, listing;
- logs: a run's events.jsonl (seq numbered, what attach follows) and journal.jsonl (fsync'd, replayed on
  resume), and the SIMULATED marker with what makes a run simulated;
- compile_cache: the host's Triton compile cache shared by every run and headroom check.
"""

__all__ = ()  # nothing public: its modules are imported by name
