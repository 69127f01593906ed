# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""cpu_compile.stop_after_compile against a FAKE of the two Triton 3.6 paths a precompile worker takes (a
test double: Triton and a GPU are not here; the H200 run in remote_agent/bench/RESULTS.md is the real
case). A kernel the process has not compiled yet is compiled, then the post-compile hook runs; one it
already holds (the server's kernel for another batch size with the same specialisation) skips both and
goes straight to loading the binary before the launch, which fails without a GPU. Both must end in
CompiledOnly inside the context, and nothing may stay patched after it."""

import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from moetune_agent.backends import cpu_compile  # noqa: E402


class FakeCompiledKernel:
    """Like triton.compiler.compiler.CompiledKernel: loading needs the GPU's properties."""

    def _init_handles(self):
        raise RuntimeError("Triton Error [CUDA]: initialization error")


class FakeJit:
    """Like JITFunction.run: compile on a cache miss (then the post-compile hook), load, launch."""

    def __init__(self, knobs):
        self.knobs = knobs
        self.cache = {}
        self.launches = 0

    def __call__(self, key):
        kernel = self.cache.get(key)
        if kernel is None:
            kernel = FakeCompiledKernel()
            self.cache[key] = kernel
            hook = self.knobs.jit_post_compile_hook
            if hook is not None:
                hook(key=key)
        kernel._init_handles()  # launch_metadata() loads the binary first
        self.launches += 1


class StopAfterCompile(unittest.TestCase):
    def setUp(self):
        self.runtime = types.SimpleNamespace(jit_post_compile_hook=None)
        triton = types.ModuleType("triton")
        triton.knobs = types.SimpleNamespace(runtime=self.runtime)
        compiler_pkg = types.ModuleType("triton.compiler")
        compiler_mod = types.ModuleType("triton.compiler.compiler")
        compiler_mod.CompiledKernel = FakeCompiledKernel
        compiler_pkg.compiler = compiler_mod
        triton.compiler = compiler_pkg
        self.saved = {n: sys.modules.get(n) for n in ("triton", "triton.compiler", "triton.compiler.compiler")}
        sys.modules.update({"triton": triton, "triton.compiler": compiler_pkg,
                            "triton.compiler.compiler": compiler_mod})
        self.original_init = FakeCompiledKernel.__dict__["_init_handles"]

    def tearDown(self):
        FakeCompiledKernel._init_handles = self.original_init
        for name, mod in self.saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod

    def test_a_new_kernel_and_a_cached_one_both_stop_before_the_launch(self):
        jit = FakeJit(self.runtime)
        with cpu_compile.stop_after_compile():
            with self.assertRaises(cpu_compile.CompiledOnly):
                jit("m=4")  # compiled now: the post-compile hook stops it
            with self.assertRaises(cpu_compile.CompiledOnly):
                jit("m=4")  # already held: only the load before the launch says so
        self.assertEqual(jit.launches, 0)
        self.assertEqual(len(jit.cache), 1)

    def test_nothing_stays_patched(self):
        jit = FakeJit(self.runtime)
        with cpu_compile.stop_after_compile():
            pass
        self.assertIsNone(self.runtime.jit_post_compile_hook)
        self.assertIs(FakeCompiledKernel.__dict__["_init_handles"], self.original_init)
        with self.assertRaisesRegex(RuntimeError, "initialization error"):
            jit("m=8")  # outside the context the fake's own behaviour is back

    def test_restored_when_the_body_raises(self):
        with self.assertRaises(ValueError):
            with cpu_compile.stop_after_compile():
                raise ValueError("a failing compile")
        self.assertIsNone(self.runtime.jit_post_compile_hook)
        self.assertIs(FakeCompiledKernel.__dict__["_init_handles"], self.original_init)


if __name__ == "__main__":
    unittest.main()
