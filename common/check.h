// Internal assertions: for our own bugs only, never for bad input (which is
// reported as absl::Status). A failed TF_CHECK prints where and aborts.
#ifndef TUNEFLEET_COMMON_CHECK_H_
#define TUNEFLEET_COMMON_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define TF_CHECK(cond)                                                                       \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: internal check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

#endif  // TUNEFLEET_COMMON_CHECK_H_
