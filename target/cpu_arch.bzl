"""The package of one CPU architecture under target/: its Arch (arch.h,
arch.cc), the host functions of target/host.h on such a machine (host.cc,
exported for //target:host, which compiles each under its own guard) and
the Arch's test (arch_test.cc)."""

def cpu_arch():
    native.package(default_visibility = ["//target:__subpackages__"])
    native.exports_files(["host.cc"])
    native.cc_library(
        name = "arch",
        srcs = ["arch.cc"],
        hdrs = ["arch.h"],
        deps = [
            "//target:arch",
            "//target:cpuinfo",
            "//third_party:abseil",
        ],
    )
    native.cc_test(
        name = "arch_test",
        size = "small",
        srcs = ["arch_test.cc"],
        deps = [
            ":arch",
            "//third_party:gmock",
            "//third_party:gtest_main",
        ],
    )
