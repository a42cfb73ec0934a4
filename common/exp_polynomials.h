// The constants of the project's one fp32 exp and erf (a polynomial after
// range reduction; Abramowitz & Stegun's erf on it), shared by the compiled
// model runtime's vector code (compiler/runtime/exp_activations.h,
// vector_math.h) and the code generator's exp (toolchain/codegen), so an
// activation computed in a kernel's stores gives what the runtime's pass
// gives.
#ifndef TUNEFLEET_COMMON_EXP_POLYNOMIALS_H_
#define TUNEFLEET_COMMON_EXP_POLYNOMIALS_H_

namespace tunefleet {

// ln 2 split in two for exp's range reduction, x - n ln2 = x - n kLn2Hi - n kLn2Lo;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
// e^r = 1 + r + r^2 p(r) for |r| <= ln2 / 2, p of degree 3 (highest power
// first), fitted for e^r's relative error (Lawson's minimax iteration over
// Chebyshev nodes): at most 1.7e-7 in float arithmetic, 2 multiply-adds
// fewer than Cephes' degree-5 p (6.8e-8), which sigmoid and SiLU spent a
// tenth of their time on;
inline constexpr int kExpPolyTerms = 4;
inline constexpr float kExpPoly[kExpPolyTerms] = {8.312862366e-3f, 4.188902676e-2f, 1.666711122e-1f,
                                                  4.999924302e-1f};
// exp's argument clamped to [kExpLow, kExpHigh]: 2^n stays a normal float
// (n in [-126, 127]), so neither exp nor 1 + exp is ever infinite.
inline constexpr float kExpLow = -87.3f, kExpHigh = 88.3f;
// Abramowitz & Stegun 7.1.26: erf(a) = 1 - poly(t) t e^(-a^2), t = 1 / (1 + kErfP a).
inline constexpr float kErfP = 0.3275911f;
inline constexpr float kErfPoly[5] = {1.061405429f, -1.453152027f, 1.421413741f, -0.284496736f,
                                      0.254829592f};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_EXP_POLYNOMIALS_H_
