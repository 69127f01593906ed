# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The engine below the commands: the GPU worker processes (worker.py), the CPU precompile pool (pool.py),
the scheduler that dispatches units to them (scheduler.py) and the workers' bytecode cache (bytecode.py).
Importing the package imports none of them (a bytecode warm-up child imports bytecode.py alone)."""

__all__ = ()  # nothing public: its modules are imported by name
