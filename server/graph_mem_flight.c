/* Graph launches in flight and the memory beside them (graph_mem_flight.h). */
#include "graph_mem_flight.h"

static bool counts(const tdm_gmem_flight *f, uint64_t stream, uint64_t exec)
{
    return f->running && f->stream != stream && !(exec && f->exec == exec);
}

uint64_t tdm_gmem_flight_beside(const tdm_gmem_flight *v, size_t n, uint64_t stream, uint64_t exec)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < n; i++) {
        bool most = counts(&v[i], stream, exec);

        /* Each stream once, by the slot that holds the most (the first of
         * equals). */
        for (size_t j = 0; most && j < n; j++)
            if (j != i && counts(&v[j], stream, exec) && v[j].stream == v[i].stream &&
                (v[j].bytes > v[i].bytes || (v[j].bytes == v[i].bytes && j < i)))
                most = false;
        if (most)
            sum += v[i].bytes;
    }
    return sum;
}

int tdm_gmem_flight_enter(tdm_gmem_flight *v, size_t n, uint64_t stream, uint64_t exec, uint64_t bytes)
{
    int own = -1;

    for (size_t i = 0; i < n; i++)
        if (v[i].running && v[i].stream == stream && v[i].bytes <= bytes)
            v[i].running = false;
    for (size_t i = 0; i < n; i++)
        if (!v[i].running) {
            v[i] = (tdm_gmem_flight){ .stream = stream, .exec = exec, .bytes = bytes, .running = true };
            return (int)i;
        }
    for (size_t i = 0; i < n && own < 0; i++)
        if (v[i].stream == stream)
            own = (int)i;
    if (own >= 0 && v[own].exec != exec)
        v[own].exec = 0;
    return own;
}
