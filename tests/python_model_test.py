"""tunefleet.Model (clients/python/tunefleet/model.py) on a model compiled here.

Compiles the tiny seeded CNN (//compiler:tiny_net) with the `tunefleet` CLI,
opens it from Python through libtunefleet_model.so, and checks its outputs
against PyTorch's (max |diff| <= 1e-4), the description (inputs, outputs,
target), threads, ONNX Runtime's run(output_names, feed) form, the errors
(a wrong shape, a missing input, a missing file, a closed model, a library
that is not one) and that `import tunefleet` for Model needs no gRPC.
Lives in tests/ because clients/ may not depend on //cli or //compiler.

args: --tunefleet CLI --runtime libtunefleet_model.so --onnx M.onnx
      --input INPUT.npy --expected EXPECTED.npy
"""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import tunefleet

ARGS = None  # set in __main__


class ModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.out = os.path.join(cls.tmp, "out")
        result = subprocess.run(
            [ARGS.tunefleet, "compile", "--model", ARGS.onnx, "--target", "llvm", "-o", cls.out],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            raise AssertionError(f"tunefleet compile failed:\n{result.stdout}")
        assert os.path.isfile(os.path.join(cls.out, "model.so")), result.stdout
        cls.runtime = os.path.abspath(ARGS.runtime)
        cls.x = np.load(ARGS.input)
        cls.expected = np.load(ARGS.expected)

    def open(self, path=None, **kwargs):
        kwargs.setdefault("runtime", self.runtime)
        model = tunefleet.Model(self.out if path is None else path, **kwargs)
        self.addCleanup(model.close)
        return model

    def assertMatches(self, y):
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(y.shape, self.expected.shape)
        error = float(np.max(np.abs(y.astype(np.float64) - self.expected)))
        self.assertLessEqual(error, 1e-4, f"max |tunefleet - torch| = {error}")

    def test_run_matches_torch(self):
        model = self.open()
        self.assertEqual(model.inputs, [("input", (1, 3, 32, 32), np.float32)])
        self.assertEqual(model.outputs, [("output", (1, 10), np.float32)])
        self.assertEqual(model.get_inputs()[0].type, "tensor(float)")
        self.assertEqual(model.get_inputs()[0].name, "input")
        self.assertEqual(model.get_outputs()[0].shape, (1, 10))
        self.assertEqual(model.target, "llvm")
        outputs = model.run({"input": self.x})
        self.assertEqual(list(outputs), ["output"])
        self.assertMatches(outputs["output"])
        # Each run returns new arrays.
        again = model.run({"input": self.x})["output"]
        self.assertIsNot(again, outputs["output"])
        np.testing.assert_array_equal(again, outputs["output"])

    def test_model_so_path_and_array_likes(self):
        model = self.open(os.path.join(self.out, "model.so"))
        self.assertMatches(model.run({"input": self.x.astype(np.float64)})["output"])
        self.assertMatches(model.run({"input": self.x.tolist()})["output"])
        fortran = np.asfortranarray(self.x)
        self.assertFalse(fortran.flags.c_contiguous)
        self.assertMatches(model.run({"input": fortran})["output"])
        strided = np.repeat(self.x, 2, axis=3)[..., ::2]  # a non-contiguous view equal to x
        self.assertMatches(model.run({"input": strided})["output"])

    def test_integer_input(self):
        """A model whose input is int64 token ids (an embedding's Gather at
        run time, then Relu): ids pass as integers, floats are refused, an
        id past the table fails naming the node."""
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        rng = np.random.default_rng(0)
        table = rng.standard_normal((10, 4)).astype(np.float32)
        graph = helper.make_graph(
            [helper.make_node("Gather", ["table", "ids"], ["rows"], name="embed"),
             helper.make_node("Relu", ["rows"], ["out"], name="relu")],
            "ids", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
            [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3, 4])],
            [numpy_helper.from_array(table, "table")])
        path = os.path.join(self.tmp, "ids.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
        out = os.path.join(self.tmp, "ids_out")
        result = subprocess.run(
            [ARGS.tunefleet, "compile", "--model", path, "--target", "llvm", "-o", out],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(result.returncode, 0, result.stdout)
        model = self.open(out)
        self.assertEqual(model.inputs, [("ids", (2, 3), np.int64)])
        self.assertEqual(model.inputs[0].type, "tensor(int64)")
        ids = np.array([[0, 9, 3], [-1, 2, 2]], dtype=np.int64)
        want = np.maximum(table[ids], 0)
        np.testing.assert_array_equal(model.run({"ids": ids})["out"], want)
        np.testing.assert_array_equal(model.run({"ids": ids.astype(np.int32).tolist()})["out"],
                                      want)
        with self.assertRaisesRegex(ValueError, "'ids' is not convertible to int64.*float"):
            model.run({"ids": ids.astype(np.float32)})
        with self.assertRaisesRegex(tunefleet.ModelError, "node 'embed': index 10 is outside"):
            model.run({"ids": np.full((2, 3), 10, dtype=np.int64)})
        np.testing.assert_array_equal(model.run({"ids": ids})["out"], want)

    def test_threads(self):
        model = self.open()
        self.assertEqual(model.threads, 1)
        model.threads = 2
        self.assertEqual(model.threads, 2)
        self.assertMatches(model.run({"input": self.x})["output"])
        with self.assertRaisesRegex(ValueError, "threads must be >= 1; got 0"):
            model.threads = 0
        with self.assertRaises(TypeError):
            model.threads = 1.5
        self.assertEqual(model.threads, 2)

    def test_ort_form(self):
        model = self.open()
        outputs = model.run(None, {"input": self.x})
        self.assertIsInstance(outputs, list)
        self.assertEqual(len(outputs), 1)
        self.assertMatches(outputs[0])
        (y,) = model.run(["output"], {"input": self.x})
        self.assertMatches(y)
        self.assertMatches(model.run(None, input_feed={"input": self.x})[0])
        self.assertMatches(model.run({"input": self.x}, output_names=["output"])["output"])
        self.assertEqual(model.run({"input": self.x}, output_names=[]), {})
        with self.assertRaisesRegex(ValueError, "unknown output 'logits'.*'output'"):
            model.run(["logits"], {"input": self.x})

    def test_wrong_inputs(self):
        model = self.open()
        with self.assertRaises(ValueError) as caught:
            model.run({"input": np.zeros((1, 3, 16, 16), np.float32)})
        message = str(caught.exception)
        self.assertIn("'input'", message)
        self.assertIn("[1, 3, 16, 16]", message)
        self.assertIn("[1, 3, 32, 32]", message)
        missing = r"missing input 'input' \(shape \[1, 3, 32, 32\]\)"
        with self.assertRaisesRegex(ValueError, missing):
            model.run({})
        with self.assertRaisesRegex(ValueError, "unknown input 'image'"):
            model.run({"input": self.x, "image": self.x})
        with self.assertRaises(TypeError):
            model.run(self.x)
        # The model still runs after refused calls.
        self.assertMatches(model.run({"input": self.x})["output"])

    def test_missing_and_bad_files(self):
        missing = os.path.join(self.tmp, "no_such_dir")
        with self.assertRaisesRegex(tunefleet.ModelError, "does not exist") as caught:
            tunefleet.Model(missing, runtime=self.runtime)
        self.assertIn(missing, str(caught.exception))
        self.assertIsInstance(caught.exception, RuntimeError)
        not_elf = os.path.join(self.tmp, "not_a_model.so")
        with open(not_elf, "w") as f:
            f.write("not a library\n")
        with self.assertRaisesRegex(tunefleet.ModelError, "not a shared library"):
            tunefleet.Model(not_elf, runtime=self.runtime)
        with self.assertRaisesRegex(tunefleet.ModelError, "cannot load the TuneFleet model"):
            tunefleet.Model(self.out, runtime=os.path.join(self.tmp, "libtunefleet_model.so"))

    def test_runtime_from_environment(self):
        old = os.environ.get("TUNEFLEET_MODEL_RUNTIME")
        os.environ["TUNEFLEET_MODEL_RUNTIME"] = self.runtime
        try:
            model = self.open(runtime=None)
        finally:
            if old is None:
                del os.environ["TUNEFLEET_MODEL_RUNTIME"]
            else:
                os.environ["TUNEFLEET_MODEL_RUNTIME"] = old
        self.assertEqual(model.runtime, self.runtime)
        self.assertMatches(model.run({"input": self.x})["output"])

    def test_close_and_context_manager(self):
        with tunefleet.Model(self.out, runtime=self.runtime) as model:
            self.assertFalse(model.closed)
            self.assertMatches(model.run({"input": self.x})["output"])
        self.assertTrue(model.closed)
        model.close()  # twice is fine
        with self.assertRaisesRegex(tunefleet.ModelError, "is closed"):
            model.run({"input": self.x})
        with self.assertRaisesRegex(tunefleet.ModelError, "is closed"):
            model.threads = 2
        self.assertIn("closed", repr(model))
        # Many models opened and dropped (closed by __del__).
        for _ in range(20):
            tunefleet.Model(self.out, runtime=self.runtime).run({"input": self.x})

    def test_concurrent_runs_are_serialised(self):
        model = self.open()
        model.threads = 2
        errors = []

        def worker():
            try:
                for _ in range(10):
                    self.assertMatches(model.run({"input": self.x})["output"])
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_import_needs_no_grpc(self):
        code = (
            "import sys\n"
            "import tunefleet\n"
            "assert tunefleet.Model and tunefleet.ModelError\n"
            "assert 'grpc' not in sys.modules, 'grpc imported'\n"
            "assert 'tunefleet.client' not in sys.modules\n"
            "assert 'Model' in dir(tunefleet) and 'Client' in dir(tunefleet)\n"
            "print('ok')\n"
        )
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        result = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        self.assertEqual(result.returncode, 0, result.stdout)
        # The gRPC client is still there, imported on first use.
        self.assertTrue(issubclass(tunefleet.NotFound, tunefleet.TuneFleetError))
        self.assertTrue(callable(tunefleet.Client))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--tunefleet", "--runtime", "--onnx", "--input", "--expected"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
