# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""install-config (PROTOCOL.md, install-config): a run's config files into the server's config folder.

- installer: the command: the target folder, backups, atomic replace, the test-double marker, dry-run diff;
- rowmerge: never worse than the file at the target, row by row (issue 20).
"""

__all__ = ()  # nothing public: its modules are imported by name
