# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The agent's options (moetune_agent/options.py): the only module that reads or sets the process
environment; host options from their variables; test hooks only for the synthetic backend; every MOETUNE_*
variable the agent knows is documented in remote_agent/README.md."""

import ast
import os
import re
import unittest

import agenttest
from moetune_agent import options

PKG = os.path.join(agenttest.AGENT_ROOT, "moetune_agent")


def _sources():
    for dp, _dn, fns in os.walk(PKG):
        for fn in sorted(fns):
            if fn.endswith(".py"):
                yield os.path.join(dp, fn)


def _environ_uses(path):
    """Lines of path that name os.environ, os.getenv or os.putenv (a call or an attribute)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "putenv", "unsetenv"):
            out.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                a.name in ("environ", "getenv", "putenv") for a in node.names):
            out.append(node.lineno)
    return out


class OnlyTheOptionsModule(unittest.TestCase):
    def test_no_environment_outside_options(self):
        found = {}
        for path in _sources():
            rel = os.path.relpath(path, agenttest.AGENT_ROOT)
            if rel == os.path.join("moetune_agent", "options.py"):
                continue
            lines = _environ_uses(path)
            if lines:
                found[rel] = lines
        self.assertEqual(found, {}, "the process environment is read or set outside moetune_agent/options.py")

    def test_the_check_sees_an_environ_use(self):
        """The test above can fail: a module that reads os.environ is found."""
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write("import os\nX = os.environ.get('MOETUNE_X')\nfrom os import getenv\n")
        self.addCleanup(os.unlink, f.name)
        self.assertEqual(sorted(_environ_uses(f.name)), [2, 3])

    def test_every_variable_documented(self):
        with open(os.path.join(agenttest.AGENT_ROOT, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        with open(os.path.join(PKG, "options.py"), encoding="utf-8") as f:
            names = set(re.findall(r'"(MOETUNE_[A-Z0-9_]+)"', f.read()))
        self.assertGreater(len(names), 15)
        missing = sorted(n for n in names if "`%s`" % n not in readme)
        self.assertEqual(missing, [], "not in remote_agent/README.md's options table")


class Values(unittest.TestCase):
    def test_host_options_from_their_variables(self):
        self.assertEqual(options.HostOptions.from_env({}), options.HostOptions())
        h = options.HostOptions.from_env({"MOETUNE_HOME": "/h", "MOETUNE_UNIT_TIMEOUT_S": "5", "MOETUNE_COMPILE_CACHE": "0",
                                          "MOETUNE_PREWARM": "0", "MOETUNE_PYCACHE": "1"})
        self.assertEqual((h.home, h.unit_timeout_s, h.compile_cache, h.prewarm, h.bytecode_cache),
                         ("/h", 5.0, options.OFF, False, options.ON))

    def test_test_hooks_only_for_the_synthetic_backend(self):
        env = {"MOETUNE_TEST_CRASH_UNIT": "u", "MOETUNE_PRECOMPILE_WORKERS": "3", "MOETUNE_SYNTHETIC_DELAY_MS": "7",
               "MOETUNE_TEST_INSTALL_PAUSE_S": "1.5"}
        syn = options.TestHooks.from_env(env, synthetic=True)
        self.assertEqual((syn.crash_unit, syn.precompile_workers, syn.synthetic_delay_ms), ("u", 3, 7.0))
        real = options.TestHooks.from_env(env, synthetic=False)
        self.assertEqual(real, options.TestHooks(install_pause_s=1.5))

    def test_built_again_when_a_variable_changes(self):
        before = options.host()
        self.assertIs(options.host(), before)
        os.environ["MOETUNE_UNIT_TIMEOUT_S"] = "12"
        try:
            self.assertEqual(options.host().unit_timeout_s, 12.0)
        finally:
            del os.environ["MOETUNE_UNIT_TIMEOUT_S"]
        self.assertEqual(options.host().unit_timeout_s, before.unit_timeout_s)


if __name__ == "__main__":
    unittest.main()
