"""Model: a model compiled by `tunefleet compile`, run in-process from Python.

Like an ONNX Runtime InferenceSession, over the C API of compiled models
(compiler/runtime/tunefleet_model.h, libtunefleet_model.so) through ctypes:

    import numpy as np
    import tunefleet

    with tunefleet.Model("out/") as model:       # `tunefleet compile -o out/`, or out/model.so
        print(model.target, model.inputs, model.outputs)   # [("input", (1, 3, 32, 32))] ...
        model.threads = 2
        outputs = model.run({"input": x})       # {"output": np.ndarray of the output's shape}
        (y,) = model.run(None, {"input": x})     # ONNX Runtime's form: a list

The runtime library (libtunefleet_model.so, `bazel build
//compiler/runtime:libtunefleet_model.so`) is the `runtime=` argument, else
$TUNEFLEET_MODEL_RUNTIME, else a libtunefleet_model.so beside this package or
beside the model, else the system's library path (LD_LIBRARY_PATH,
ldconfig). Needs numpy (Debian's python3-numpy), not gRPC.
"""

import ctypes
import operator
import os
import sys
import threading
from collections.abc import Mapping
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

RUNTIME_LIBRARY = "libtunefleet_model.so"
RUNTIME_ENV = "TUNEFLEET_MODEL_RUNTIME"
MODEL_LIBRARY = "model.so"

_PathLike = Union[str, bytes, "os.PathLike[str]"]


class ModelError(RuntimeError):
    """A compiled model could not be loaded or run.

    The message is the C API's (tf_model_last_error): a missing file, a
    library built for another machine or for CPU features this one lacks, a
    model that is closed, a runtime library that cannot be loaded.
    """


# tunefleet_model.h's TF_DTYPE_* (ONNX's element type codes) as numpy types.
_DTYPES = {1: np.float32, 6: np.int32, 7: np.int64}


class TensorInfo(NamedTuple):
    """An input or output of a model: (name, shape, dtype), as ORT's NodeArg
    has .name, .shape and .type. Outputs are float32; an input may hold
    integers (a BERT's token ids: int64 or int32, as the ONNX model says)."""

    name: str
    shape: Tuple[int, ...]
    dtype: type = np.float32

    @property
    def type(self) -> str:
        return {np.float32: "tensor(float)", np.int32: "tensor(int32)",
                np.int64: "tensor(int64)"}[self.dtype]


_FloatPtr = ctypes.POINTER(ctypes.c_float)
_Int64Ptr = ctypes.POINTER(ctypes.c_int64)

# Loaded runtimes by absolute path (or bare name), with their signatures set.
_runtimes: Dict[str, ctypes.CDLL] = {}
_runtimes_lock = threading.Lock()


def _declare(lib: ctypes.CDLL) -> None:
    """Sets the argument and result types of tunefleet_model.h's functions."""
    vp, i32, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
    signatures = {
        "tf_model_last_error": (ctypes.c_char_p, []),
        "tf_model_open": (i32, [ctypes.c_char_p, ctypes.POINTER(vp)]),
        "tf_model_close": (None, [vp]),
        "tf_model_target": (ctypes.c_char_p, [vp]),
        "tf_model_num_inputs": (i32, [vp]),
        "tf_model_num_outputs": (i32, [vp]),
        "tf_model_input_name": (ctypes.c_char_p, [vp, i32]),
        "tf_model_input_rank": (i32, [vp, i32]),
        "tf_model_input_dims": (_Int64Ptr, [vp, i32]),
        "tf_model_input_elements": (i64, [vp, i32]),
        "tf_model_output_name": (ctypes.c_char_p, [vp, i32]),
        "tf_model_output_rank": (i32, [vp, i32]),
        "tf_model_output_dims": (_Int64Ptr, [vp, i32]),
        "tf_model_output_elements": (i64, [vp, i32]),
        "tf_model_set_threads": (i32, [vp, i32]),
        "tf_model_input_type": (i32, [vp, i32]),
        "tf_model_run_typed": (
            i32,
            [vp, ctypes.POINTER(vp), _Int64Ptr, i32,
             ctypes.POINTER(_FloatPtr), _Int64Ptr, i32],
        ),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


def _load_runtime(path: str) -> ctypes.CDLL:
    key = os.path.abspath(path) if os.sep in path else path
    with _runtimes_lock:
        lib = _runtimes.get(key)
        if lib is not None:
            return lib
        try:
            lib = ctypes.CDLL(key)
        except OSError as e:
            hint = ""
            if os.sep not in path:
                hint = (f" (pass Model(..., runtime=PATH) or set ${RUNTIME_ENV} to the"
                        f" {RUNTIME_LIBRARY} that"
                        f" `bazel build //compiler/runtime:{RUNTIME_LIBRARY}` writes,"
                        " or put it on the library path)")
            raise ModelError(f"cannot load the TuneFleet model runtime {path}: {e}{hint}") from None
        try:
            _declare(lib)
        except AttributeError as e:
            raise ModelError(
                f"{path} is not the TuneFleet model runtime ({RUNTIME_LIBRARY}): {e}"
            ) from None
        _runtimes[key] = lib
        return lib


def find_runtime(runtime: Optional[_PathLike] = None,
                 model_path: Optional[_PathLike] = None) -> str:
    """The runtime library Model would load: `runtime` (a file, or a folder
    holding libtunefleet_model.so), else $TUNEFLEET_MODEL_RUNTIME, else
    libtunefleet_model.so beside this package, its parent folder, or the
    model, else the bare name (the dynamic loader's search path)."""
    explicit = runtime if runtime is not None else os.environ.get(RUNTIME_ENV) or None
    if explicit is not None:
        path = os.fsdecode(os.fspath(explicit))
        return os.path.join(path, RUNTIME_LIBRARY) if os.path.isdir(path) else path
    folders: List[str] = []
    package = sys.modules.get(__package__ or "")
    # Every folder the package spans (its sources and the generated stubs).
    package_path = (list(getattr(package, "__path__", []))
                    or [os.path.dirname(os.path.abspath(__file__))])
    for folder in package_path:
        folders += [folder, os.path.dirname(os.path.abspath(folder))]
    if model_path is not None:
        model = os.fsdecode(os.fspath(model_path))
        folders.append(model if os.path.isdir(model) else os.path.dirname(os.path.abspath(model)))
    for folder in folders:
        candidate = os.path.join(folder, RUNTIME_LIBRARY)
        if os.path.isfile(candidate):
            return candidate
    return RUNTIME_LIBRARY


def _dims(pointer: Any, rank: int) -> Tuple[int, ...]:
    return tuple(int(pointer[d]) for d in range(rank)) if rank > 0 else ()


def _buffers(arrays: Sequence[np.ndarray], pointer: Any = _FloatPtr) -> Tuple[Any, Any]:
    """tf_model_run_typed's pointer and element-count arrays (never empty:
    ctypes needs an array of at least one; the counts passed say how many)."""
    n = max(len(arrays), 1)
    pointers = (pointer * n)(*[a.ctypes.data_as(pointer) for a in arrays])
    counts = (ctypes.c_int64 * n)(*[a.size for a in arrays])
    return pointers, counts


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


class Model:
    """A compiled model (the output folder of `tunefleet compile`, or its
    model.so) opened in this process.

        model = Model("out/", runtime=None)
        model.inputs, model.outputs     # [TensorInfo(name, shape)], like ORT's get_inputs()
        model.target                    # the target it was compiled for
        model.threads = 2               # threads per run (>= 1; default 1)
        model.run({"input": x})         # -> {output name: np.ndarray}
        model.run({"input": x}, output_names=["logits"])
        model.run(None, {"input": x})   # ORT's form -> [np.ndarray] in output order

    Inputs are float32: any array-like is converted to a C-contiguous
    float32 array, whose shape must be the model's exactly (ValueError
    naming the input and both shapes otherwise). Failures of the runtime
    raise ModelError with its message.

    Thread safety: a Model runs one inference at a time. Calls from several
    threads on one Model are serialised by a lock (run, threads, close), so
    they are safe but do not run in parallel; for parallel inference open
    one Model per thread (each has its own buffers and thread pool). The GIL
    is released while the model runs.

    close() (or leaving a `with` block, or garbage collection) frees the
    model; using it afterwards raises ModelError.
    """

    def __init__(self, path: _PathLike, runtime: Optional[_PathLike] = None):
        self._handle: Optional[int] = None  # set last: __del__ may see a half-built Model
        self._lock = threading.RLock()
        self.path = os.fsdecode(os.fspath(path))
        self.runtime = find_runtime(runtime, self.path)
        self._lib = _load_runtime(self.runtime)
        handle = ctypes.c_void_p()
        if self._lib.tf_model_open(os.fsencode(self.path), ctypes.byref(handle)) != 0:
            raise ModelError(self._last_error())
        self._handle = handle.value
        try:
            self._threads = 1  # CompiledModel's default
            target = self._lib.tf_model_target(self._handle) or b""
            self.target = target.decode("utf-8", "replace")
            self._inputs = self._tensors(input=True)
            self._outputs = self._tensors(input=False)
        except BaseException:
            self.close()
            raise
        self._input_index = {t.name: i for i, t in enumerate(self._inputs)}
        self._output_index = {t.name: i for i, t in enumerate(self._outputs)}

    # --- description -------------------------------------------------------

    @property
    def inputs(self) -> List[TensorInfo]:
        """[(name, shape)] of the model's inputs, in the order it takes them."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[TensorInfo]:
        """[(name, shape)] of the model's outputs, in the order it gives them."""
        return list(self._outputs)

    def get_inputs(self) -> List[TensorInfo]:
        """ONNX Runtime's name for `inputs`."""
        return self.inputs

    def get_outputs(self) -> List[TensorInfo]:
        """ONNX Runtime's name for `outputs`."""
        return self.outputs

    @property
    def threads(self) -> int:
        """Threads that run the model (>= 1; the calling thread counts)."""
        return self._threads

    @threads.setter
    def threads(self, value: int) -> None:
        if isinstance(value, bool):
            raise TypeError(f"threads must be an int, not {value!r}")
        try:
            n = operator.index(value)
        except TypeError:
            raise TypeError(f"threads must be an int, not {type(value).__name__}") from None
        if n < 1:
            raise ValueError(f"threads must be >= 1; got {n}")
        with self._lock:
            if self._lib.tf_model_set_threads(self._open_handle(), n) != 0:
                raise ModelError(self._last_error())
            self._threads = n

    # --- running -----------------------------------------------------------

    def run(self, *args: Any, output_names: Optional[Sequence[str]] = None,
            input_feed: Optional[Mapping] = None) -> Union[Dict[str, np.ndarray], List[np.ndarray]]:
        """One inference.

        run(feed, output_names=None) -> {name: array}: feed maps every input
        name to an array-like; the result maps each output name (all of them,
        or those in output_names, in that order) to a new float32 array of
        its shape.

        run(output_names, input_feed) -> [array]: ONNX Runtime's form
        (output_names None for all outputs), a list in output_names' order.
        """
        ort_form = False
        if len(args) == 2:
            if output_names is not None or input_feed is not None:
                raise TypeError("run(output_names, input_feed) got them as keywords too")
            output_names, input_feed = args
            ort_form = True
        elif len(args) == 1:
            if input_feed is None:
                input_feed = args[0]
            else:  # run(names, input_feed=feed)
                if output_names is not None:
                    raise TypeError("run() got output_names twice")
                output_names = args[0]
                ort_form = True
        elif len(args) == 0:
            if input_feed is None:
                raise TypeError("run() needs the inputs: run({name: array})")
        else:
            raise TypeError(
                f"run() takes a feed, or output_names and a feed; got {len(args)} arguments")
        if not isinstance(input_feed, Mapping):
            raise TypeError(
                "the inputs must be a mapping of input name to array, not "
                + type(input_feed).__name__
            )
        selected = self._select_outputs(output_names)

        arrays = self._convert_inputs(input_feed)
        outputs = [np.empty(t.shape, dtype=np.float32) for t in self._outputs]
        in_ptrs, in_counts = _buffers(arrays, ctypes.c_void_p)
        out_ptrs, out_counts = _buffers(outputs)
        with self._lock:
            status = self._lib.tf_model_run_typed(self._open_handle(), in_ptrs, in_counts,
                                                  len(arrays), out_ptrs, out_counts, len(outputs))
            if status != 0:
                raise ModelError(self._last_error())
        if ort_form:
            return [outputs[i] for i in selected]
        return {self._outputs[i].name: outputs[i] for i in selected}

    __call__ = run

    def _convert_inputs(self, feed: Mapping) -> List[np.ndarray]:
        unknown = [name for name in feed if name not in self._input_index]
        if unknown:
            raise ValueError(
                f"unknown input {unknown[0]!r}; the model's inputs are "
                + ", ".join(f"{t.name!r} {_shape_text(t.shape)}" for t in self._inputs)
            )
        arrays = []
        for t in self._inputs:
            if t.name not in feed:
                raise ValueError(f"missing input {t.name!r} (shape {_shape_text(t.shape)})")
            array = self._convert_input(t, feed[t.name])
            if array.shape != t.shape:
                raise ValueError(
                    f"input {t.name!r} has shape {_shape_text(array.shape)}; "
                    f"the model's input {t.name!r} is {_shape_text(t.shape)}"
                )
            arrays.append(array)
        return arrays

    @staticmethod
    def _convert_input(t: TensorInfo, value: Any) -> np.ndarray:
        """value as a C-contiguous array of t's dtype: any array-like for a
        float32 input; integers only for an integer input (ids are never
        rounded from floats)."""
        name = np.dtype(t.dtype).name
        try:
            array = np.asarray(value)
            if t.dtype != np.float32:
                if array.dtype.kind not in "iub":
                    raise ValueError(f"it holds {array.dtype} values, not integers")
                info = np.iinfo(t.dtype)
                if array.size and (array.min() < info.min or array.max() > info.max):
                    raise ValueError(f"values outside {name}'s range")
            return np.ascontiguousarray(array, dtype=t.dtype)
        except (TypeError, ValueError) as e:
            raise ValueError(f"input {t.name!r} is not convertible to {name}: {e}") from None

    def _select_outputs(self, names: Optional[Sequence[str]]) -> List[int]:
        if names is None:
            return list(range(len(self._outputs)))
        if isinstance(names, (str, bytes)):
            raise TypeError("output_names must be a list of names, not a single string")
        selected = []
        for name in names:
            if name not in self._output_index:
                raise ValueError(
                    f"unknown output {name!r}; the model's outputs are "
                    + ", ".join(repr(t.name) for t in self._outputs)
                )
            selected.append(self._output_index[name])
        return selected

    # --- lifetime ----------------------------------------------------------

    def close(self) -> None:
        """Frees the model (and unloads its model.so). Safe to call twice."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            handle, self._handle = getattr(self, "_handle", None), None
            if handle is not None:
                self._lib.tf_model_close(handle)

    @property
    def closed(self) -> bool:
        return self._handle is None

    def __enter__(self) -> "Model":
        self._open_handle()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # at interpreter shutdown ctypes may be half torn down
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"target={self.target!r}, threads={self._threads}"
        return f"tunefleet.Model({self.path!r}, {state})"

    # --- helpers -----------------------------------------------------------

    def _open_handle(self) -> int:
        if self._handle is None:
            raise ModelError(f"model {self.path} is closed")
        return self._handle

    def _last_error(self) -> str:
        message = self._lib.tf_model_last_error()
        return message.decode("utf-8", "replace") if message else "unknown error"

    def _tensors(self, input: bool) -> List[TensorInfo]:
        kind = "input" if input else "output"
        lib = self._lib
        count = (lib.tf_model_num_inputs if input else lib.tf_model_num_outputs)(self._handle)
        name_of = lib.tf_model_input_name if input else lib.tf_model_output_name
        rank_of = lib.tf_model_input_rank if input else lib.tf_model_output_rank
        dims_of = lib.tf_model_input_dims if input else lib.tf_model_output_dims
        tensors = []
        for i in range(count):
            name, rank = name_of(self._handle, i), rank_of(self._handle, i)
            if name is None or rank < 0:
                raise ModelError(f"the model's {kind} {i} has no name or shape")
            shape = _dims(dims_of(self._handle, i), rank)
            dtype = np.float32
            if input:
                code = lib.tf_model_input_type(self._handle, i)
                if code not in _DTYPES:
                    raise ModelError(f"the model's input {i} has element type {code}, which this"
                                     " client does not know")
                dtype = _DTYPES[code]
            tensors.append(TensorInfo(name.decode("utf-8", "replace"), shape, dtype))
        return tensors
