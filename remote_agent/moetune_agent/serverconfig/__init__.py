# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The servers' fused-MoE config files, as SGLang and vLLM read them:

- naming: their file names (each server's naming of a logical shape per dtype, the Triton version folder);
- configjson: their exact contents (key order, the row per batch size).
"""

__all__ = ()  # nothing public: its modules are imported by name
