# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
import sys

from moetune_agent.cli import main

__all__ = ()  # nothing public: runs the agent

if __name__ == "__main__":
    sys.exit(main())
