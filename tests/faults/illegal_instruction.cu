// SM exception: illegal instruction, CUDA_EXCEPTION_4 (Table 5: Driver API +
// patched cubin with an invalid opcode).  A small PTX kernel is compiled to
// a cubin in memory (cuLink*), the first instruction of its .text section is
// overwritten with all-ones bits (no valid SASS opcode), and the patched
// cubin is loaded and launched.  Through Tandem (no Driver API) the program
// launches the unpatched runtime kernel below instead: a real GPU runs it
// without a fault (exit status 3); the sim backend's twin of it models the
// patched kernel and raises cudaErrorIllegalInstruction.
#include <cstring>
#include <elf.h>

#include "fault_common.h"

__global__ void fault_illegal_instruction(unsigned *out)
{
    out[threadIdx.x] = 1u;
}

static const char ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry fault_illegal_instruction_ptx(.param .u64 out)\n{\n"
    "  .reg .b64 %rd<3>;\n  .reg .b32 %r<2>;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, 1;\n  st.global.u32 [%rd2], %r1;\n  ret;\n}\n";

typedef CUresult (*link_create_fn)(unsigned, CUjit_option *, void **, CUlinkState *);
typedef CUresult (*link_add_fn)(CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned, CUjit_option *, void **);
typedef CUresult (*link_complete_fn)(CUlinkState, void **, size_t *);
typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*get_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);

// Overwrites the first instruction (16 bytes on sm_70 and later) of the
// kernel's .text section.  False if the section is not found.
static bool patch_first_instruction(unsigned char *img, size_t len, const char *section)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
        return false;
    Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
    const char *names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (strcmp(names + sh[i].sh_name, section) == 0 && sh[i].sh_size >= 16 && sh[i].sh_offset + 16 <= len) {
            memset(img + sh[i].sh_offset, 0xff, 16);
            return true;
        }
    return false;
}

int main()
{
    const char *name = "illegal_instruction";
    unsigned *out;

    fault_begin(name, "SM exception: illegal instruction (patched cubin, invalid opcode)");
    fault_setup_check(name, "cudaMalloc", cudaMalloc(&out, 32 * sizeof(unsigned)));
    link_create_fn lcreate = (link_create_fn)fault_driver_fn("cuLinkCreate");
    link_add_fn ladd = (link_add_fn)fault_driver_fn("cuLinkAddData");
    link_complete_fn lcomplete = (link_complete_fn)fault_driver_fn("cuLinkComplete");
    load_fn load = (load_fn)fault_driver_fn("cuModuleLoadData");
    get_fn get = (get_fn)fault_driver_fn("cuModuleGetFunction");
    launch_fn launch = (launch_fn)fault_driver_fn("cuLaunchKernel");
    if (!lcreate || !ladd || !lcomplete || !load || !get || !launch) {
        printf("%s: the Driver API (cuLink*, cuModuleLoadData) is not available from this runtime; "
               "launching the unpatched kernel\n", name);
        fault_illegal_instruction<<<1, 32>>>(out);
        fault_finish(name, FAULT_STATUS_ILLEGAL_INSTRUCTION, false, cudaGetLastError());
    }
    CUlinkState ls;
    void *cubin;
    size_t cubin_len;
    if (lcreate(0, nullptr, nullptr, &ls) != CUDA_SUCCESS ||
        ladd(ls, CU_JIT_INPUT_PTX, (void *)ptx, sizeof(ptx), "fault.ptx", 0, nullptr, nullptr) != CUDA_SUCCESS ||
        lcomplete(ls, &cubin, &cubin_len) != CUDA_SUCCESS) {
        printf("%s: setup failed: compiling the PTX kernel\n", name);
        return FAULT_EXIT_FAILED;
    }
    unsigned char *img = (unsigned char *)malloc(cubin_len);
    memcpy(img, cubin, cubin_len);
    if (!patch_first_instruction(img, cubin_len, ".text.fault_illegal_instruction_ptx")) {
        printf("%s: setup failed: no .text section for the kernel in the cubin\n", name);
        return FAULT_EXIT_FAILED;
    }
    CUmodule mod;
    CUfunction fn;
    if (load(&mod, img) != CUDA_SUCCESS || get(&fn, mod, "fault_illegal_instruction_ptx") != CUDA_SUCCESS) {
        printf("%s: setup failed: loading the patched cubin\n", name);
        return FAULT_EXIT_FAILED;
    }
    void *args[] = { &out };
    CUresult r = launch(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
    printf("%s: cuLaunchKernel of the patched kernel: CUresult %d\n", name, (int)r);
    fault_finish(name, FAULT_STATUS_ILLEGAL_INSTRUCTION, true, cudaSuccess);
}
