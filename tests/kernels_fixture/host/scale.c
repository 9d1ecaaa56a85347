/* Scalar host code with a header and libm: y = SCALE_FACTOR * sqrt(x), and a sum. */
#include <math.h>
#include <stdint.h>

#include "scale.h"

void scale_sqrt(const double *x, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        y[i] = scaled(sqrt(x[i]));
}

double sum(const double *x, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i)
        s += x[i];
    return s;
}
