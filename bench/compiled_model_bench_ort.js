#!/usr/bin/env node
// ONNX Runtime's batch-1 latency for compiled_model_bench: the same ONNX
// export the compiler reads, run by npm's onnxruntime-node (CPU execution
// provider; installed by bench/install_onnxruntime.sh, never downloaded
// here) with intraOpNumThreads = --threads, interOpNumThreads 1,
// sequential execution and every graph optimisation. Input: the seeded
// tensor PyTorch's references use (//compiler:torch_references, the same
// torch.randn(seed 1) compiled_model_bench_torch.py times); 10 warm-ups
// then --runs timed calls. With --expected, the output is checked against
// PyTorch's output for that input (max |a - b| / max |b|). Prints one JSON
// object: {"ort", "threads", "median_ms", "max_rel_error"} or {"error"}.
//
//   node bench/compiled_model_bench_ort.js --module third_party/node/node_modules/onnxruntime-node \
//       --onnx bazel-bin/tuner_core/graph/testdata/resnet18.onnx \
//       --input bazel-bin/compiler/testdata/resnet18_input.npy \
//       --expected bazel-bin/compiler/testdata/resnet18_expected.npy --threads 2
'use strict';
const fs = require('fs');
const path = require('path');
const { performance } = require('perf_hooks');

function parseArgs(argv) {
  const args = { runs: 50 };
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) {
      throw new Error(`bad argument '${argv[i]}' (want --name value pairs)`);
    }
    args[argv[i].slice(2)] = argv[i + 1];
  }
  for (const name of ['module', 'onnx', 'input', 'threads']) {
    if (args[name] === undefined) throw new Error(`--${name} is required`);
  }
  args.threads = parseInt(args.threads, 10);
  args.runs = parseInt(args.runs, 10);
  return args;
}

// A little-endian float32 (or int64: token ids), C-order .npy file (what
// numpy.save writes for the references) as {type, shape, data}.
function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const int64 = /'descr':\s*'<i8'/.test(header);
  if (!(int64 || /'descr':\s*'<f4'/.test(header)) || !/'fortran_order':\s*False/.test(header)) {
    throw new Error(`${file}: want little-endian float32 or int64 in C order, header ` +
                    `${header.trim()}`);
  }
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',')
      .map((s) => s.trim()).filter((s) => s.length > 0).map((s) => parseInt(s, 10));
  const count = shape.reduce((a, b) => a * b, 1);
  const offset = headerStart + headerLength;
  // Copy: the file's buffer need not be aligned at the data.
  if (int64) {
    const data = new BigInt64Array(count);
    for (let i = 0; i < count; ++i) data[i] = bytes.readBigInt64LE(offset + 8 * i);
    return { type: 'int64', shape, data };
  }
  const data = new Float32Array(count);
  for (let i = 0; i < count; ++i) data[i] = bytes.readFloatLE(offset + 4 * i);
  return { type: 'float32', shape, data };
}

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = require(path.resolve(args.module));
  const version = require(path.join(path.resolve(args.module), 'package.json')).version;
  const session = await ort.InferenceSession.create(args.onnx, {
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  if (session.inputNames.length !== 1 || session.outputNames.length !== 1) {
    throw new Error(`${args.onnx}: want one input and one output, got ` +
                    `${session.inputNames.length} and ${session.outputNames.length}`);
  }
  const x = readNpy(args.input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor(x.type, x.data, x.shape) };
  const output = session.outputNames[0];
  const result = { ort: version, threads: args.threads };
  if (args.expected !== undefined) {
    const y = (await session.run(feeds))[output].data;
    const expected = readNpy(args.expected).data;
    if (y.length !== expected.length) {
      throw new Error(`output has ${y.length} values, PyTorch's ${expected.length}`);
    }
    let diff = 0, scale = 0;
    for (let i = 0; i < y.length; ++i) {
      diff = Math.max(diff, Math.abs(y[i] - expected[i]));
      scale = Math.max(scale, Math.abs(expected[i]));
    }
    result.max_rel_error = diff / scale;
  }
  for (let i = 0; i < 10; ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < args.runs; ++i) {
    const start = performance.now();
    await session.run(feeds);
    ms.push(performance.now() - start);
  }
  result.median_ms = median(ms);
  console.log(JSON.stringify(result));
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
  process.exit(1);
});
