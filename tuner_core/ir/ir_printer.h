// Human-readable text of IR, for logs, tests and `tunefleet show`.
#ifndef TUNEFLEET_TUNER_CORE_IR_IR_PRINTER_H_
#define TUNEFLEET_TUNER_CORE_IR_IR_PRINTER_H_

#include <string>

#include "tuner_core/ir/ir.h"

namespace tunefleet::ir {

std::string ToString(const Expr& e);
std::string ToString(const Stmt& s);
std::string ToString(const LoweredFunc& f);

}  // namespace tunefleet::ir

#endif  // TUNEFLEET_TUNER_CORE_IR_IR_PRINTER_H_
