#include "common/text_cap.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tunefleet {

std::string CapMessage(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  // The suffix's length depends on how much is cut; 40 bytes hold any.
  const size_t room = std::max<size_t>(max_bytes, 64) - 40;
  size_t keep = room;
  // Back up over UTF-8 continuation bytes (10xxxxxx) so no character is split.
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return absl::StrCat(std::string(text.substr(0, keep)), " ... [", text.size() - keep,
                      " bytes cut]");
}

}  // namespace tunefleet
