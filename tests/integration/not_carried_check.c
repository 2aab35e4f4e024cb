/* Guards the generated stubs of entry points Tandem does not carry
 * (guest-lib/gen_unsupported.sh, guest-lib/out_of_reach.tsv): calling one
 * returns cudaErrorNotSupported, leaves it as the last error, and logs one
 * line that names the entry point and the reason the table gives.  Needs no
 * server: a stub sends nothing.  Exit 0 when all holds. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The real prototype (cuda_gl_interop.h needs the GL headers). */
cudaError_t cudaGLGetDevices(unsigned int *count, int *devices, unsigned int n, int which);

int main(void)
{
    char log[4096] = "";
    unsigned int count = 7;
    int devices[1] = { -1 };
    FILE *tmp = tmpfile();
    int saved = dup(2), failed = 0;
    cudaError_t e, last;
    size_t n;

    if (!tmp || saved < 0 || dup2(fileno(tmp), 2) < 0) {
        perror("not-carried-check: redirecting stderr");
        return 2;
    }
    e = cudaGLGetDevices(&count, devices, 1, 1);
    last = cudaGetLastError();
    fflush(stderr);
    dup2(saved, 2);
    rewind(tmp);
    n = fread(log, 1, sizeof(log) - 1, tmp);
    log[n] = '\0';
    if (e != cudaErrorNotSupported || last != cudaErrorNotSupported) {
        fprintf(stderr, "cudaGLGetDevices returned %d, last error %d (want %d both)\n", e, last,
                cudaErrorNotSupported);
        failed = 1;
    }
    if (!strstr(log, "cudaGLGetDevices is not available through Tandem: OpenGL interop")) {
        fprintf(stderr, "no line naming cudaGLGetDevices and its reason; the guest logged:\n%s", log);
        failed = 1;
    }
    if (count != 7 || devices[0] != -1) {
        fprintf(stderr, "the refusal wrote to the program's memory\n");
        failed = 1;
    }
    printf("%s\n", failed ? "not-carried-check: FAILED" : "not-carried-check: ok");
    return failed;
}
