# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run process (cli.py starts it detached, or runs it in the foreground):

- runner: Run, the process itself: pid and state, the backend started (auto: the first that can run),
  the errors a run ends with, the phases in order;
- session: what the phases share, and measuring a phase / checking configs on the scheduler;
- phases: announce, search (default config + strategy), checked winners, head-to-head, output files;
- results: winners -> the SGLang/vLLM config files and result.json.
"""

__all__ = ()  # nothing public: its modules are imported by name
