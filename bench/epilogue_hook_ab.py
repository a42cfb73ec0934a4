#!/usr/bin/env python3
"""Epilogues applied from inside the kernels (`compile --epilogues_in_kernels`:
each kernel calls its step's epilogue on every row or tile it finishes, while
it is in cache) against the default pass after each kernel: bench/compile_ab.py
with one binary, side "pass" compiled as is and side "in_kernels" with the
flag (fresh `tunefleet run` processes alternating, the median over rounds of
each process's median, at each thread count).

  /usr/bin/python3 bench/epilogue_hook_ab.py --models /tmp/zoo/efficientnet_b0.onnx,... \\
      --out bench/results/epilogue_hook_ab.json
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compile_ab  # noqa: E402

if __name__ == "__main__":
    sys.argv[1:1] = ["--a_label", "pass", "--b_label", "in_kernels",
                     "--b_flags=--epilogues_in_kernels",
                     "--work_dir", "/tmp/tunefleet_epilogue_hook_ab"]
    sys.exit(compile_ab.main())
