#include "tuner_core/space/python_set_order.h"

#include <cstddef>
#include <utility>

#include "common/check.h"

namespace tunefleet {
namespace config_space_internal {
namespace {

// Mirrors Objects/setobject.c (CPython 3.7-3.13; the same order was checked
// against each of them): open addressing with up to 9 linear probes, then a
// perturbed jump; the table grows when it is 60% full. Sets of ints never
// delete here, so there are no dummy slots and fill == used.
class PythonIntSet {
 public:
  PythonIntSet() : table_(kMinSize, kEmpty) {}

  // set.add(key): set_add_entry.
  void Add(int64_t key) {
    TF_CHECK(key >= 1 && key <= kMaxHashIdentity);
    const size_t mask = table_.size() - 1;
    size_t i = static_cast<size_t>(key) & mask;
    size_t perturb = static_cast<size_t>(key);
    while (true) {
      size_t probes = (i + kLinearProbes <= mask) ? kLinearProbes : 0;
      for (size_t slot = i;; ++slot) {
        if (table_[slot] == kEmpty) {
          table_[slot] = key;
          ++used_;
          if (used_ * 5 >= mask * 3) Resize(used_ > 50000 ? used_ * 2 : used_ * 4);
          return;
        }
        if (table_[slot] == key) return;
        if (probes-- == 0) break;
      }
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask;
    }
  }

  // set.update(other) for another set: set_merge.
  void Merge(const PythonIntSet& other) {
    if (other.used_ == 0) return;
    const size_t mask = table_.size() - 1;
    if ((used_ + other.used_) * 5 >= mask * 3) Resize((used_ + other.used_) * 2);
    if (used_ == 0 && table_.size() == other.table_.size()) {
      table_ = other.table_;
      used_ = other.used_;
    } else if (used_ == 0) {
      for (int64_t key : other.table_) {
        if (key != kEmpty) InsertClean(&table_, key);
      }
      used_ = other.used_;
    } else {
      for (int64_t key : other.table_) {
        if (key != kEmpty) Add(key);
      }
    }
  }

  // list(s): the occupied slots in table order.
  std::vector<int64_t> Items() const {
    std::vector<int64_t> items;
    for (int64_t key : table_) {
      if (key != kEmpty) items.push_back(key);
    }
    return items;
  }

 private:
  static constexpr size_t kMinSize = 8;  // PySet_MINSIZE
  static constexpr size_t kLinearProbes = 9;
  static constexpr int kPerturbShift = 5;
  static constexpr int64_t kEmpty = 0;
  static constexpr int64_t kMaxHashIdentity = (int64_t{1} << 61) - 2;

  // set_insert_clean: a key known to be absent, into a table with no dummies.
  static void InsertClean(std::vector<int64_t>* table, int64_t key) {
    const size_t mask = table->size() - 1;
    size_t i = static_cast<size_t>(key) & mask;
    size_t perturb = static_cast<size_t>(key);
    while (true) {
      if ((*table)[i] == kEmpty) {
        (*table)[i] = key;
        return;
      }
      if (i + kLinearProbes <= mask) {
        for (size_t j = 1; j <= kLinearProbes; ++j) {
          if ((*table)[i + j] == kEmpty) {
            (*table)[i + j] = key;
            return;
          }
        }
      }
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask;
    }
  }

  // set_table_resize: the smallest power of two above `min_used`, refilled in
  // the old table's slot order.
  void Resize(size_t min_used) {
    size_t size = kMinSize;
    while (size <= min_used) size <<= 1;
    std::vector<int64_t> table(size, kEmpty);
    for (int64_t key : table_) {
      if (key != kEmpty) InsertClean(&table, key);
    }
    table_ = std::move(table);
  }

  std::vector<int64_t> table_;
  size_t used_ = 0;
};

}  // namespace

std::vector<int64_t> PythonSetUnionOrder(const std::vector<int64_t>& first,
                                         const std::vector<int64_t>& second) {
  PythonIntSet a, b;  // set(first), set(second): one add per list item
  for (int64_t key : first) a.Add(key);
  for (int64_t key : second) b.Add(key);
  PythonIntSet result;  // a | b: a copy of a (an empty set merged with a), then b merged in
  result.Merge(a);
  result.Merge(b);
  return result.Items();
}

}  // namespace config_space_internal
}  // namespace tunefleet
