# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The agent's import graph has floors: no cycle between its modules, and none between its subpackages
(tools/import_graph.py and --packages); the values everything uses (kernel_types) import nothing of the
agent, and backends/base.py re-exports none of them."""

import contextlib
import io
import os
import sys
import unittest

import agenttest

sys.path.insert(0, os.path.join(agenttest.AGENT_ROOT, "tools"))

import import_graph  # noqa: E402


def _graph(packages):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = import_graph.main(["--packages"] if packages else [])
    return rc, out.getvalue()


class Floors(unittest.TestCase):
    def test_modules_have_no_cycle(self):
        rc, text = _graph(False)
        self.assertEqual(rc, 0, text)
        self.assertNotIn("cycle:", text)

    def test_subpackages_have_no_cycle(self):
        rc, text = _graph(True)
        self.assertEqual(rc, 0, text)
        self.assertNotIn("cycle:", text)

    def test_kernel_types_on_floor_zero(self):
        pkg = import_graph.DEFAULT_PKG
        known = import_graph.module_names(pkg)
        self.assertEqual(import_graph.imports_of("moetune_agent.kernel_types", known["moetune_agent.kernel_types"],
                                                 known), set())

    def test_base_reexports_no_value(self):
        from moetune_agent.backends import base
        for name in ("Shape", "KernelConfig", "Timing", "CandidateError", "CONFIG_KEYS", "batch_sizes_default"):
            self.assertFalse(hasattr(base, name), name)


if __name__ == "__main__":
    unittest.main()
