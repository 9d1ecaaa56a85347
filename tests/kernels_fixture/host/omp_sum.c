/* On all cores with OpenMP (compiled with -fopenmp): a parallel sum. */
#include <omp.h>
#include <stdint.h>

/* The sum of x[0..n) over n_threads threads (0: the default, one per available core);
   *threads_used receives the size of the team that ran it. */
double sum_parallel(const double *x, int64_t n, int n_threads, int32_t *threads_used)
{
    double total = 0.0;
    int team = n_threads > 0 ? n_threads : omp_get_max_threads();
#pragma omp parallel num_threads(team) reduction(+ : total)
    {
#pragma omp single
        *threads_used = omp_get_num_threads();
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; ++i)
            total += x[i];
    }
    return total;
}
