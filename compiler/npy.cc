#include "compiler/npy.h"

#include <cstring>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<FloatTensor> ReadTensorFile(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path, kMaxModelFileBytes));
  FloatTensor tensor;
  size_t data_start = 0, element_bytes = sizeof(float);
  bool integers = false;
  if (bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0) {
    const int major = static_cast<unsigned char>(bytes[6]);
    size_t header_len = 0, header_start = 0;
    if (major == 1) {
      header_len =
          static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
      header_start = 10;
    } else {
      if (bytes.size() < 12)
        return absl::InvalidArgumentError(absl::StrCat(path, ": truncated .npy header"));
      uint32_t len = 0;
      std::memcpy(&len, bytes.data() + 8, 4);
      header_len = len;
      header_start = 12;
    }
    if (header_start + header_len > bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": truncated .npy header"));
    }
    const std::string header = bytes.substr(header_start, header_len);
    if (header.find("'<i8'") != std::string::npos) {
      element_bytes = 8;
    } else if (header.find("'<i4'") != std::string::npos) {
      element_bytes = 4;
      integers = true;
    } else if (header.find("'<f4'") == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          path,
          ": only float32 ('<f4'), int64 ('<i8') and int32 ('<i4') .npy files are read; "
          "header ",
          header));
    }
    integers |= element_bytes == 8;
    if (header.find("'fortran_order': True") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": Fortran-order arrays are not read"));
    }
    const size_t open = header.find("'shape': (");
    const size_t close = header.find(')', open);
    if (open == std::string::npos || close == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": .npy header has no shape"));
    }
    const std::string dims = header.substr(open + 10, close - open - 10);
    for (absl::string_view d : absl::StrSplit(dims, ',', absl::SkipWhitespace())) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(d), &v) || v < 0 ||
          v > static_cast<int64_t>(bytes.size())) {  // a dim never exceeds the file's bytes
        return absl::InvalidArgumentError(absl::StrCat(path, ": bad shape (", dims, ")"));
      }
      tensor.shape.push_back(v);
    }
    data_start = header_start + header_len;
  }
  const size_t data_bytes = bytes.size() - data_start;
  if (data_bytes % element_bytes != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", data_bytes, " data bytes are not whole elements"));
  }
  const int64_t count = static_cast<int64_t>(data_bytes / element_bytes);
  if (!integers) {
    tensor.data.resize(count);
    std::memcpy(tensor.data.data(), bytes.data() + data_start, data_bytes);
  } else {
    tensor.ints.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      const char* at = bytes.data() + data_start + i * element_bytes;
      if (element_bytes == 8) {
        std::memcpy(&tensor.ints[i], at, 8);
      } else {
        int32_t v = 0;
        std::memcpy(&v, at, 4);
        tensor.ints[i] = v;
      }
    }
  }
  if (!tensor.shape.empty()) {
    // Each dim is at most the file's size, so the product is checked
    // against the count before it can overflow.
    int64_t n = 1;
    for (int64_t d : tensor.shape) {
      if (d != 0 && n > count / d) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": shape holds more elements than the file's ", count));
      }
      n *= d;
    }
    if (n != count) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": shape holds ", n, " elements, file ", count));
    }
  }
  return tensor;
}

[[nodiscard]] absl::Status WriteNpy(const std::string& path, const FloatTensor& tensor) {
  std::string shape = absl::StrJoin(tensor.shape, ", ");
  if (tensor.shape.size() == 1) shape += ",";
  // Integers (token ids) as int64, else floats.
  const bool ints = tensor.data.empty() && !tensor.ints.empty();
  std::string header = absl::StrCat("{'descr': '", ints ? "<i8" : "<f4",
                                    "', 'fortran_order': False, 'shape': (", shape, "), }");
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (ints) {
    out.append(reinterpret_cast<const char*>(tensor.ints.data()),
               tensor.ints.size() * sizeof(int64_t));
  } else {
    out.append(reinterpret_cast<const char*>(tensor.data.data()),
               tensor.data.size() * sizeof(float));
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace tunefleet
