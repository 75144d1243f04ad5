/* The float64 references and the ULP measure of fastgelu/_reference.py (ref64, ulp_error), in C, for the
 * exhaustive float32 sweep (tools/sweep_f32.py): NumPy's version makes ~20 passes over temporaries and holds
 * the sweep at ~30 minutes on 2 cores; this one makes one pass and needs no SciPy.
 *
 * Same formulas and the same order of operations as _reference.py (Phi as erfc(-x/sqrt2)/2, sigmoid pairs
 * without overflow), so the only differences are libm's erfc/exp against SciPy's and NumPy's (~1e-16
 * relative, far below a float32 ULP); tests/test_sweep_ref.py holds the two together on a dense sample.
 * Build with -ffp-contract=off so no product is fused into an FMA the NumPy version does not have.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#define SQRT1_2 0.7071067811865476
#define INV_SQRT_2PI 0.3989422804014327
#define SQRT_2_OVER_PI 0.7978845608028654
#define TANH_C 0.044715
#define SIGMOID_C 1.702

enum { GELU, GELU_TANH, GELU_SIGMOID, GELU_GRAD, GELU_TANH_GRAD, GELU_SIGMOID_GRAD };

/* NumPy's maximum: NaN if either is NaN */
static double nan_max(double a, double b) { return (a != a || b != b) ? NAN : (a > b ? a : b); }

/* reference value and the magnitude its ULP is counted in (see ref64's docstring) */
static void ref64(int f, double x, double* value, double* scale) {
    if (f == GELU || f == GELU_GRAD) {
        double cdf = 0.5 * erfc(-x * SQRT1_2);
        if (f == GELU) {
            double y = (isinf(x) && x < 0) ? -0.0 : x * cdf;
            *value = y;
            *scale = fabs(y);
            return;
        }
        double xpdf = isinf(x) ? 0.0 : x * INV_SQRT_2PI * exp(-0.5 * x * x);
        *value = cdf + xpdf;
        *scale = nan_max(fabs(cdf), fabs(xpdf));
        return;
    }
    int tanh_form = (f == GELU_TANH || f == GELU_TANH_GRAD);
    double w = tanh_form ? 2.0 * SQRT_2_OVER_PI * (x + TANH_C * x * x * x) : SIGMOID_C * x;
    double dw = tanh_form ? 2.0 * SQRT_2_OVER_PI * (1.0 + 3.0 * TANH_C * x * x) : SIGMOID_C;
    if (x != x) w = NAN;
    double e = exp(-fabs(w)), big = 1.0 / (1.0 + e), small = e / (1.0 + e);
    double s = w >= 0 ? big : small, s_neg = w >= 0 ? small : big;
    if (f == GELU_TANH || f == GELU_SIGMOID) {
        double y = (isinf(x) && x < 0) ? -0.0 : x * s;
        *value = y;
        *scale = fabs(y);
        return;
    }
    double t = s * s_neg;
    double term = t == 0.0 ? 0.0 : x * dw * t;
    *value = s + term;
    *scale = nan_max(fabs(s), fabs(term));
}

/* ulp_error for one float32 result */
static double ulp32(float y32, double ref, double scale) {
    double y = y32;
    if (y == ref || (y != y && ref != ref)) return 0.0;
    float s = (float)fabs(scale);
    double spacing = isfinite(s) ? (double)nextafterf(s, INFINITY) - (double)s : NAN;
    if (!isfinite(spacing)) spacing = FLT_MAX;
    double err = fabs(y - ref) / spacing;
    return err != err ? INFINITY : err;
}

/* Judge n results y[i] = f(x[i]) (gradients with dy = 1). out: [max error, first index of the max,
 * count > 1 ULP, count > 2 ULP]. */
void sweep_chunk(int f, const float* x, const float* y, int64_t n, double* out) {
    double worst = -1.0;
    int64_t at = 0, over1 = 0, over2 = 0;
    for (int64_t i = 0; i < n; i++) {
        double value, scale;
        ref64(f, (double)x[i], &value, &scale);
        double e = ulp32(y[i], value, scale);
        if (e > worst) { worst = e; at = i; }
        over1 += e > 1.0;
        over2 += e > 2.0;
    }
    out[0] = worst;
    out[1] = (double)at;
    out[2] = (double)over1;
    out[3] = (double)over2;
}

/* the reference alone (for the cross-check against _reference.py) */
void ref_values(int f, const double* x, int64_t n, double* value, double* scale) {
    for (int64_t i = 0; i < n; i++) ref64(f, x[i], &value[i], &scale[i]);
}

/* The gated functions: y = f(x) * a * b (b may be NULL), judged against ref64(f, x) * (a * b) -- a * b is
 * exact in double for float factors. Each of the n values x[i] meets each of the k factors (a[j], b[j]):
 * y[i * k + j]; the reference is computed once per x. A reference f that underflowed to 0 from a finite
 * nonzero x stands for a tiny number of sign -1 (GELU and GELU' in the far negative tail), so an infinite
 * factor gives -(a b) there; an exact product beyond float32's range rounds to +-inf. gelu_mul: f = GELU*,
 * a = up; gelu_mul_grad's dgate: f = GELU*_GRAD, a = dy, b = up; its dup: f = GELU*, a = dy. out as for
 * sweep_chunk, its index into y. */
void sweep_product(int f, const float* x, const float* a, const float* b, int64_t k, const float* y, int64_t n,
                   double* out) {
    double worst = -1.0;
    int64_t at = 0, over1 = 0, over2 = 0;
    for (int64_t i = 0; i < n; i++) {
        double ref, refscale, xi = (double)x[i];
        ref64(f, xi, &ref, &refscale);
        for (int64_t j = 0; j < k; j++) {
            double w = (double)a[j] * (b ? (double)b[j] : 1.0);
            double value = (ref == 0.0 && xi != 0.0 && isfinite(xi) && isinf(w)) ? -w : ref * w;
            double scale = refscale * fabs(w);
            if (isfinite(value) && isinf((float)value)) value = (float)value;
            double e = ulp32(y[i * k + j], value, scale);
            if (e > worst) { worst = e; at = i * k + j; }
            over1 += e > 1.0;
            over2 += e > 2.0;
        }
    }
    out[0] = worst;
    out[1] = (double)at;
    out[2] = (double)over1;
    out[3] = (double)over2;
}
