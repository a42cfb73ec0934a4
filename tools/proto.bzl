"""tf_proto_library: C++ (and gRPC) code from .proto files with the system protoc.

Bazel's native proto_library/cc_proto_library need @com_google_protobuf, which
cannot be fetched offline, so this runs /usr/bin/protoc (Debian protobuf 3.21)
in a genrule and wraps the generated sources in a cc_library.

Imports are resolved relative to the workspace root, so a proto in proto/
imports another one as `import "proto/common.proto";` and C++ code includes
the generated header as `#include "proto/common.pb.h"`.

    load("//tools:proto.bzl", "tf_proto_library")

    tf_proto_library(
        name = "runner_proto",
        srcs = ["runner.proto"],
        deps = [":common_proto"],   # other tf_proto_library targets
        grpc = True,                # also generate *.grpc.pb.{h,cc}
    )
"""

_PROTOC = "/usr/bin/protoc"
_GRPC_PLUGIN = "/usr/bin/grpc_cpp_plugin"

def _strip_proto(src):
    if not src.endswith(".proto"):
        fail("tf_proto_library srcs must end in .proto: " + src)
    return src[:-len(".proto")]

def tf_proto_library(name, srcs, deps = [], grpc = False, visibility = None, testonly = None):
    """Generates C++ (and optionally gRPC) code for `srcs` and a cc_library `name`.

    Args:
      name: name of the resulting cc_library.
      srcs: .proto files in this package.
      deps: other tf_proto_library targets whose protos `srcs` import.
      grpc: also run grpc_cpp_plugin and link //third_party:grpc.
      visibility: visibility of the cc_library.
      testonly: passed through.
    """
    bases = [_strip_proto(s) for s in srcs]
    hdrs = [b + ".pb.h" for b in bases]
    cc_srcs = [b + ".pb.cc" for b in bases]
    if grpc:
        hdrs += [b + ".grpc.pb.h" for b in bases]
        cc_srcs += [b + ".grpc.pb.cc" for b in bases]

    # The protos of `deps` (exported by their filegroups) are inputs too,
    # so imports of them resolve inside the sandbox.
    dep_protos = [d + "_protos" for d in deps]

    # Generated files land in $(GENDIR)/<package>/...; pass the workspace root
    # (and the external-repo root, when used from another repository) as -I so
    # paths stay workspace-relative.
    pkg = native.package_name()
    root = native.repository_name()
    src_root = "." if root == "@" else "external/" + root[1:]
    out_root = "$(GENDIR)" if root == "@" else "$(GENDIR)/external/" + root[1:]

    cmd = " ".join([
        _PROTOC,
        "--proto_path=" + src_root,
        "--cpp_out=" + out_root,
    ] + ([
        "--plugin=protoc-gen-grpc=" + _GRPC_PLUGIN,
        "--grpc_out=" + out_root,
    ] if grpc else []) + [
        src_root + "/" + (pkg + "/" if pkg else "") + s
        for s in srcs
    ])

    native.filegroup(
        name = name + "_protos",
        srcs = srcs + dep_protos,
        visibility = visibility,
        testonly = testonly,
    )

    native.genrule(
        name = name + "_gen",
        srcs = srcs + dep_protos,
        outs = hdrs + cc_srcs,
        cmd = cmd,
        message = "protoc " + ", ".join(srcs),
        testonly = testonly,
    )

    native.cc_library(
        name = name,
        srcs = cc_srcs,
        hdrs = hdrs,
        copts = ["-Wno-unused-parameter", "-Wno-unused-variable"],
        deps = deps + ["//third_party:protobuf"] +
               (["//third_party:grpc"] if grpc else []),
        visibility = visibility,
        testonly = testonly,
    )
