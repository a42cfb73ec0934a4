"""cross_cc_binaries: rebuilds cc_binary targets for another architecture.

Bazel 4.2.3 offline has no cross C++ toolchain to register (platforms and
toolchain rules would want @bazel_tools pieces and downloads), and the tree's
cc_library/cc_binary targets are written for the host. This rule reuses them
as they are: an aspect walks each binary's `deps` and collects every
target's sources, headers (the generated proto code included) and linkopts
(the //third_party wrappers: `-lgrpc++ -labsl_...`), then the rule compiles
each source once with a cross compiler (one action per file: Bazel runs them
in parallel and caches them one by one) and links each binary from the
objects of its own closure. Linkopts name the same libraries on every
architecture; Debian multiarch (`dpkg --add-architecture arm64`) puts the
target's copies where the cross linker looks.

    load("//tools:cross_cc.bzl", "cross_cc_binaries")

    cross_cc_binaries(
        name = "agent",
        binaries = ["//device_agent:tunefleet_agent", "//kernel_runtime:tunefleet_runner"],
        compiler = "/usr/bin/aarch64-linux-gnu-g++",
    )

produces bazel-bin/<package>/tunefleet_agent and .../tunefleet_runner side by
side. A static archive in a target's srcs (a model's libmodel.a, say) is
linked as it is, after the objects, as cc_binary links one: it must already
be built for the target. Each target's own copts (warning flags for the host
compiler) are not carried over; `defines` and `includes` would have to be,
so a target that sets them fails the analysis until this rule supports them.
Only C and C++ sources and headers of this workspace are accepted (a .c file
is compiled as C with `conlyopts`): a dependency from another
repository (LLVM, say) fails the analysis, so a binary meant for a board
cannot grow a host-only dependency unnoticed.
"""

CrossSourcesInfo = provider(
    doc = "The sources, headers, linkopts and static archives of a cc target's closure.",
    fields = {
        "srcs": "depset of C++ source Files",
        "hdrs": "depset of header Files",
        "linkopts": "depset of linker options",
        "archives": "depset of static archive Files (.a) to link as they are",
    },
)

_SOURCE_EXTENSIONS = ["cc", "cpp", "cxx", "c"]
_HEADER_EXTENSIONS = ["h", "hh", "hpp", "inc", "ipp"]
_ARCHIVE_EXTENSIONS = ["a"]

def _collect_sources_impl(target, ctx):
    if ctx.label.workspace_name:
        fail("cross_cc_binaries: %s is from another repository; only this workspace's sources can be rebuilt for the target" % ctx.label)
    for attr in ["defines", "includes"]:
        if getattr(ctx.rule.attr, attr, None):
            fail("cross_cc_binaries: %s sets %s, which this rule does not carry over; add support in tools/cross_cc.bzl" % (ctx.label, attr))
    srcs = []
    hdrs = []
    archives = []
    for attr in ["srcs", "hdrs", "textual_hdrs"]:
        for f in getattr(ctx.rule.files, attr, []):
            if f.extension in _SOURCE_EXTENSIONS:
                srcs.append(f)
            elif f.extension in _HEADER_EXTENSIONS:
                hdrs.append(f)
            elif f.extension in _ARCHIVE_EXTENSIONS and attr == "srcs":
                archives.append(f)
            else:
                fail("cross_cc_binaries: %s has %s, which this rule cannot build (C and C++ sources and headers, and static archives in srcs, only)" % (ctx.label, f.short_path))
    deps = [d[CrossSourcesInfo] for d in getattr(ctx.rule.attr, "deps", []) if CrossSourcesInfo in d]
    return [CrossSourcesInfo(
        srcs = depset(srcs, transitive = [d.srcs for d in deps]),
        hdrs = depset(hdrs, transitive = [d.hdrs for d in deps]),
        linkopts = depset(
            getattr(ctx.rule.attr, "linkopts", []),
            transitive = [d.linkopts for d in deps],
        ),
        archives = depset(archives, transitive = [d.archives for d in deps]),
    )]

_collect_sources = aspect(
    implementation = _collect_sources_impl,
    attr_aspects = ["deps"],
)

def _object_path(name, src):
    return "_objs/%s/%s.o" % (name, src.short_path.rsplit(".", 1)[0])

def _cross_cc_binaries_impl(ctx):
    all_hdrs = depset(transitive = [b[CrossSourcesInfo].hdrs for b in ctx.attr.binaries])
    include_flags = ["-iquote", ".", "-iquote", ctx.bin_dir.path]
    objects = {}  # source path -> object File, each source compiled once
    outputs = []
    for binary in ctx.attr.binaries:
        info = binary[CrossSourcesInfo]
        binary_objects = []
        for src in info.srcs.to_list():
            if src.path not in objects:
                obj = ctx.actions.declare_file(_object_path(ctx.label.name, src))
                args = ctx.actions.args()
                if src.extension == "c":
                    # The C++ driver compiles a .c file as C++ unless told.
                    args.add_all(ctx.attr.conlyopts)
                    args.add_all(["-x", "c"])
                else:
                    args.add_all(ctx.attr.copts)
                args.add_all(include_flags)
                args.add("-c", src)
                args.add("-o", obj)
                ctx.actions.run(
                    executable = ctx.attr.compiler,
                    arguments = [args],
                    inputs = depset([src], transitive = [all_hdrs]),
                    outputs = [obj],
                    mnemonic = "CrossCompile",
                    progress_message = "Compiling %s for %s" % (src.short_path, ctx.attr.arch),
                )
                objects[src.path] = obj
            binary_objects.append(objects[src.path])
        out = ctx.actions.declare_file(binary.label.name)
        args = ctx.actions.args()
        args.add("-o", out)
        args.add_all(binary_objects)
        archives = info.archives.to_list()
        args.add_all(archives)
        args.add_all(ctx.attr.linkopts)
        args.add_all(
            [ctx.attr.linkopt_rewrites.get(opt, opt) for opt in info.linkopts.to_list()],
            uniquify = True,
        )
        ctx.actions.run(
            executable = ctx.attr.compiler,
            arguments = [args],
            inputs = binary_objects + archives,
            outputs = [out],
            mnemonic = "CrossLink",
            progress_message = "Linking %s for %s" % (out.short_path, ctx.attr.arch),
        )
        outputs.append(out)
    return [DefaultInfo(
        files = depset(outputs),
        runfiles = ctx.runfiles(files = outputs),
    )]

cross_cc_binaries = rule(
    implementation = _cross_cc_binaries_impl,
    doc = "Rebuilds cc_binary targets (and their cc_library closure) with a cross compiler.",
    attrs = {
        "binaries": attr.label_list(
            mandatory = True,
            aspects = [_collect_sources],
            doc = "cc_binary targets; each becomes <package of this rule>/<its name>.",
        ),
        "compiler": attr.string(
            mandatory = True,
            doc = "Absolute path of the cross C++ compiler driver (it also links).",
        ),
        "arch": attr.string(
            default = "the target",
            doc = "For progress messages.",
        ),
        "copts": attr.string_list(
            default = ["-std=c++17", "-O2", "-DNDEBUG"],
            doc = "Compiler options for every C++ source.",
        ),
        "conlyopts": attr.string_list(
            default = ["-std=c11", "-O2", "-DNDEBUG"],
            doc = "Compiler options for every C source (.c, compiled as C).",
        ),
        "linkopts": attr.string_list(
            default = ["-pthread", "-Wl,--as-needed"],
            doc = "Linker options before the collected ones.",
        ),
        "linkopt_rewrites": attr.string_dict(
            doc = "Collected linker options replaced for the target, e.g. a -lfoo whose " +
                  "target-architecture -dev package cannot be installed beside the host's " +
                  "(not Multi-Arch: same) -> -l:libfoo.so.N from its runtime package.",
        ),
    },
)
