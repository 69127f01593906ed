# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later

__all__ = ()  # nothing public: its modules are imported by name
